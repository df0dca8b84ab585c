// The skill editor's UI, one for both engine adapters: in the browser (engine-browser.js: the
// engine runs in this page, on the bundled skills or a folder opened here) and under
// `skills-mcp editor` (engine-host.js: the host runs the same engine on the configured roots,
// and saves). Every check and every rank comes from the engine (no rule here).
import { hostSecret } from './engine-host.js';

const $ = (id) => document.getElementById(id);
const TEMPLATE = `---
name: csv-cleaner
description: Clean messy CSV files.
---
# CSV cleaner

Load the file, fix the delimiters, validate the columns.
`;
const NEW_SKILL = (name) => `---
name: ${name}
description: What this skill does, and when to use it (the words people use when they need it).
---
# ${name}

The steps, in order.
`;
const DEFAULT_REQUESTS = ['clean a csv spreadsheet', 'react login form'];

let adapter;
/** The file being edited: {root, path, digest (null: new), readOnly, saved (its text on disk)}. */
let current = { root: 0, path: '', digest: null, readOnly: null, saved: null };
/**
 * The skill's eval file (host mode): {path, digest (null: not on disk), saved (its text)}, or
 * null when the file is not a skill of the index yet (save it first).
 */
let evalFile = null;
let scheduled = false;
let running = false;
let again = false;
const timings = [];

function setStatus(text) { $('status').textContent = text; }

async function boot() {
  const secret = hostSecret();
  if (secret) {
    const { connectHost } = await import('./engine-host.js');
    adapter = await connectHost(secret);
    document.body.classList.add('host');
    await refreshState();
    $('requests').value = '';
    const first = state.skills.find((s) => !state.roots[s.root]?.readOnly) ?? state.skills[0];
    if (first) await openFile(first.root, first.file);
    else newSkill();
  } else {
    const { connectBrowser } = await import('./engine-browser.js');
    adapter = await connectBrowser({ onRestart: (e) => setStatus(`engine restarted after a trap: ${e}`) });
    document.body.classList.add('browser');
    showCollection(await adapter.bundled());
    $('source').value = TEMPLATE;
    $('path').value = 'data/csv-cleaner/SKILL.md';
    $('requests').value = DEFAULT_REQUESTS.join('\n');
    $('start-from').addEventListener('change', startFrom);
    $('open-folder').addEventListener('click', openFolder);
    $('folder-input').addEventListener('change', (e) => loadFileList([...e.target.files]));
    document.addEventListener('dragover', (e) => { e.preventDefault(); document.body.classList.add('dragging'); });
    document.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
    document.addEventListener('drop', drop);
  }
  $('source').addEventListener('input', schedule);
  $('requests').addEventListener('input', schedule);
  $('path').addEventListener('input', schedule);
  $('source').addEventListener('scroll', () => { $('gutter').scrollTop = $('source').scrollTop; });
  $('save').addEventListener('click', save);
  $('new-skill').addEventListener('click', newSkill);
  $('add-eval').addEventListener('click', () => { addEvalRow('', true).querySelector('input.q').focus(); schedule(); });
  $('save-evals').addEventListener('click', saveEvals);
  $('root').addEventListener('change', schedule);
  await update();
  setStatus('ready');
}

// ---- host mode: the configured roots, opening, saving ----

let state = { roots: [], skills: [], caller: '' };

async function refreshState() {
  state = await adapter.state();
  $('caller').textContent = `as ${state.caller}`;
  $('collection-name').textContent = `${state.skills.length} skills in ${state.roots.length} root${state.roots.length === 1 ? '' : 's'}`;
  const select = $('root');
  select.replaceChildren(...state.roots.map((r) => {
    const o = document.createElement('option');
    o.value = String(r.root);
    o.textContent = `${r.name}${r.readOnly ? ' (read-only)' : ''}`;
    return o;
  }));
  select.value = String(current.root);
  renderTree();
}

