// The browser skill editor: every check and every rank comes from the engine (no rule here).
import { loadEngine, fromFiles, EngineError } from '../src/index.js';

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

/** Make `files` ([{path, text}]) the collection the draft is ranked against. */
function useCollection(name, files) {
  const t = performance.now();
  const root = fromFiles(name, files);
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
  const check = engine.checkSkill(path, text, { listing });
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
    add('name (Skills extension)', check.servedName ?? '(not served: no valid name can be made from its path; see the findings)');
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

/** Files of a folder (File objects with webkitRelativePath or a path) -> the collection. */
async function loadFileList(files, name) {
  setStatus(`reading ${files.length} files…`);
  const strip = (p) => p.split('/').slice(1).join('/');
  const out = [];
  for (const f of files) {
    const rel = f.relPath ?? strip(f.webkitRelativePath || f.name);
    if (!rel || !/\.md$/i.test(rel) || f.size > 4 * 1024 * 1024) continue;
    out.push({ path: rel, text: await f.text() });
  }
  const folder = name ?? ((files[0]?.webkitRelativePath || '').split('/')[0] || 'folder');
  useCollection(folder, out);
  setStatus('ready');
}

async function openFolder() {
  if (!window.showDirectoryPicker) { $('folder-input').click(); return; }
  const dir = await window.showDirectoryPicker();
  const files = [];
  async function walk(handle, prefix) {
    for await (const [name, h] of handle.entries()) {
      if (h.kind === 'directory') {
        if (name !== '.git' && name !== 'node_modules') await walk(h, `${prefix}${name}/`);
      } else {
        const file = await h.getFile();
        file.relPath = `${prefix}${name}`;
        files.push(file);
      }
    }
  }
  await walk(dir, '');
  await loadFileList(files, dir.name);
}

async function drop(e) {
  e.preventDefault();
  document.body.classList.remove('dragging');
  const files = [];
  async function walk(entry, prefix) {
    if (entry.isDirectory) {
      if (entry.name === '.git' || entry.name === 'node_modules') return;
      const reader = entry.createReader();
      let batch;
      do {
        batch = await new Promise((ok, ko) => reader.readEntries(ok, ko));
        for (const child of batch) await walk(child, `${prefix}${entry.name}/`);
      } while (batch.length);
    } else {
      const file = await new Promise((ok, ko) => entry.file(ok, ko));
      file.relPath = `${prefix}${entry.name}`.split('/').slice(1).join('/');
      files.push(file);
    }
  }
  const items = [...e.dataTransfer.items].map((i) => i.webkitGetAsEntry()).filter(Boolean);
  for (const entry of items) await walk(entry, '');
  await loadFileList(files, items[0]?.name);
}

// For tests and benchmarks: load a collection from a URL of {name, files}, and time the
// per-keystroke work.
window.skillsEditor = {
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
