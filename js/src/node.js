// Node helpers: a root from a directory on disk.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from './index.js';

let shared = null;

/**
 * A root over the directory `dir`, listed as the native host lists one: depth-first in name
 * order, symlinks listed and never followed, with the engine's walk policy (folders it skips,
 * depth and entry limits). `read` reads a file of the listing synchronously.
 * @param {string} dir
 * @param {{ name?: string, engine?: import('./index.js').Engine }} [options]
 */
export async function fromDirectory(dir, options = {}) {
  const engine = options.engine ?? (shared ??= await loadEngine());
  const policy = engine.walkPolicy();
  const skip = new Set(policy.skipDirNames);
  const entries = [];
  const stack = [['', 0]];
  let truncated = false;
  while (stack.length && !truncated) {
    const [prefix, depth] = stack.pop();
    let names;
    try {
      names = readdirSync(prefix ? join(dir, prefix) : dir);
    } catch {
      continue;
    }
    const children = [];
    for (const name of names) {
      const path = prefix ? `${prefix}/${name}` : name;
      let st;
      try {
        st = lstatSync(join(dir, path));
      } catch {
        continue;
      }
      if (st.isSymbolicLink()) children.push({ name, path, kind: 'symlink', size: 0 });
      else if (st.isDirectory()) {
        if (!skip.has(name)) children.push({ name, path, kind: 'directory', size: 0 });
      } else if (st.isFile()) children.push({ name, path, kind: 'file', size: st.size });
    }
    // byte order of the names, as the native host sorts them
    children.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
    const subdirs = [];
    for (const c of children) {
      if (entries.length >= policy.maxEntries) {
        truncated = true;
        break;
      }
      if (c.kind === 'directory' && depth < policy.maxDepth) subdirs.push([c.path, depth + 1]);
      entries.push({ path: c.path, kind: c.kind, size: c.size });
    }
    stack.push(...subdirs.reverse());
  }
  const listed = new Set(entries.filter((e) => e.kind === 'file').map((e) => e.path));
  return {
    name: options.name ?? dir,
    entries,
    read(path) {
      // only files of the listing: nothing outside the root, no symlink
      if (!listed.has(path)) throw new Error(`${path}: not a file of this root`);
      return readFileSync(join(dir, path));
    },
  };
}

export { loadEngine, fromFiles, EngineError, Engine, Index, DEFAULT_CONFIG } from './index.js';
