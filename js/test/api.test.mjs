// The package's API on the bundled skills (skills/): answers, errors, a throwing read, a trap,
// BigInt-free results, and the editor entry points.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadEngine, fromDirectory, fromFiles, EngineError } from '../src/node.js';

const skills = fileURLToPath(new URL('../../skills', import.meta.url));

/** Whether `v` holds a BigInt anywhere. */
function hasBigInt(v) {
  if (typeof v === 'bigint') return true;
  if (Array.isArray(v)) return v.some(hasBigInt);
  if (v && typeof v === 'object' && !(v instanceof Uint8Array)) return Object.values(v).some(hasBigInt);
  return false;
}

test('the bundled skills: search, route, resolve, list, lint, all plain JSON', async () => {
  const engine = await loadEngine();
  const root = await fromDirectory(skills, { engine });
  const index = engine.buildIndex([root]);
  assert.ok(index.size >= 10, `${index.size} skills`);
  const hits = index.search('react login form', 3);
  assert.equal(hits[0].skillPath, 'ui/react/auth');
  assert.equal(typeof hits[0].score, 'number');
  const routed = index.route('react login form');
  assert.ok(['matched', 'ambiguous'].includes(routed.outcome), JSON.stringify(routed));
  assert.equal(index.route('what is the weather in paris').outcome, 'no-match');
  const resolved = index.resolve('ui/react/auth');
  assert.match(resolved.content, /=== UI > REACT > AUTH/);
  const every = [engine.walkPolicy(), index.list(), index.skills(), index.lint(),
    resolved, index.manifest(index.skills()[0].skillPath)];
  for (const v of every) {
    assert.ok(!hasBigInt(v), 'no BigInt');
    JSON.stringify(v); // throws on a BigInt
  }
  assert.equal(typeof engine.walkPolicy().maxSkillFileBytes, 'number');
  assert.ok(index.lint().length >= index.size);
});

test('engine errors are EngineError with the kind and the message', async () => {
  const engine = await loadEngine();
  const index = engine.buildIndex([await fromDirectory(skills, { engine })]);
  assert.throws(() => index.get('no/such/skill'), (e) => e instanceof EngineError && e.kind === 'not-found' && /no\/such\/skill/.test(e.message));
  assert.throws(() => index.locateAsset('ui/react/auth', '../../etc/passwd'), (e) => e instanceof EngineError && e.kind === 'invalid-path');
  assert.throws(() => index.search('   '), (e) => e instanceof EngineError && e.kind === 'invalid-argument' && e.message.includes('empty'));
  assert.throws(() => engine.validateRelativePath('/abs'), (e) => e.kind === 'invalid-path');
  // the instance keeps serving
  assert.equal(index.search('react login form', 1)[0].skillPath, 'ui/react/auth');
  assert.equal(engine.restarts, 0);
});

test('a read that throws costs only the call that needed the file', async () => {
  const engine = await loadEngine();
  const root = await fromDirectory(skills, { engine });
  let failing = null;
  const flaky = { ...root, read: (path) => { if (path === failing) throw new Error(`disk error on ${path}`); return root.read(path); } };
  const index = engine.buildIndex([flaky]);
  const file = index.get('ui/react/auth').file;
  failing = file;
  assert.throws(() => index.resolve('ui/react/auth'), (e) => e instanceof EngineError && e.kind === 'read-failed' && e.message.includes('disk error'));
  // the same instance goes on
  assert.equal(index.search('react login form', 1)[0].skillPath, 'ui/react/auth');
  failing = null;
  assert.match(index.resolve('ui/react/auth').content, /AUTH/);
  assert.equal(engine.restarts, 0, 'no restart was needed');
  // a file that cannot be read while building is left out and reported by the engine
  failing = file;
  const partial = engine.buildIndex([flaky]);
  assert.deepEqual(partial.readErrors.map((e) => e.path), [file]);
  assert.throws(() => partial.get('ui/react/auth'), (e) => e.kind === 'not-found');
  assert.ok(partial.diagnostics().some((d) => d.path === file && /never supplied/.test(d.message)));
});

test('after a trap the engine restarts on a fresh instance and the index is rebuilt', async () => {
  const restarts = [];
  let poison = false;
  // A `files.read` import that throws a JS Error unwinds through the engine and leaves it
  // inconsistent (the next call would panic: issue 14). The package's own import never throws;
  // this test reaches past it on purpose.
  const wrapFiles = (read) => (root, path) => {
    if (poison) {
      poison = false;
      throw new Error('unwinding through the engine');
    }
    return read(root, path);
  };
  const engine = await loadEngine({ wrapFiles, onRestart: (e) => restarts.push(e), onStderr: () => {} });
  const index = engine.buildIndex([await fromDirectory(skills, { engine })]);
  poison = true;
  assert.throws(() => index.resolve('ui/react/auth'), (e) => e instanceof EngineError && e.kind === 'trap' && /fresh instance/.test(e.message));
  assert.equal(engine.restarts, 1);
  assert.equal(restarts.length, 1);
  // the next calls run on a fresh instance, the index rebuilt from its roots
  assert.equal(index.search('react login form', 1)[0].skillPath, 'ui/react/auth');
  assert.match(index.resolve('ui/react/auth').content, /AUTH/);
  assert.equal(engine.checkSkill('a/SKILL.md', '---\ndescription: x\n---\n').worst, 'warning');
  assert.equal(engine.restarts, 1);
});

