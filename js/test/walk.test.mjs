// The walk of JavaScript hosts is the engine's (`walk-folder`, driven by `walkRoot`): the Node
// `fromDirectory` on a real folder with what a hostile root holds (a FIFO, a socket, symlinks
// out of it, a backslash in a name, a folder named like a drive letter, the policy's skipped
// folders, folders deeper than the policy's depth), and `walkRoot` over an in-memory lister.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngine, fromDirectory, walkRoot } from '../src/node.js';

const skill = (name) => `---\nname: ${name}\ndescription: The ${name} skill of the walk test.\n---\nBody.\n`;

test('fromDirectory walks by the engine: special files and hostile names reported, skipped folders and depth kept', async () => {
  const engine = await loadEngine();
  const policy = engine.walkPolicy();
  const dir = mkdtempSync(join(tmpdir(), 'skills-walk-'));
  const server = createServer();
  try {
    const write = (path, text) => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    write('good/SKILL.md', skill('good'));
    write('good/back\\slash.md', '# x\n');
    write('c:/SKILL.md', skill('c'));
    for (const name of policy.skipDirNames) write(`${name}/pkg/SKILL.md`, skill('pkg'));
    const chain = (n) => Array.from({ length: n }, (_, i) => `d${i}`).join('/');
    write(`${chain(policy.maxDepth + 1)}/SKILL.md`, skill(`d${policy.maxDepth}`));
    mkdirSync(join(dir, 'piped'));
    execFileSync('mkfifo', [join(dir, 'piped/SKILL.md')]);
    await new Promise((ok) => server.listen(join(dir, 'sock'), ok));
    symlinkSync('/etc', join(dir, 'outside'));

    const root = await fromDirectory(dir, { engine });
    const paths = root.entries.map((e) => e.path);
    // The root's entries first, in byte order; then its folders', depth-first.
    assert.deepEqual(paths.slice(0, 4), ['d0', 'good', 'outside', 'piped']);
    assert.deepEqual(paths.filter((p) => !p.includes('/')), ['d0', 'good', 'outside', 'piped']);
    assert.equal(paths[4], 'd0/d1', 'then d0 (the first folder) all the way down');
    assert.equal(root.entries.find((e) => e.path === 'outside').kind, 'symlink');
    assert.ok(!paths.some((p) => policy.skipDirNames.some((n) => p.split('/').includes(n))), 'skipped folders are not listed');
    assert.ok(paths.includes(chain(policy.maxDepth + 1)), 'the deepest folder is listed');
    assert.ok(!paths.includes(`${chain(policy.maxDepth + 1)}/SKILL.md`), 'but not entered');
    const said = root.findings.flatMap((r) => r.diagnostics.map((d) => `${d.path}: ${d.message}`));
    for (const expected of [
      'piped/SKILL.md: skipped: a FIFO (named pipe) is not a regular file or a folder; it is never read',
      'sock: skipped: a socket is not a regular file or a folder; it is never read',
      'good: skipped "back\\\\slash.md": the name contains a backslash, which skill paths do not allow',
      ': skipped "c:": the name starts like a drive letter (`c:`), which skill paths do not allow',
    ]) assert.ok(said.includes(expected), `${expected}\nnot in:\n${said.join('\n')}`);

    const index = engine.buildIndex([root]);
    assert.deepEqual(index.skills().map((s) => s.skillPath), ['good']);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('walkRoot: the entry cap stops the walk; a folder that cannot be listed is an error finding', async () => {
  const engine = await loadEngine();
  const { maxEntries } = engine.walkPolicy();
  const wide = Array.from({ length: maxEntries + 5 }, (_, i) => ({ name: `f${i}.md`, kind: 'file', size: 1 }));
  const listed = [];
  const walk = await walkRoot(engine, (path) => {
    listed.push(path);
    if (path === '') return [{ name: 'a', kind: 'directory' }, { name: 'locked', kind: 'directory' }];
    if (path === 'locked') throw new Error('permission denied');
    return wide;
  }, { root: 2 });
  assert.equal(walk.entries.length, maxEntries);
  assert.ok(walk.truncated);
  assert.deepEqual(listed, ['', 'a'], 'the walk stopped at the cap, before `locked`');

  const locked = await walkRoot(engine, (path) => {
    if (path === '') return [{ name: 'locked', kind: 'directory' }, { name: 'x.md', kind: 'file', size: 3 }];
    throw new Error('permission denied');
  }, { root: 2 });
  assert.deepEqual(locked.entries.map((e) => [e.path, e.kind, e.size]), [['locked', 'directory', 0], ['x.md', 'file', 3]]);
  assert.equal(locked.findings.length, 1);
  assert.equal(locked.findings[0].worst, 'error');
  assert.equal(locked.findings[0].diagnostics[0].message, 'cannot list this folder: permission denied');
  assert.ok(!locked.truncated && !locked.tooDeep);
});