/** The skills as a tree: one branch per root, then the skill path's segments. */
function renderTree() {
  const tree = $('tree');
  tree.replaceChildren();
  for (const r of state.roots) {
    const details = document.createElement('details');
    details.open = true;
    const summary = document.createElement('summary');
    summary.textContent = r.name;
    summary.title = r.path;
    if (r.readOnly) {
      const badge = document.createElement('span');
      badge.className = 'badge';
      badge.textContent = 'read-only';
      badge.title = r.readOnly;
      summary.append(' ', badge);
    }
    details.append(summary);
    const skills = state.skills.filter((s) => s.root === r.root).sort((a, b) => a.skillPath.localeCompare(b.skillPath));
    const branches = new Map([['', details]]);
    const branch = (path) => {
      if (branches.has(path)) return branches.get(path);
      const cut = path.lastIndexOf('/');
      const parent = branch(cut < 0 ? '' : path.slice(0, cut));
      const d = document.createElement('details');
      d.open = true;
      const s = document.createElement('summary');
      s.textContent = path.slice(cut + 1) + '/';
      d.append(s);
      parent.append(d);
      branches.set(path, d);
      return d;
    };
    for (const s of skills) {
      const cut = s.skillPath.lastIndexOf('/');
      const parent = branch(cut < 0 ? '' : s.skillPath.slice(0, cut));
      const a = document.createElement('a');
      a.href = '#';
      a.className = 'skill';
      a.dataset.root = String(s.root);
      a.dataset.file = s.file;
      a.textContent = s.skillPath.slice(cut + 1);
      a.title = `${s.file}: ${s.description}`;
      a.addEventListener('click', (e) => { e.preventDefault(); openFile(s.root, s.file); });
      parent.append(a);
    }
    tree.append(details);
  }
}

async function openFile(root, path) {
  if (dirty() && !confirm(`${current.path} has unsaved changes. Open ${path} anyway?`)) return;
  setStatus(`opening ${path}…`);
  const f = await adapter.open(root, path);
  current = { root, path, digest: f.digest, readOnly: f.readOnly ?? null, saved: f.text };
  $('root').value = String(root);
  $('path').value = path;
  $('source').value = f.text;
  showEvals(f.evals ?? null);
  for (const a of document.querySelectorAll('#tree a.skill')) {
    a.classList.toggle('open', a.dataset.root === String(root) && a.dataset.file === path);
  }
  showFileState();
  await update();
  await refreshAudit();
  setStatus('ready');
}

function newSkill() {
  if (dirty() && !confirm(`${current.path} has unsaved changes. Start a new skill anyway?`)) return;
  const writable = state.roots.find((r) => !r.readOnly);
  const root = writable ? writable.root : 0;
  const taken = new Set(state.skills.filter((s) => s.root === root).map((s) => s.file));
  let n = 1;
  while (taken.has(n === 1 ? 'new-skill/SKILL.md' : `new-skill-${n}/SKILL.md`)) n += 1;
  const name = n === 1 ? 'new-skill' : `new-skill-${n}`;
  current = { root, path: `${name}/SKILL.md`, digest: null, readOnly: state.roots[root]?.readOnly ?? null, saved: null };
  $('root').value = String(root);
  $('path').value = current.path;
  $('source').value = NEW_SKILL(name);
  showEvals(null);
  showFileState();
  schedule();
}

/** Where the text would go: the file opened, or a new file when the path or root changed. */
function target() {
  const root = Number($('root').value || 0);
  const path = $('path').value.trim();
  const same = root === current.root && path === current.path;
  return { root, path, digest: same ? current.digest : null, isNew: !same || current.digest === null };
}

function dirty() { return adapter?.mode === 'host' && current.path && $('source').value !== current.saved; }

function showFileState() {
  const t = target();
  const readOnly = state.roots[t.root]?.readOnly ?? null;
  $('readonly').textContent = readOnly ? `read-only: ${readOnly}` : '';
  $('save').disabled = Boolean(readOnly);
  $('save-state').textContent = t.isNew ? 'new file' : dirty() ? 'unsaved changes' : 'saved';
}

