// The editor's browser adapter: the engine (the WebAssembly component) runs in this page, on the
// bundled skills or a folder the user opens or drops. No rule here: the walk, the reads, the
// checks and the ranks are the engine's.
import { loadEngine, fromFiles, walkRoot } from '../src/index.js';

/**
 * Start the in-page engine. `onRestart(e)`: the engine restarted after a trap.
 * Returns the adapter the UI (editor.js) calls.
 */
export async function connectBrowser({ onRestart }) {
  const engine = await loadEngine({ onRestart });
  let collection = null; // { name, root, index, files }

  const adapter = {
    mode: 'browser',
    engine,
    get collection() { return collection; },

    /** The bundled skills, as shipped with the package's build. */
    async bundled() {
      const bundled = await (await fetch(new URL('../dist/bundled-skills.json', import.meta.url))).json();
      return adapter.use(bundled.name, bundled.files);
    },

    /**
     * Make `files` ([{path, text}]) the collection; `entries`: the folder's whole listing when
     * it came from a walk (else the files alone). Returns {name, skills, buildMs, list}.
     */
    use(name, files, entries) {
      const t = performance.now();
      const root = fromFiles(name, files);
      if (entries) root.entries = entries;
      const index = engine.buildIndex([root]);
      collection = { name, root, index, files };
      const buildMs = performance.now() - t;
      return {
        name,
        skills: index.size,
        buildMs,
        list: index.skills().map((s) => ({ root: 0, file: s.file, skillPath: s.skillPath })),
      };
    },

    /** The text of a file of the collection (what "start from" opens). */
    open(root, path) {
      const f = collection.files.find((x) => x.path === path);
      return { text: f ? f.text : '', digest: null, readOnly: 'a file of the page, not saved anywhere' };
    },

    /**
     * The audit of the collection's skill the file is (the engine's one-skill audit,
     * `Index.auditOne`), in `skills-mcp audit --json`'s shape for one skill, as the host
     * adapter answers; `null` when the file is no skill of the collection.
     */
    audit(root, path, requests = []) {
      const skill = collection.index.skills().find((s) => s.file === path);
      if (!skill) return null;
      const a = collection.index.auditOne(skill.skillPath, requests);
      return {
        skill: a.skillPath,
        competitors: a.competitors.map((c) => ({ skill: c.skillPath, strength: c.strength, shared: c.shared, separating: c.separating })),
        findings: a.findings,
      };
    },

    /** Lint the draft and rank it: the per-keystroke work. */
    analyse(root, path, text, reqs) {
      // The engine uses only the entries of the skill's own folder, all below the file's
      // folder: handing over just those keeps a keystroke's cost independent of the
      // collection's size.
      const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';
      const listing = dir ? collection.root.entries.filter((e) => e.path.startsWith(dir)) : collection.root.entries;
      // Against the collection: the Skills extension's verdict is the server's (a URI another
      // skill holds, the limits), not the file's alone.
      const check = collection.index.checkSkill(path, text, { listing });
      let ranking = null;
      let rankError = null;
      if (check.skill && reqs.length) {
        try { ranking = collection.index.scoreDraft(path, text, reqs, 5); } catch (e) { rankError = e; }
      }
      return { check, ranking, rankError };
    },

    /**
     * A folder the user opened, as `source` lists it (`list(path)`: its children;
     * `file(path)`: a listed file's File), made the collection. The engine decides
     * everything: the walk's rules (`walkRoot`: skipped folders, depth, the entry cap, special
     * files), then which files it reads (a first build over the listing with nothing read asks
     * for them), then the skills.
     */
    async loadFolder(name, source, setStatus) {
      setStatus('listing the folder…');
      const { entries } = await walkRoot(engine, source.list);
      const wanted = engine.buildIndex([{ name, entries, read: () => { throw new Error('not read yet'); } }])
        .readErrors.map((e) => e.path);
      setStatus(`reading ${wanted.length} files…`);
      const files = [];
      for (const path of wanted) files.push({ path, text: await (await source.file(path)).text() });
      const used = adapter.use(name, files, entries);
      return { ...used, entries: entries.length, read: wanted.length };
    },
  };
  return adapter;
}

/** A source over a flat list of File objects (an `<input webkitdirectory>`): `rel` names each. */
export function listSource(files, rel) {
  const folders = new Map([['', new Map()]]);
  const byPath = new Map();
  for (const f of files) {
    const parts = rel(f).split('/').filter(Boolean);
    if (!parts.length) continue;
    let dir = '';
    for (const [i, part] of parts.entries()) {
      const path = dir ? `${dir}/${part}` : part;
      const last = i === parts.length - 1;
      folders.get(dir).set(part, last ? { name: part, kind: 'file', size: f.size } : { name: part, kind: 'directory', size: 0 });
      if (last) byPath.set(path, f);
      else if (!folders.has(path)) folders.set(path, new Map());
      dir = path;
    }
  }
  return {
    list: (path) => [...(folders.get(path)?.values() ?? [])],
    file: (path) => byPath.get(path),
  };
}

/** A source over a FileSystemDirectoryHandle (the directory picker). */
export function handleSource(dir) {
  const folders = new Map([['', dir]]);
  const handles = new Map();
  return {
    async list(path) {
      const children = [];
      for await (const [name, h] of folders.get(path).entries()) {
        const child = path ? `${path}/${name}` : name;
        if (h.kind === 'directory') {
          folders.set(child, h);
          children.push({ name, kind: 'directory', size: 0 });
        } else {
          handles.set(child, h);
          children.push({ name, kind: 'file', size: (await h.getFile()).size });
        }
      }
      return children;
    },
    file: (path) => handles.get(path).getFile(),
  };
}

/** A source over a dropped FileSystemDirectoryEntry. */
export function entrySource(top) {
  const folders = new Map([['', top]]);
  const files = new Map();
  return {
    async list(path) {
      const reader = folders.get(path).createReader();
      const children = [];
      let batch;
      do {
        batch = await new Promise((ok, ko) => reader.readEntries(ok, ko));
        for (const e of batch) {
          const child = path ? `${path}/${e.name}` : e.name;
          if (e.isDirectory) {
            folders.set(child, e);
            children.push({ name: e.name, kind: 'directory', size: 0 });
          } else {
            const file = await new Promise((ok, ko) => e.file(ok, ko));
            files.set(child, file);
            children.push({ name: e.name, kind: 'file', size: file.size });
          }
        }
      } while (batch.length);
      return children;
    },
    file: (path) => files.get(path),
  };
}
