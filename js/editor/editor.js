// The browser skill editor: every check and every rank comes from the engine (no rule here).
import { loadEngine, fromFiles, walkRoot, EngineError } from '../src/index.js';

const $ = (id) => document.getElementById(id);
const TEMPLATE = `---
name: csv-cleaner
description: Clean messy CSV files.
---
# CSV cleaner

Load the file, fix the delimiters, validate the columns.
`;
const DEFAULT_REQUESTS = ['clean a csv spreadsheet', 'react login form'];

let engine;
let collection = null; // { name, root, index, files }
let scheduled = false;
const timings = [];

function setStatus(text) { $('status').textContent = text; }

async function boot() {
  engine = await loadEngine({ onRestart: (e) => setStatus(`engine restarted after a trap: ${e}`) });
  const bundled = await (await fetch(new URL('../dist/bundled-skills.json', import.meta.url))).json();
  useCollection(bundled.name, bundled.files);
  $('source').value = TEMPLATE;
  $('requests').value = DEFAULT_REQUESTS.join('\n');
  $('source').addEventListener('input', schedule);
  $('requests').addEventListener('input', schedule);
  $('path').addEventListener('input', schedule);
  $('source').addEventListener('scroll', () => { $('gutter').scrollTop = $('source').scrollTop; });
  $('start-from').addEventListener('change', startFrom);
  $('open-folder').addEventListener('click', openFolder);
  $('folder-input').addEventListener('change', (e) => loadFileList([...e.target.files]));
  document.addEventListener('dragover', (e) => { e.preventDefault(); document.body.classList.add('dragging'); });
  document.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
  document.addEventListener('drop', drop);
  update();
  setStatus('ready');
}

/**
 * Make `files` ([{path, text}]) the collection the draft is ranked against; `entries`: the
 * folder's whole listing when it came from a walk (else the files alone).
 */
function useCollection(name, files, entries) {
  const t = performance.now();
  const root = fromFiles(name, files);
  if (entries) root.entries = entries;
  const index = engine.buildIndex([root]);
  collection = { name, root, index, files };
  const ms = performance.now() - t;
  $('collection-name').textContent = `collection: ${name}, ${index.size} skills (built in ${ms.toFixed(0)} ms)`;
  const select = $('start-from');
  select.length = 1;
  for (const s of index.skills()) {
    const o = document.createElement('option');
    o.value = s.file;
    o.textContent = s.skillPath;
    select.append(o);
  }
  schedule();
  return { skills: index.size, buildMs: ms };
}

function startFrom() {
  const file = $('start-from').value;
  if (!file) { $('path').value = 'data/csv-cleaner/SKILL.md'; $('source').value = TEMPLATE; }
  else {
    $('path').value = file;
    const f = collection.files.find((x) => x.path === file);
    $('source').value = f ? f.text : '';
  }
  update();
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => { scheduled = false; update(); });
}

function requests() {
  return $('requests').value.split('\n').map((r) => r.trim()).filter(Boolean);
}

/** Lint the draft and rank it: the per-keystroke work. */
function analyse(path, text, reqs) {
  // The engine uses only the entries of the skill's own folder, all below the file's folder:
  // handing over just those keeps a keystroke's cost independent of the collection's size.
  const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';
  const listing = dir ? collection.root.entries.filter((e) => e.path.startsWith(dir)) : collection.root.entries;
  // Against the collection: the Skills extension's verdict is the server's (a URI another
  // skill holds, the limits), not the file's alone.
  const check = collection.index.checkSkill(path, text, { listing });
  let ranking = null;
  let rankError = null;
  if (check.skill && reqs.length) {
    try { ranking = collection.index.scoreDraft(path, text, reqs, 5); }
    catch (e) { rankError = e; }
  }
  return { check, ranking, rankError };
}

function update() {
  if (!engine || !collection) return;
  const path = $('path').value.trim();
  const text = $('source').value;
  const t = performance.now();
  let result;
  try {
    result = analyse(path, text, requests());
  } catch (e) {
    result = { error: e };
  }
  const ms = performance.now() - t;
  timings.push(ms);
  render(text, result);
  $('timing').textContent = `lint + rank: ${ms.toFixed(1)} ms`;
}