async function save() {
  const t = target();
  const text = $('source').value;
  $('save').disabled = true;
  $('save-error').textContent = '';
  try {
    const r = await adapter.save(t.root, t.path, text, t.digest);
    current = { root: t.root, path: t.path, digest: r.digest, readOnly: null, saved: text };
    if (!evalFile && r.evals) showEvals(r.evals);
    $('save-state').textContent = `saved (${new Date().toLocaleTimeString()})`;
    await refreshState();
    for (const a of document.querySelectorAll('#tree a.skill')) {
      a.classList.toggle('open', a.dataset.root === String(t.root) && a.dataset.file === t.path);
    }
    await update();
    await refreshAudit();
  } catch (e) {
    $('save-error').textContent = `not saved: ${e.message}`;
  } finally {
    showFileState();
  }
}

// ---- host mode: the skill's eval queries (evals/eval_queries.json), run as you type ----

function addEvalRow(query, shouldTrigger) {
  const tr = $('evals').tBodies[0].insertRow();
  const q = document.createElement('input');
  q.className = 'q';
  q.value = query;
  q.spellcheck = false;
  q.addEventListener('input', schedule);
  const t = document.createElement('input');
  t.type = 'checkbox';
  t.className = 't';
  t.checked = shouldTrigger;
  t.addEventListener('change', schedule);
  tr.insertCell().append(q);
  tr.insertCell().append(t);
  tr.insertCell().className = 'outcome';
  tr.insertCell().className = 'pass';
  return tr;
}

/** The eval queries as the rows say (empty queries left out). */
function evalQueries() {
  return [...$('evals').tBodies[0].rows]
    .map((tr) => ({ query: tr.querySelector('input.q').value.trim(), should_trigger: tr.querySelector('input.t').checked }))
    .filter((q) => q.query);
}

/** The eval file as the page would save it. */
function evalText() {
  return `${JSON.stringify(evalQueries(), null, 2)}\n`;
}

function showEvals(evals) {
  evalFile = evals ? { path: evals.path, digest: evals.digest ?? null, saved: evals.digest ? evals.text : null } : null;
  $('evals').tBodies[0].replaceChildren();
  $('eval-error').textContent = '';
  $('eval-summary').textContent = '';
  if (!evals) {
    $('eval-file').textContent = adapter?.mode === 'host' ? '(save the skill first)' : '';
    $('add-eval').disabled = true;
    $('save-evals').disabled = true;
    showEvalState();
    return;
  }
  $('eval-file').textContent = evals.path;
  $('add-eval').disabled = false;
  for (const q of evals.queries ?? []) addEvalRow(q.query, q.should_trigger);
  if (evals.problems?.length) {
    $('eval-error').textContent = `the eval file has problems: ${evals.problems.join('; ')}`;
  }
  showEvalState();
}

function showEvalState() {
  if (!evalFile) { $('eval-state').textContent = ''; return; }
  const readOnly = state.roots[current.root]?.readOnly;
  $('save-evals').disabled = Boolean(readOnly);
  $('eval-state').textContent = evalFile.saved === null
    ? (evalQueries().length ? 'not saved yet' : '')
    : evalText() === evalFile.saved ? 'saved' : 'unsaved changes';
}

