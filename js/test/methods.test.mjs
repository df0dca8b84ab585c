// Every method and property of the package's types (src/index.d.ts, src/node.d.ts), called
// through the package on the bundled skills (skills/), with an answer checked; the last test
// checks this file names each of them, so a method added to the types needs a test here.
// Also: the served name `checkSkill` gives is the one in the served `SKILL.md`, and a method
// whose engine export is missing is an error of its own kind, not a trap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  loadEngine, fromDirectory, fromFiles, EngineError, Engine, Index, IndexQueries, IndexView, DEFAULT_CONFIG, walkRoot,
} from '../src/node.js';

const skills = fileURLToPath(new URL('../../skills', import.meta.url));

let shared = null;
/** One engine and one index of the bundled skills for the read-only tests. */
async function bundled() {
  if (!shared) {
    const engine = await loadEngine();
    const root = await fromDirectory(skills, { engine });
    shared = { engine, root, index: engine.buildIndex([root]) };
  }
  return shared;
}

/** The frontmatter's `name` line of a served SKILL.md. */
function nameLine(text) {
  const m = /^---\n[\s\S]*?^name: *"?([^"\n]*)"?$/m.exec(text);
  return m ? m[1] : undefined;
}

test('Engine: loadEngine, DEFAULT_CONFIG, walkPolicy, validateRelativePath, restarts', async () => {
  const { engine } = await bundled();
  assert.ok(engine instanceof Engine);
  assert.deepEqual({ ...DEFAULT_CONFIG }, { algorithm: 'ranked', minScore: 0.2, ambiguityThreshold: 0.1, maxResults: 3 });
  assert.throws(() => { DEFAULT_CONFIG.maxResults = 9; });
  const policy = engine.walkPolicy();
  assert.ok(policy.skipDirNames.includes('.git'), JSON.stringify(policy));
  assert.ok(policy.maxDepth > 0 && policy.maxEntries > 0 && policy.maxSkillFileBytes > 0);
  assert.equal(engine.validateRelativePath('ui/react/auth.md'), 'ui/react/auth.md');
  assert.throws(() => engine.validateRelativePath('a/../../b'), (e) => e instanceof EngineError && e.kind === 'invalid-path');
  assert.equal(engine.restarts, 0);
});

test('Index: size, search, explain, route, get, suggest, skills, summaries', async () => {
  const { engine, index } = await bundled();
  assert.ok(index instanceof Index);
  const all = index.skills();
  assert.equal(index.size, all.length);
  assert.deepEqual(all.map((s) => s.skillPath), [...all.map((s) => s.skillPath)].sort());
  const hits = index.search('react login form', 3);
  assert.equal(hits[0].skillPath, 'ui/react/auth');
  assert.ok(hits.length <= 3);
  // explain accounts for the very score search gives
  const why = index.explain('react login form', 'ui/react/auth');
  assert.equal(why.skillPath, 'ui/react/auth');
  assert.ok(Math.abs(why.score - hits[0].score) < 1e-9, `${why.score} vs ${hits[0].score}`);
  assert.ok(why.terms.some((t) => t.term === 'react' && t.contribution > 0), JSON.stringify(why.terms));
  assert.equal(index.route('what is the weather in paris').outcome, 'no-match');
  const routed = index.route('react login form');
  const best = routed.outcome === 'matched' ? routed.hit : routed.candidates[0];
  assert.equal(best.skillPath, 'ui/react/auth');
  const auth = index.get('ui/react/auth');
  assert.equal(auth.shape, 'hierarchical');
  assert.equal(auth.file, 'ui/react/auth.md');
  assert.ok(auth.keywords.includes('login'));
  assert.equal(auth.parent, 'ui/react/_index');
  assert.equal(index.get('forms').skillPath, 'ui/react/forms', 'by its unique name');
  assert.equal(index.suggest('ui/react/auht', 2)[0], 'ui/react/auth');
  const page = index.summaries(1, 2);
  assert.deepEqual(page.map((s) => s.skillPath), all.slice(1, 3).map((s) => s.skillPath));
  assert.deepEqual(Object.keys(page[0]).sort(), ['description', 'name', 'skillPath']);
  assert.equal(engine.restarts, 0);
});

