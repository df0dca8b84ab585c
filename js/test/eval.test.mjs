// Trigger evals through the package: the bundled skills' eval files found where the engine
// says, parsed, run with `Index.evaluate`, and equal to the native `skills-mcp eval --json`
// (skipped, with a note, when the release binary is absent); located problems; a view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadEngine, fromDirectory, fromFiles, EngineError } from '../src/node.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const skills = `${repo}/skills`;
const cli = process.env.SKILLS_MCP_BIN ?? `${repo}/target/release/skills-mcp`;

/** Every bundled eval file run through the package, in `skills-mcp eval --json`'s shape. */
async function bundledEvals(options = {}) {
  const engine = await loadEngine();
  const root = await fromDirectory(skills, { engine });
  const index = engine.buildIndex([root]);
  const files = index.evalFiles();
  const out = [];
  for (const f of files) {
    assert.equal(f.exists, true);
    const { queries, problems } = engine.parseEvalQueries(root.read(f.path));
    assert.deepEqual(problems, [], f.path);
    const e = index.evaluate(f.skillPath, queries, options);
    out.push({
      skill: e.skillPath,
      passed: e.passed,
      total: e.total,
      train: e.train,
      validation: e.validation,
      queries: e.queries.map((q) => {
        const shown = {
          query: q.query, should_trigger: q.shouldTrigger, split: q.split, outcome: q.outcome,
          winner: q.winner, rank: q.rank, passed: q.passed,
        };
        if (q.outcome === 'ambiguous') shown.candidates = q.candidates;
        return shown;
      }),
    });
  }
  return { engine, index, files, out };
}

test('the bundled eval files: found, parsed and run, all passing', async () => {
  const { index, files, out } = await bundledEvals();
  assert.deepEqual(files.map((f) => f.path), [
    'api/auth/evals/eval_queries.json',
    'git/commit-messages/evals/eval_queries.json',
    'ui/react/forms/evals/eval_queries.json',
  ]);
  for (const s of out) {
    assert.equal(s.passed, s.total, JSON.stringify(s.queries.filter((q) => !q.passed)));
    assert.ok(s.total >= 18, `${s.skill}: ${s.total} queries`);
    assert.equal(s.train.total + s.validation.total, s.total);
    // the same share of positives on both sides: round(0.6 n) of each class is train
    const positives = s.queries.filter((q) => q.should_trigger);
    const trainPositives = positives.filter((q) => q.split === 'train').length;
    assert.equal(trainPositives, Math.round(0.6 * positives.length));
  }
  // The eval file's place for a skill without one, for an editor to create it.
  assert.deepEqual(index.evalFile('ui/react/auth'), {
    skillPath: 'ui/react/auth', root: 0, path: 'ui/react/auth/evals/eval_queries.json', exists: false,
  });
  assert.throws(() => index.evalFile('no/such'), (e) => e instanceof EngineError && e.kind === 'not-found');
});

test('Index.evaluate equals the native skills-mcp eval --json', { skip: existsSync(cli) ? false : `absent: ${cli}` }, async () => {
  for (const flags of [[], ['--accept-ambiguous']]) {
    const native = JSON.parse(execFileSync(cli, ['--no-default-roots', '--root', skills, 'eval', '--json', ...flags], {
      env: { ...process.env, SKILLS_MCP_INDEX_CACHE: 'off' },
    }).toString());
    const { out } = await bundledEvals({ acceptAmbiguous: flags.length > 0 });
    assert.deepEqual(out, native.skills);
  }
});

test('problems are located, the engine keeps serving, ambiguity passes only when accepted', async () => {
  const engine = await loadEngine();
  const bad = engine.parseEvalQueries('[{"query": "a", "should_trigger": true}, {"query": ""}, 7]');
  assert.deepEqual(bad.queries, []);
  assert.deepEqual(bad.problems.map((p) => [p.entry, p.message]), [
    [1, '`query`: the query is empty'],
    [1, '`should_trigger` is missing (true or false)'],
    [2, 'a number, not an object {"query": ..., "should_trigger": ...}'],
  ]);
  const syntax = engine.parseEvalQueries('[\n  {"query": "a",,}\n]');
  assert.equal(syntax.problems.length, 1);
  assert.equal(syntax.problems[0].line, 2);
  assert.equal(typeof syntax.problems[0].column, 'number');
  assert.equal(syntax.problems[0].entry, undefined);
  assert.equal(engine.restarts, 0);

  const index = engine.buildIndex([fromFiles('mem', [
    { path: 'alpha/SKILL.md', text: '---\nname: alpha\ndescription: Rotate log files nightly\n---\nLogs.\n' },
    { path: 'beta/SKILL.md', text: '---\nname: beta\ndescription: Rotate log files nightly\n---\nLogs.\n' },
    { path: 'alpha/evals/eval_queries.json', text: '[{"query": "rotate log files", "should_trigger": true}]' },
  ])]);
  assert.equal(index.evalFiles()[0].skillPath, 'alpha');
  const { queries } = engine.parseEvalQueries('[{"query": "rotate log files", "should_trigger": true}]');
  const strict = index.evaluate('alpha', queries);
  assert.equal(strict.queries[0].outcome, 'ambiguous');
  assert.deepEqual(strict.queries[0].candidates, ['alpha', 'beta']);
  assert.equal(strict.queries[0].winner, null);
  assert.equal(strict.queries[0].rank, 1);
  assert.equal(strict.passed, 0);
  assert.equal(index.evaluate('alpha', queries, { acceptAmbiguous: true }).passed, 1);

  // A view: a skill hidden from the caller is not found; the other one is evaluated among
  // what the caller sees (beta alone: matched).
  index.setAccess([{ skills: ['alpha'], groups: ['ops'] }]);
  const anonymous = index.view({});
  assert.throws(() => anonymous.evaluate('alpha', queries), (e) => e instanceof EngineError && e.kind === 'not-found');
  const beta = anonymous.evaluate('beta', queries);
  assert.equal(beta.queries[0].outcome, 'matched');
  assert.equal(beta.queries[0].winner, 'beta');
});
