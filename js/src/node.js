// Node helpers: a root from a directory on disk.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from './index.js';
import { walkRoot } from './walk.js';

let shared = null;

/** What a special file is, in words (as the native host says it). */
function special(st) {
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isBlockDevice() || st.isCharacterDevice()) return 'a device';
  return 'a special file';
}

/**
 * A root over the directory `dir`, listed as the native host lists one: by the engine's walk
 * (`walkRoot`: depth-first in name order, symlinks listed and never followed, the policy's
 * skipped folders, depth and entry limits). `read` reads a file of the listing synchronously;
 * `findings` holds what the walk left out and why.
 * @param {string} dir
 * @param {{ name?: string, engine?: import('./index.js').Engine }} [options]
 */
export async function fromDirectory(dir, options = {}) {
  const engine = options.engine ?? (shared ??= await loadEngine());
  const { entries, findings } = await walkRoot(engine, (prefix) => {
    const children = [];
    for (const name of readdirSync(prefix ? join(dir, prefix) : dir)) {
      let st;
      try {
        st = lstatSync(join(dir, prefix, name));
      } catch {
        continue;
      }
      if (st.isSymbolicLink()) children.push({ name, kind: 'symlink', size: 0 });
      else if (st.isDirectory()) children.push({ name, kind: 'directory', size: 0 });
      else if (st.isFile()) children.push({ name, kind: 'file', size: st.size });
      else children.push({ name, kind: { special: special(st) }, size: 0 });
    }
    return children;
  });
  const listed = new Set(entries.filter((e) => e.kind === 'file').map((e) => e.path));
  return {
    name: options.name ?? dir,
    entries,
    findings,
    read(path) {
      // only files of the listing: nothing outside the root, no symlink
      if (!listed.has(path)) throw new Error(`${path}: not a file of this root`);
      return readFileSync(join(dir, path));
    },
  };
}

export { loadEngine, fromFiles, EngineError, Engine, Index, IndexQueries, IndexView, DEFAULT_CONFIG } from './index.js';
export { walkRoot } from './walk.js';