test('Index: resolve, list, locateAsset, manifest, lint, diagnostics', async () => {
  const { root, index } = await bundled();
  const resolved = index.resolve('ui/react/auth');
  assert.match(resolved.content, /=== UI > REACT > AUTH/);
  assert.ok(resolved.assets.some((a) => a.file === 'assets/AuthProvider.tsx.template'));
  assert.ok(resolved.scripts.some((s) => s.file === 'scripts/scaffold-auth.sh'));
  const tree = index.list();
  assert.ok(tree[0].children.length > 0);
  assert.ok(tree.some((n) => n.path === 'ui/react/auth' && n.skill?.skillPath === 'ui/react/auth'));
  const below = index.list('ui');
  assert.ok(below.every((n) => n.path === 'ui' || n.path.startsWith('ui/')), JSON.stringify(below.map((n) => n.path)));
  // the auth skill's own base overrides the React category's
  const located = index.locateAsset('ui/react/auth', 'assets/component-base.tsx.template');
  assert.equal(located.path, 'ui/react/auth/assets/component-base.tsx.template');
  const inherited = index.locateAsset('ui/react/auth', 'assets/design-tokens.json');
  assert.equal(inherited.path, 'ui/_index/assets/design-tokens.json');
  const files = index.manifest('ui/react/forms');
  assert.equal(files[0].relative, 'SKILL.md');
  const refs = files.find((f) => f.relative === 'references/validation-patterns.md');
  assert.equal(refs.size, root.read(refs.path).length);
  const reports = index.lint();
  assert.ok(reports.length >= index.size);
  assert.ok(reports.every((r) => typeof r.path === 'string' && Array.isArray(r.diagnostics)));
  const flat = reports.flatMap((r) => r.diagnostics);
  assert.deepEqual(index.diagnostics(), flat);
});

test('Index.skillMd: the served SKILL.md, named as skills/list names it', async () => {
  const { engine, root, index } = await bundled();
  // An Agent Skills folder: its own file with the served name.
  const forms = index.skillMd('ui/react/forms');
  assert.equal(nameLine(forms), 'forms');
  assert.match(forms, /^---\n/);
  // A hierarchical skill: generated, with the resolved content as body.
  const auth = index.skillMd('ui/react/auth');
  assert.equal(nameLine(auth), 'auth');
  assert.match(auth, /=== UI > REACT > AUTH/);
  // Category nodes are served under their folder.
  assert.equal(nameLine(index.skillMd('api/_index')), 'api');
  assert.equal(nameLine(index.skillMd('_root')), 'root');
  assert.throws(() => index.skillMd('no/such'), (e) => e instanceof EngineError && e.kind === 'not-found');
  // For every bundled skill, the editor's served name (checkSkill, alone and against the
  // collection) is the served SKILL.md's, and its URI the one skills/list gives.
  for (const s of index.skills()) {
    const check = engine.checkSkill(s.file, root.read(s.file));
    assert.equal(check.skill?.skillPath, s.skillPath, s.file);
    assert.equal(check.servedName, nameLine(index.skillMd(s.skillPath)), s.file);
    const inCollection = index.checkSkill(s.file, root.read(s.file));
    assert.equal(inCollection.servedName, check.servedName, s.file);
    assert.equal(inCollection.extPath, check.extPath, s.file);
    assert.ok(inCollection.extPath.endsWith(check.servedName), s.file);
    assert.equal(inCollection.leftOut, undefined, s.file);
  }
  assert.equal(engine.restarts, 0, 'no call was taken for a trap');
});