function render(text, { check, ranking, rankError, error }) {
  const lines = text.split('\n').length;
  const marks = new Map();
  const list = $('diagnostics');
  list.replaceChildren();
  if (error) {
    const li = document.createElement('li');
    li.className = 'error';
    li.textContent = error instanceof EngineError ? `${error.kind}: ${error.message}` : String(error);
    list.append(li);
  } else if (check.diagnostics.length === 0) {
    const li = document.createElement('li');
    li.className = 'none';
    li.textContent = 'no findings';
    list.append(li);
  }
  const order = { info: 0, warning: 1, error: 2 };
  for (const d of check?.diagnostics ?? []) {
    const li = document.createElement('li');
    li.className = d.severity;
    li.dataset.line = d.line ?? '';
    li.textContent = `${d.line ? `line ${d.line}` : 'file'}: ${d.severity}: ${d.message}`;
    list.append(li);
    if (d.line && (!marks.has(d.line) || order[d.severity] > order[marks.get(d.line)])) marks.set(d.line, d.severity);
  }
  $('worst').textContent = check?.worst ? `(${check.worst})` : '';
  const gutter = $('gutter');
  gutter.replaceChildren(...Array.from({ length: lines }, (_, i) => {
    const span = document.createElement('div');
    span.textContent = String(i + 1);
    if (marks.has(i + 1)) span.className = marks.get(i + 1);
    return span;
  }));
  const served = $('served');
  served.replaceChildren();
  const add = (k, v) => {
    const dt = document.createElement('dt'); dt.textContent = k;
    const dd = document.createElement('dd'); dd.textContent = v;
    served.append(dt, dd);
  };
  if (check?.skill) {
    add('skill path', check.skill.skillPath);
    if (check.extPath != null) {
      add('Skills extension', `skill://${check.extPath}/SKILL.md (name ${check.servedName})`);
    } else {
      add('Skills extension', `left out of skills/list: ${check.leftOut}`);
    }
    add('description', check.servedDescription ?? '');
    add('keywords', check.skill.keywords.join(', '));
  } else if (check) add('not a skill', 'fix the errors above');
  $('frontmatter').textContent = check?.frontmatterJson ? JSON.stringify(JSON.parse(check.frontmatterJson), null, 2) : '(no frontmatter)';
  const body = $('ranks').tBodies[0];
  body.replaceChildren();
  if (rankError) {
    const tr = body.insertRow();
    tr.insertCell().textContent = `${rankError.kind ?? 'error'}: ${rankError.message}`;
  }
  for (const r of ranking?.requests ?? []) {
    const tr = body.insertRow();
    tr.dataset.request = r.request;
    tr.insertCell().textContent = r.request;
    const rank = tr.insertCell();
    rank.className = 'rank';
    rank.textContent = r.rank ? `${r.rank} of ${r.matching}` : 'not matched';
    tr.insertCell().textContent = r.score.toFixed(3);
    tr.insertCell().textContent = r.above.map((a) => `${a.skillPath} (${a.score.toFixed(3)})`).join(', ') || '—';
  }
}

/**
 * A folder the user opened, as `source` lists it (`list(path)`: its children; `file(path)`: a
 * listed file's File), made the collection. The engine decides everything: the walk's rules
 * (`walkRoot`: skipped folders, depth, the entry cap, special files), then which files it reads
 * (a first build over the listing with nothing read asks for them), then the skills.
 */
async function loadFolder(name, source) {
  setStatus('listing the folder…');
  const { entries } = await walkRoot(engine, source.list);
  const wanted = engine.buildIndex([{ name, entries, read: () => { throw new Error('not read yet'); } }])
    .readErrors.map((e) => e.path);
  setStatus(`reading ${wanted.length} files…`);
  const files = [];
  for (const path of wanted) files.push({ path, text: await (await source.file(path)).text() });
  const stats = useCollection(name, files, entries);
  setStatus('ready');
  return { ...stats, entries: entries.length, read: wanted.length };
}

/** A source over a flat list of File objects (an `<input webkitdirectory>`): `rel` names each. */
function listSource(files, rel) {
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
function handleSource(dir) {
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
function entrySource(top) {
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

/** Files of an `<input webkitdirectory>` (each with its webkitRelativePath) -> the collection. */
async function loadFileList(files) {
  const strip = (f) => (f.webkitRelativePath || f.name).split('/').slice(1).join('/');
  const folder = (files[0]?.webkitRelativePath || '').split('/')[0] || 'folder';
  await loadFolder(folder, listSource(files, strip));
}

async function openFolder() {
  if (!window.showDirectoryPicker) { $('folder-input').click(); return; }
  const dir = await window.showDirectoryPicker();
  await loadFolder(dir.name, handleSource(dir));
}

async function drop(e) {
  e.preventDefault();
  document.body.classList.remove('dragging');
  const top = [...e.dataTransfer.items].map((i) => i.webkitGetAsEntry()).find((x) => x?.isDirectory);
  if (top) await loadFolder(top.name, entrySource(top));
}

// For tests and benchmarks: load a collection from a URL of {name, files}, and time the
// per-keystroke work.
window.skillsEditor = {
  walkPolicy: () => engine.walkPolicy(),
  async loadCollection(url) {
    const data = await (await fetch(url)).json();
    return useCollection(data.name, data.files);
  },
  bench(runs = 20) {
    const path = $('path').value.trim();
    const text = $('source').value;
    const reqs = requests();
    const times = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const r = analyse(path, text, reqs);
      times.push(performance.now() - t);
      if (!r.check.skill) throw new Error('the draft is not a skill');
    }
    times.sort((a, b) => a - b);
    // the floor, in the same run: plain searches of the same requests
    const floor = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      for (const r of reqs) collection.index.search(r, 5);
      floor.push(performance.now() - t);
    }
    floor.sort((a, b) => a - b);
    return { runs, requests: reqs.length, median: times[runs >> 1], max: times[runs - 1], searchMedian: floor[runs >> 1] };
  },
  timings,
};

boot().catch((e) => { setStatus(`failed: ${e}`); console.error(e); });