/** The engine's answer for each query (`eval --json`'s shape), beside its row. */
function renderEvals(evals, evalError) {
  const rows = [...$('evals').tBodies[0].rows].filter((tr) => tr.querySelector('input.q').value.trim());
  for (const tr of $('evals').tBodies[0].rows) {
    tr.querySelector('td.outcome').textContent = '';
    const pass = tr.querySelector('td.pass');
    pass.textContent = '';
    pass.className = 'pass';
    delete tr.dataset.passed;
  }
  if (evalError) { $('eval-summary').textContent = `not run: ${evalError.message ?? evalError}`; return; }
  if (!evals) { $('eval-summary').textContent = ''; return; }
  evals.queries.forEach((r, i) => {
    const tr = rows[i];
    if (!tr) return;
    const who = r.outcome === 'ambiguous' ? `ambiguous: ${r.candidates.join(', ')}`
      : r.outcome === 'other' ? `other: ${r.winner} won`
        : r.outcome === 'matched' ? 'matched' : 'no match';
    tr.querySelector('td.outcome').textContent = `${who}${r.rank ? ` (rank ${r.rank})` : ''}`;
    const pass = tr.querySelector('td.pass');
    pass.textContent = r.passed ? 'pass' : 'FAIL';
    pass.className = `pass ${r.passed ? 'passed' : 'failed'}`;
    tr.dataset.passed = String(r.passed);
  });
  $('eval-summary').textContent = `${evals.passed} of ${evals.total} pass (train ${evals.train.passed}/${evals.train.total}, validation ${evals.validation.passed}/${evals.validation.total})`;
}

async function saveEvals() {
  if (!evalFile) return;
  $('eval-error').textContent = '';
  $('save-evals').disabled = true;
  const text = evalText();
  try {
    const r = await adapter.save(current.root, evalFile.path, text, evalFile.digest);
    evalFile = { ...evalFile, digest: r.digest, saved: text };
    await refreshAudit();
  } catch (e) {
    $('eval-error').textContent = `not saved: ${e.message}`;
  } finally {
    showEvalState();
  }
}

// ---- both modes: the audit competitors of the skill as saved (or as the collection has it) ----

/**
 * The skills that take or come close to the requests meant for the open skill (its eval
 * queries that should trigger it, else those derived from its text), from the engine's
 * one-skill audit: the skill, its strength ("close": it wins or ties none), the words both
 * match and the words that separate them.
 */
async function refreshAudit() {
  const { root, path } = target();
  const body = $('competitors').tBodies[0];
  const requests = evalFile ? evalQueries().filter((q) => q.should_trigger).map((q) => q.query) : [];
  let a = null;
  let error = null;
  try {
    a = adapter.audit(root, path, requests);
    if (a instanceof Promise) a = await a;
  } catch (e) {
    error = e;
  }
  body.replaceChildren();
  $('audit-findings').textContent = '';
  if (error) { $('audit-summary').textContent = `not run: ${error.message ?? error}`; return; }
  if (!a) { $('audit-summary').textContent = 'not a skill of the collection yet (save it first)'; return; }
  $('audit-summary').textContent = `${a.competitors.length} competitor${a.competitors.length === 1 ? '' : 's'} of ${a.skill}`;
  $('audit-findings').textContent = a.findings.map((f) => `${f.kind}: ${f.message}`).join('\n');
  for (const c of a.competitors) {
    const tr = body.insertRow();
    tr.dataset.skill = c.skill;
    tr.insertCell().textContent = c.skill;
    tr.insertCell().textContent = c.strength > 0 ? `${Math.round(c.strength * 100)}%` : 'close';
    tr.insertCell().textContent = c.shared.join(', ');
    tr.insertCell().textContent = c.separating.join(', ');
  }
}

// ---- browser mode: the bundled skills, or a folder opened in the page ----

function showCollection({ name, skills, buildMs, list }) {
  $('collection-name').textContent = `collection: ${name}, ${skills} skills (built in ${buildMs.toFixed(0)} ms)`;
  const select = $('start-from');
  select.length = 1;
  for (const s of list) {
    const o = document.createElement('option');
    o.value = s.file;
    o.textContent = s.skillPath;
    select.append(o);
  }
  schedule();
}

function startFrom() {
  const file = $('start-from').value;
  if (!file) { $('path').value = 'data/csv-cleaner/SKILL.md'; $('source').value = TEMPLATE; }
  else {
    $('path').value = file;
    $('source').value = adapter.open(0, file).text;
  }
  update();
  refreshAudit();
}