test('Engine.checkSkill and Index.scoreDraft, buildIndex with a config, fromFiles, readErrors', async () => {
  const { engine } = await bundled();
  const check = engine.checkSkill('api/_index.md', '---\ndescription: API rules\n---\nRules.\n');
  assert.equal(check.skill.skillPath, 'api/_index');
  assert.equal(check.servedName, 'api');
  assert.equal(check.servedDescription, 'API rules');
  const files = [
    { path: 'tools/pdf/SKILL.md', text: '---\nname: pdf\ndescription: Fill PDF forms and extract tables\n---\n# PDF\n' },
    { path: 'data/csv/SKILL.md', text: '---\nname: csv\ndescription: Clean CSV spreadsheets\n---\n# CSV\n' },
    { path: 'broken/SKILL.md', bytes: new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a]) },
  ];
  const root = fromFiles('mem', files);
  assert.deepEqual(root.entries.map((e) => e.path), files.map((f) => f.path));
  assert.equal(root.entries[0].size, new TextEncoder().encode(files[0].text).length);
  const keywords = engine.buildIndex([root], { algorithm: 'keywords' });
  assert.equal(keywords.size, 2);
  assert.equal(keywords.search('pdf', 5)[0].skillPath, 'tools/pdf');
  assert.throws(() => keywords.scoreDraft('x/SKILL.md', files[0].text, ['pdf']), (e) => e.kind === 'invalid-argument');
  const ranked = engine.buildIndex([root]);
  // Against the collection: a folder name mapping to a URI another skill holds is left out,
  // the holder named; alone the engine cannot know; a data file over 16 MiB is over a limit.
  const other = '---\nname: pdf\ndescription: Another PDF skill\n---\n';
  assert.equal(engine.checkSkill('tools/PDF/SKILL.md', other).extPath, 'tools/pdf');
  const held = ranked.checkSkill('tools/PDF/SKILL.md', other);
  assert.equal(held.extPath, undefined);
  assert.equal(held.servedName, undefined);
  assert.equal(held.leftOut, '`skill://tools/pdf/SKILL.md` is the skill `tools/pdf`');
  assert.ok(held.diagnostics.some((d) => d.severity === 'warning' && d.message.includes('left out of the Skills extension')));
  const big = ranked.checkSkill('tools/pdf/SKILL.md', files[0].text, { listing: [{ path: 'tools/pdf/data.bin', size: 17 * 1024 * 1024 }] });
  assert.match(big.leftOut, /^its files total \d+ bytes, over the limit of 16777216 \(16 MiB\)$/);
  const draft = ranked.scoreDraft('tools/pdf2/SKILL.md', '---\nname: pdf2\ndescription: Fill PDF forms fast\n---\n', ['fill pdf forms'], 5);
  assert.equal(draft.skillPath, 'tools/pdf2');
  assert.equal(draft.requests[0].rank, 2);
  assert.equal(draft.requests[0].above[0].skillPath, 'tools/pdf');
  // a read that fails while building: left out, listed in readErrors
  const flaky = { ...root, read: (p) => { if (p === 'data/csv/SKILL.md') throw new Error('gone'); return root.read(p); } };
  const partial = engine.buildIndex([flaky]);
  assert.deepEqual(partial.readErrors, [{ root: 0, path: 'data/csv/SKILL.md', error: 'gone' }]);
  assert.equal(partial.size, 1);
});

test('a method whose engine export is missing is `missing-export`, not a trap', async () => {
  const restarts = [];
  const hidden = new Set(['extensionSkillMd', 'checkSkill']);
  // Each instance's exports with two of them hidden: the engine-level `checkSkill`, and the
  // index resource's `extensionSkillMd` (behind Index.skillMd).
  const wrapExports = (x) => {
    const Index = new Proxy(x.Index, {
      construct(target, args) {
        const handle = Reflect.construct(target, args);
        for (const name of hidden) Object.defineProperty(handle, name, { value: undefined });
        return handle;
      },
    });
    const out = { ...x, Index };
    for (const name of hidden) delete out[name];
    return out;
  };
  const engine = await loadEngine({ wrapExports, onRestart: (e) => restarts.push(e) });
  const index = engine.buildIndex([await fromDirectory(skills, { engine })]);
  const missing = (name) => (e) => e instanceof EngineError && e.kind === 'missing-export'
    && e.message.includes(`\`${name}\``) && /npm run build/.test(e.message);
  assert.throws(() => index.skillMd('ui/react/forms'), missing('extensionSkillMd'));
  assert.throws(() => engine.checkSkill('a/SKILL.md', '---\nname: a\ndescription: x\n---\n'), missing('checkSkill'));
  assert.equal(engine.restarts, 0);
  assert.deepEqual(restarts, []);
  // the instance and the index go on
  assert.equal(index.search('react login form', 1)[0].skillPath, 'ui/react/auth');
  assert.equal(engine.restarts, 0);
});

test('Engine.walkFolder and walkRoot: one folder by the engine, a whole root over a lister', async () => {
  const { engine } = await bundled();
  const policy = engine.walkPolicy();
  // One folder: sorted, the skipped folder name left out, a FIFO reported and never listed.
  const step = engine.walkFolder(0, '', 0, 0, [
    { name: 'b.md', kind: 'file', size: 10 },
    { name: 'a', kind: 'directory' },
    { name: policy.skipDirNames[0], kind: 'directory' },
    { name: 'pipe', kind: { special: 'fifo' } },
  ]);
  assert.deepEqual(step.entries, [
    { path: 'a', kind: 'directory', size: 0 },
    { path: 'b.md', kind: 'file', size: 10 },
  ]);
  assert.deepEqual(step.enter, ['a']);
  assert.deepEqual(step.findings.map((f) => [f.path, f.worst]), [['pipe', 'warning']]);
  assert.equal(step.stop, false);
  assert.equal(step.tooDeep, false);
  // A whole root through an in-memory lister: folders entered in the engine's order.
  const tree = {
    '': [{ name: 'top.md', kind: 'file', size: 3 }, { name: 'a', kind: 'directory' }],
    a: [{ name: 'SKILL.md', kind: 'file', size: 5 }],
  };
  const walk = await walkRoot(engine, (path) => tree[path]);
  assert.deepEqual(walk.entries.map((e) => e.path), ['a', 'top.md', 'a/SKILL.md']);
  assert.deepEqual(walk.findings, []);
  assert.equal(walk.truncated, false);
  assert.equal(walk.tooDeep, false);
});

