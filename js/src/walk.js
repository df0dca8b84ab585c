// The walk of a root for JavaScript hosts (the Node `fromDirectory`, the browser editor's
// folder opening). The host only lists folders; every rule (order, skipped folder names,
// depth, the entry cap, special files, names a path cannot hold) is the engine's, asked folder
// by folder through `walk-folder`: the same rule the native server and the WASI command walk by.

/**
 * Walk a root: `list(path)` gives the children of the folder `path` (`''`: the root) as
 * `[{name, kind: 'file'|'directory'|'symlink'|{special: string}, size}]` in any order (it may
 * be async, and throws when the folder cannot be listed).
 * @param {import('./index.js').Engine} engine
 * @param {(path: string) => any} list
 * @param {{ root?: number }} [options] `root`: the root's number in findings
 * @returns {Promise<{ entries: Array<{path: string, kind: string, size: number}>, findings: Array<object>, truncated: boolean, tooDeep: boolean }>}
 */
export async function walkRoot(engine, list, options = {}) {
  const root = options.root ?? 0;
  const entries = [];
  const findings = [];
  let truncated = false;
  let tooDeep = false;
  const stack = [['', 0]];
  while (stack.length) {
    const [path, depth] = stack.pop();
    let children;
    try {
      children = await list(path);
    } catch (e) {
      const message = `cannot list this folder: ${e && e.message ? e.message : e}`;
      findings.push({ root, path, worst: 'error', diagnostics: [{ root, path, severity: 'error', message }] });
      continue;
    }
    const step = engine.walkFolder(root, path, depth, entries.length, children);
    // (a loop, not push(...): a folder may hold more entries than a call takes arguments)
    for (const e of step.entries) entries.push(e);
    for (const f of step.findings) findings.push(f);
    tooDeep ||= step.tooDeep;
    // Depth-first in the engine's order: the first folder is popped first.
    for (let i = step.enter.length - 1; i >= 0; i--) stack.push([step.enter[i], depth + 1]);
    if (step.stop) {
      truncated = true;
      break;
    }
  }
  return { entries, findings, truncated, tooDeep };
}