test('checkSkill: a broken field gives a located diagnostic; fixed, it goes', async () => {
  const engine = await loadEngine();
  const broken = engine.checkSkill('tools/pdf/SKILL.md', '---\nname: pdf\ndescription: [a, b]\n---\n# PDF\n');
  assert.equal(broken.worst, 'error');
  assert.equal(broken.skill, undefined);
  const d = broken.diagnostics.find((x) => x.message.includes('description'));
  assert.equal(d.line, 3);
  const fixed = engine.checkSkill('tools/pdf/SKILL.md', '---\nname: pdf\ndescription: Fill PDF forms\n---\n# PDF\n');
  assert.equal(fixed.worst, undefined);
  assert.equal(fixed.diagnostics.length, 0);
  assert.equal(fixed.servedName, 'pdf');
  assert.equal(fixed.servedDescription, 'Fill PDF forms');
  assert.deepEqual(JSON.parse(fixed.frontmatterJson), { name: 'pdf', description: 'Fill PDF forms' });
  assert.throws(() => engine.checkSkill('../x.md', ''), (e) => e.kind === 'invalid-path');
});

test('scoreDraft: the draft ranks as in a rebuilt index', async () => {
  const engine = await loadEngine();
  const root = await fromDirectory(skills, { engine });
  const index = engine.buildIndex([root]);
  const draft = '---\nname: csv-cleaner\ndescription: Clean messy CSV spreadsheets and fix their delimiters\n---\n# CSV\n';
  const requests = ['clean a csv spreadsheet', 'react login form'];
  const r = index.scoreDraft('data/csv-cleaner/SKILL.md', draft, requests, 5);
  assert.equal(r.skillPath, 'data/csv-cleaner');
  assert.equal(r.replaces, false);
  const files = root.entries.filter((e) => e.kind === 'file').map((e) => ({ path: e.path, bytes: root.read(e.path) }));
  const rebuilt = engine.buildIndex([fromFiles('skills', [...files, { path: 'data/csv-cleaner/SKILL.md', text: draft }])]);
  for (const got of r.requests) {
    const hits = rebuilt.search(got.request, 100);
    const at = hits.findIndex((h) => h.skillPath === 'data/csv-cleaner');
    assert.equal(got.rank, at < 0 ? undefined : at + 1, got.request);
    if (at >= 0) assert.ok(Math.abs(got.score - hits[at].score) < 1e-9);
  }
  assert.equal(r.requests[0].rank, 1);
  assert.ok(r.requests[1].rank === undefined || r.requests[1].rank > 1);
  assert.ok(!hasBigInt(r));
});

test('audit: every skill with its competitors and findings, the same as the engine derives', async () => {
  const engine = await loadEngine();
  const same = 'Fill in PDF forms and flatten them for printing or archiving.';
  const files = [
    { path: 'pdf-forms/SKILL.md', text: `---\nname: pdf-forms\ndescription: ${same}\n---\n` },
    { path: 'forms-pdf/SKILL.md', text: `---\nname: forms-pdf\ndescription: ${same}\n---\n` },
    { path: 'git-bisect/SKILL.md', text: '---\nname: git-bisect\ndescription: Find a bad commit with git bisect.\n---\n' },
  ];
  const index = engine.buildIndex([fromFiles('skills', files)]);
  const report = index.audit();
  assert.equal(report.length, 3);
  const pdf = report.find((s) => s.skillPath === 'pdf-forms');
  assert.deepEqual(pdf.findings.map((f) => f.kind), ['duplicate']);
  assert.match(pdf.findings[0].message, /forms-pdf/);
  assert.equal(pdf.competitors[0].skillPath, 'forms-pdf');
  assert.equal(typeof pdf.competitors[0].strength, 'number');
  assert.ok(pdf.derived);
  assert.equal(pdf.requests, index.auditRequests('pdf-forms').length);
  // Worst first: the duplicates lead.
  assert.equal(report[2].skillPath, 'git-bisect');
  // Given requests replace the derived ones.
  const given = index.audit([{ skillPath: 'git-bisect', requests: ['fill a pdf form', 'find the bad commit'] }]);
  const git = given.find((s) => s.skillPath === 'git-bisect');
  assert.equal(git.derived, false);
  assert.equal(git.requests, 2);
  assert.equal(git.competitors[0].skillPath, 'forms-pdf');
  assert.ok(!hasBigInt(given));
});