test('Index: setAccess, view, hidden; an IndexView answers among the visible skills', async () => {
  const { engine } = await bundled();
  const hier = (d, k, body) => `---\ndescription: ${d}\nkeywords: [${k}]\n---\n${body}\n`;
  const main = fromFiles('main', [
    { path: 'ui/forms.md', text: hier('Build accessible forms', 'forms', 'Forms') },
    { path: 'finance/_index.md', text: hier('Finance zanzibar rules', 'finance', 'FINANCE-PARENT') },
    { path: 'finance/ledger.md', text: hier('Reconcile the zanzibar ledger', 'ledger, reconcile', 'Ledger') },
  ]);
  const hr = fromFiles('hr-handbook', [
    { path: 'leave/SKILL.md', text: '---\nname: leave\ndescription: Request quokka leave\n---\nLeave\n' },
  ]);
  const index = engine.buildIndex([main, hr]);
  // Errors: not applied (and keyed like the configuration).
  const bad = index.setAccess([{ skills: ['a//b'], roots: ['nope'], groups: ['x'] }]);
  assert.deepEqual(bad.map((f) => [f.key, f.severity]), [
    ['access.rules[0].skills[0]', 'error'], ['access.rules[0].roots[0]', 'error'],
  ]);
  assert.equal(index.view({}).size, 4, 'no rules applied: everyone sees everything');
  assert.deepEqual(index.setAccess([
    { skills: ['finance/**'], groups: ['finance'] },
    { roots: ['hr-handbook'], subjects: ['alice'] },
  ]), []);
  const finance = index.view({ subject: 'bob', groups: ['finance'] });
  const alice = index.view({ subject: 'alice' });
  assert.ok(finance instanceof IndexView && finance instanceof IndexQueries && index instanceof IndexQueries);
  assert.deepEqual(finance.skills().map((s) => s.skillPath), ['finance/_index', 'finance/ledger', 'ui/forms']);
  assert.deepEqual(alice.summaries().map((s) => s.skillPath), ['leave', 'ui/forms']);
  assert.equal(index.view('unrestricted').size, 4);
  assert.equal(alice.size, 2);
  assert.equal(finance.search('reconcile ledger', 5)[0].skillPath, 'finance/ledger');
  assert.deepEqual(alice.search('zanzibar ledger', 5), []);
  assert.equal(alice.route('reconcile the zanzibar ledger').outcome, 'no-match');
  assert.equal(finance.route('reconcile the zanzibar ledger').hit.skillPath, 'finance/ledger');
  assert.equal(alice.get('leave').skillPath, 'leave');
  assert.throws(() => finance.get('leave'), (e) => e instanceof EngineError && e.kind === 'not-found');
  assert.ok(alice.suggest('finance/ledgr', 5).every((p) => !p.startsWith('finance')));
  assert.ok(finance.resolve('finance/ledger').content.includes('FINANCE-PARENT'));
  assert.throws(() => alice.resolve('finance/ledger'), (e) => e.kind === 'not-found');
  assert.ok(alice.list().every((n) => !n.path.startsWith('finance')));
  assert.throws(() => alice.locateAsset('finance/ledger', 'x.csv'), (e) => e.kind === 'not-found');
  assert.equal(alice.manifest('leave')[0].relative, 'SKILL.md');
  assert.match(alice.skillMd('leave'), /quokka/);
  assert.ok(finance.explain('ledger', 'finance/ledger').score > 0);
  assert.ok(alice.lint().every((r) => !r.path.startsWith('finance')));
  assert.ok(alice.diagnostics().every((d) => !d.path.startsWith('finance')));
  const draft = alice.scoreDraft('ui/draft.md', hier('Draft ledger', 'ledger', 'x'), ['ledger'], 5);
  assert.ok(draft.requests[0].above.every((r) => !r.skillPath.startsWith('finance')));
  assert.deepEqual(index.hidden({ subject: 'alice' }), [
    { path: 'finance/_index', rules: [0] }, { path: 'finance/ledger', rules: [0] },
  ]);
  assert.deepEqual(index.hidden('unrestricted'), []);
});

