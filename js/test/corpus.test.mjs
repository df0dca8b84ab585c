// Proof: the package gives the native CLI's answers. Every dev query of the retrieval eval
// (short and task, 240) on the 2,621-skill corpus: the top 5 from an index built through the
// package is compared with `skills-mcp search --batch -n 5` byte for byte, after formatting both
// with JSON.stringify (serde_json writes `1.0` where JavaScript writes `1`).
// Skipped, with a note, when the corpus or the release binary is absent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadEngine, fromDirectory } from '../src/node.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const corpus = process.env.SKILLS_CORPUS ?? `${repo}/../shared/corpora/combined`;
const queriesFile = process.env.SKILLS_DEV_QUERIES ?? `${repo}/../shared/eval/dev_queries.json`;
const cli = process.env.SKILLS_MCP_BIN ?? `${repo}/target/release/skills-mcp`;

/** An object with its keys sorted (serde_json's order without `preserve_order`). */
function sorted(o) {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
}

const missing = [corpus, queriesFile, cli].filter((p) => !existsSync(p));

test('every dev query: the top 5 through the package equals the native CLI', { skip: missing.length ? `absent: ${missing.join(', ')}` : false }, async () => {
  const queries = JSON.parse(readFileSync(queriesFile, 'utf8'))
    .flatMap((q) => [q.short, q.task])
    .filter((q) => typeof q === 'string' && q.trim())
    .map((q) => q.trim());
  assert.ok(queries.length >= 200, `${queries.length} queries`);

  let t = performance.now();
  const native = execFileSync(cli, ['search', '--batch', '--no-default-roots', '--root', corpus, '-n', '5'], {
    input: queries.join('\n') + '\n',
    env: { ...process.env, SKILLS_MCP_INDEX_CACHE: 'off' },
    maxBuffer: 1 << 28,
  }).toString().trim().split('\n');
  const nativeMs = performance.now() - t;
  assert.equal(native.length, queries.length);

  const engine = await loadEngine();
  t = performance.now();
  const root = await fromDirectory(corpus, { engine });
  const listed = performance.now() - t;
  t = performance.now();
  const index = engine.buildIndex([root]);
  const built = performance.now() - t;
  t = performance.now();
  const mine = queries.map((query) => JSON.stringify(sorted({
    query,
    results: index.search(query, 5).map((h) => sorted({
      skill_path: h.skillPath, name: h.name, score: h.score, description: h.description, version: h.version,
    })),
  })));
  const searched = performance.now() - t;

  let same = 0;
  for (let i = 0; i < queries.length; i++) {
    const want = JSON.stringify(JSON.parse(native[i]));
    assert.equal(mine[i], want, `query ${i}: ${queries[i]}`);
    same++;
  }
  console.log(`corpus: ${index.size} skills; ${same}/${queries.length} queries identical to the CLI`);
  console.log(`node: list ${listed.toFixed(0)} ms, build ${built.toFixed(0)} ms, ${queries.length} searches ${searched.toFixed(0)} ms ` +
    `(${(searched * 1000 / queries.length).toFixed(0)} µs each); native CLI, whole run (start, build, searches): ${nativeMs.toFixed(0)} ms`);
});