async function loadFolder(name, source) {
  const loaded = await adapter.loadFolder(name, source, setStatus);
  showCollection(loaded);
  setStatus('ready');
  return loaded;
}

/** Files of an `<input webkitdirectory>` (each with its webkitRelativePath) -> the collection. */
async function loadFileList(files) {
  const { listSource } = await import('./engine-browser.js');
  const strip = (f) => (f.webkitRelativePath || f.name).split('/').slice(1).join('/');
  const folder = (files[0]?.webkitRelativePath || '').split('/')[0] || 'folder';
  await loadFolder(folder, listSource(files, strip));
}

async function openFolder() {
  if (!window.showDirectoryPicker) { $('folder-input').click(); return; }
  const { handleSource } = await import('./engine-browser.js');
  const dir = await window.showDirectoryPicker();
  await loadFolder(dir.name, handleSource(dir));
}

async function drop(e) {
  e.preventDefault();
  document.body.classList.remove('dragging');
  const { entrySource } = await import('./engine-browser.js');
  const top = [...e.dataTransfer.items].map((i) => i.webkitGetAsEntry()).find((x) => x?.isDirectory);
  if (top) await loadFolder(top.name, entrySource(top));
}

// ---- both modes: lint and rank as you type ----

function schedule() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => { scheduled = false; update(); });
}

function requests() {
  return $('requests').value.split('\n').map((r) => r.trim()).filter(Boolean);
}

/** One analysis at a time; changes made meanwhile are analysed once it is done. */
async function update() {
  if (!adapter) return;
  if (running) { again = true; return; }
  running = true;
  try {
    do {
      again = false;
      const { root, path } = target();
      const text = $('source').value;
      const t = performance.now();
      let result;
      try {
        // The browser adapter answers at once (rendered in this same task), the host's later.
        result = adapter.analyse(root, path, text, requests(), evalFile ? evalQueries() : []);
        if (result instanceof Promise) result = await result;
      } catch (e) {
        result = { error: e };
      }
      const ms = performance.now() - t;
      timings.push(ms);
      if (!again) {
        render(text, result);
        if (adapter.mode === 'host') renderEvals(result.evals, result.evalError);
        $('timing').textContent = `lint + rank: ${ms.toFixed(1)} ms`;
      }
    } while (again);
  } finally {
    running = false;
  }
  if (adapter.mode === 'host') { showFileState(); showEvalState(); }
}

function render(text, { check, ranking, rankError, error }) {
  const lines = text.split('\n').length;
  const marks = new Map();
  const list = $('diagnostics');
  list.replaceChildren();
  if (error) {
    const li = document.createElement('li');
    li.className = 'error';
    li.textContent = error.kind ? `${error.kind}: ${error.message}` : String(error);
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

// For tests and benchmarks: load a collection from a URL of {name, files}, and time the
// per-keystroke work (the browser adapter).
window.skillsEditor = {
  walkPolicy: () => adapter.engine.walkPolicy(),
  async loadCollection(url) {
    const data = await (await fetch(url)).json();
    const used = adapter.use(data.name, data.files);
    showCollection(used);
    return used;
  },
  bench(runs = 20) {
    const path = $('path').value.trim();
    const text = $('source').value;
    const reqs = requests();
    const times = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const r = adapter.analyse(0, path, text, reqs);
      times.push(performance.now() - t);
      if (!r.check.skill) throw new Error('the draft is not a skill');
    }
    times.sort((a, b) => a - b);
    // the floor, in the same run: plain searches of the same requests
    const floor = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      for (const r of reqs) adapter.collection.index.search(r, 5);
      floor.push(performance.now() - t);
    }
    floor.sort((a, b) => a - b);
    return { runs, requests: reqs.length, median: times[runs >> 1], max: times[runs - 1], searchMedian: floor[runs >> 1] };
  },
  timings,
};

boot().catch((e) => { setStatus(`failed: ${e.message ?? e}`); console.error(e); });