test('trigger evals: parseEvalQueries, evalFile, evalFiles, evaluate, evaluateDraft', async () => {
  const { engine, root, index } = await bundled();
  const files = index.evalFiles();
  assert.ok(files.some((f) => f.skillPath === 'ui/react/forms'), JSON.stringify(files));
  const file = index.evalFile('ui/react/forms');
  assert.equal(file.path, 'ui/react/forms/evals/eval_queries.json');
  assert.equal(file.exists, true);
  const { queries, problems } = engine.parseEvalQueries(root.read(file.path));
  assert.deepEqual(problems, []);
  const e = index.evaluate('ui/react/forms', queries);
  assert.equal(e.total, queries.length);
  assert.equal(e.passed, e.total);
  // The skill file as it is, as a draft: the same answer; a draft about something else: its
  // positives fail.
  const draft = index.evaluateDraft('ui/react/forms/SKILL.md', root.read('ui/react/forms/SKILL.md'), queries);
  assert.deepEqual(draft, e);
  const other = index.evaluateDraft('ui/react/forms/SKILL.md', '---\nname: forms\ndescription: Bake sourdough bread at home\n---\nBread.\n', queries);
  assert.ok(other.passed < e.passed, JSON.stringify(other.queries.filter((q) => !q.passed)));
});

test('audit: audit, auditRequests, auditOne (a skill\'s own requests, or the ones given)', async () => {
  const { index } = await bundled();
  const report = index.audit();
  const paths = report.map((s) => s.skillPath);
  assert.ok(paths.includes('ui/react/forms'), JSON.stringify(paths));
  assert.equal(new Set(paths).size, paths.length);
  const own = index.auditRequests('ui/react/forms');
  assert.ok(own.length > 0);
  const forms = report.find((s) => s.skillPath === 'ui/react/forms');
  assert.equal(forms.derived, true);
  assert.equal(forms.requests, own.length);
  for (const c of forms.competitors) {
    // 0: wins or ties none of its requests, but comes closest.
    assert.ok(c.strength >= 0 && c.strength <= 1, JSON.stringify(c));
    assert.notEqual(c.skillPath, 'ui/react/forms');
  }
  // One skill's audit: its entry of the collection's (it has no `hijacker` finding).
  const one = index.auditOne('ui/react/forms');
  assert.deepEqual(one, { ...forms, findings: forms.findings.filter((f) => f.kind !== 'hijacker') });
  const given = index.audit([{ skillPath: 'ui/react/forms', requests: ['write a commit message'] }]);
  const g = given.find((s) => s.skillPath === 'ui/react/forms');
  assert.equal(g.derived, false);
  assert.equal(g.requests, 1);
  // (rivals as close that win or tie as many requests go by their reach in the collection's
  // audit, by summed score in one skill's, which knows no reach: the same rivals here)
  const bySkill = (a) => ({
    ...a, competitors: [...a.competitors].sort((x, y) => x.skillPath.localeCompare(y.skillPath)),
  });
  assert.deepEqual(bySkill(index.auditOne('ui/react/forms', ['write a commit message'])), bySkill(g));
});

test('every method and property of the package types is called in this file', () => {
  const mine = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  const names = new Set();
  for (const file of ['index.d.ts', 'node.d.ts']) {
    const dts = readFileSync(fileURLToPath(new URL(`../src/${file}`, import.meta.url)), 'utf8');
    for (const m of dts.matchAll(/^export declare (?:function|const) (\w+)/gm)) names.add(m[1]);
    for (const cls of dts.matchAll(/^export declare class (\w+)[^{]*\{([\s\S]*?)^\}/gm)) {
      names.add(cls[1]);
      for (const m of cls[2].matchAll(/^ {2}(?:readonly )?(\w+)[(:?]/gm)) names.add(m[1]);
    }
  }
  assert.ok(names.size >= 25, [...names].join(', '));
  for (const must of ['skillMd', 'scoreDraft', 'checkSkill', 'fromDirectory', 'restarts', 'readErrors']) {
    assert.ok(names.has(must), `${must} not found in the types: the parser above missed it`);
  }
  // The tests above, their comments and the imports left out: a name counts when code uses it.
  const body = mine.slice(mine.indexOf('\nlet shared'), mine.indexOf("test('every method"))
    .split('\n').filter((l) => !l.trim().startsWith('//')).join('\n');
  // EngineError.detail is set for `too-large` only, which only a native host's reads give.
  names.delete('detail');
  const untested = [...names].filter((n) => !new RegExp(`\\b${n}\\b`).test(body));
  assert.deepEqual(untested, [], `no test calls: ${untested.join(', ')}`);
});
