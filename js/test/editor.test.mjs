// The browser skill editor in a real headless Chromium (Debian's `chromium`, driven by the
// pinned puppeteer-core), pages served by a tiny static server on 127.0.0.1: type a broken
// field and see its diagnostic at its line, fix it and see it go, type a request and see the
// draft's rank change; open a folder and see the engine's walk decide what counts; the
// per-keystroke budget (lint + rank for 5 requests, 50 ms) measured on the 2,621-skill corpus
// when it is present. A screenshot is saved (its path is printed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const js = fileURLToPath(new URL('..', import.meta.url));
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
const corpus = process.env.SKILLS_CORPUS ?? resolve(js, '../../shared/corpora/combined');
// The budget is 50 ms; the test fails past twice that (CI machines are shared and jitter), and
// says whether the budget itself was met.
const BUDGET_MS = 50;
const failMs = Number(process.env.SKILLS_EDITOR_FAIL_MS ?? 2 * BUDGET_MS);
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm' };

/** The .md files of a folder as {name, files: [{path, text}]} (what the editor loads). */
function collectionJson(dir) {
  const files = [];
  (function walk(d) {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory() && name !== '.git' && name !== 'node_modules') walk(p);
      else if (st.isFile() && /\.md$/i.test(name) && st.size <= 4 << 20) {
        files.push({ path: relative(dir, p).split(sep).join('/'), text: readFileSync(p, 'utf8') });
      }
    }
  })(dir);
  return JSON.stringify({ name: 'combined', files });
}

/** Static files of js/ (read-only, nothing outside it), and /corpus.json. */
function serve() {
  let corpusJson = null;
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname === '/corpus.json') {
      corpusJson ??= collectionJson(corpus);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(corpusJson);
    }
    const file = resolve(js, '.' + decodeURIComponent(url.pathname));
    if (!file.startsWith(js) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404);
      return res.end('not found');
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

/** Replace the text of `selector` by typing `text` (a keystroke at a time). */
async function retype(page, selector, text) {
  await page.click(selector);
  await page.keyboard.down('Control');
  await page.keyboard.press('a');
  await page.keyboard.up('Control');
  await page.keyboard.press('Backspace');
  await page.keyboard.type(text);
}

const rankOf = (page, request) => page.$eval(`#ranks tr[data-request="${request}"] td.rank`, (td) => td.textContent);

test('the skill editor in headless Chromium', { skip: existsSync(chromium) ? false : `${chromium} absent`, timeout: 600_000 }, async () => {
  const server = await serve();
  const profile = mkdtempSync(join(tmpdir(), 'skills-editor-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      `--user-data-dir=${profile}`],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 900 });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const { port } = server.address();
    await page.goto(`http://127.0.0.1:${port}/editor/index.html`);
    await page.waitForFunction(() => document.getElementById('status').textContent === 'ready', { timeout: 120_000 });
    assert.match(await page.$eval('#collection-name', (e) => e.textContent), /collection: skills, \d+ skills/);

    // A broken field: its diagnostic appears at its line.
    await retype(page, '#source', '---\nname: csv-cleaner\ndescription: [not, text]\n---\n# CSV\n');
    await page.waitForFunction(() => [...document.querySelectorAll('#diagnostics li.error')].some((li) => li.dataset.line === '3' && li.textContent.includes('description')));
    assert.equal(await page.$eval('#gutter div:nth-child(3)', (e) => e.className), 'error');

    // Fixed: it goes.
    await retype(page, '#source', '---\nname: csv-cleaner\ndescription: Reads PDF forms.\n---\n# PDF\n');
    await page.waitForFunction(() => document.querySelector('#diagnostics li.none')?.textContent === 'no findings');
    assert.equal(await page.$eval('#gutter div:nth-child(3)', (e) => e.className), '');
    assert.match(await page.$eval('#served', (e) => e.textContent), /csv-cleaner/);

    // A request: the draft's rank changes as the draft changes.
    await retype(page, '#requests', 'tidy messy spreadsheets\nreact login form');
    await page.waitForSelector('#ranks tr[data-request="tidy messy spreadsheets"]');
    const before = await rankOf(page, 'tidy messy spreadsheets');
    assert.equal(before, 'not matched');
    // Typing into the description line (after "Reads PDF forms.").
    await page.evaluate(() => {
      const ta = document.getElementById('source');
      const at = ta.value.indexOf('forms.') + 'forms.'.length;
      ta.focus();
      ta.setSelectionRange(at, at);
    });
    await page.keyboard.type(' Tidies messy spreadsheets.');
    await page.waitForFunction((b) => document.querySelector('#ranks tr[data-request="tidy messy spreadsheets"] td.rank')?.textContent !== b, {}, before);
    const after = await rankOf(page, 'tidy messy spreadsheets');
    console.log(`rank for "tidy messy spreadsheets": before ${before}, after ${after}`);
    assert.match(after, /^1 of \d+$/);
    // the other request's row lists the skills above the draft
    assert.match(await page.$eval('#ranks tr[data-request="react login form"]', (tr) => tr.textContent), /ui\/react/);

    // The URI and name shown are the ones the server serves (`skills/list`): category nodes
    // under their folder, as `check-skill` against the collection and the Skills extension
    // both decide it.
    const served = () => page.$eval('#served', (dl) => {
      const dt = [...dl.querySelectorAll('dt')].find((d) => d.textContent === 'Skills extension');
      return dt?.nextElementSibling?.textContent;
    });
    for (const [file, ext, name] of [['api/_index.md', 'api', 'api'], ['_root.md', 'root', 'root'], ['ui/react/auth.md', 'ui/react/auth', 'auth']]) {
      await page.select('#start-from', file);
      assert.equal(await page.$eval('#path', (e) => e.value), file);
      assert.equal(await served(), `skill://${ext}/SKILL.md (name ${name})`, file);
    }
    // A folder whose name maps to a URI another skill of the collection holds: left out, as
    // `skills/list` leaves it out, and the holder named.
    await page.select('#start-from', 'ui/react/forms/SKILL.md');
    // The skill started from is one of the collection: its audit competitors (the engine's
    // one-skill audit, in the page) are listed with the words they share.
    await page.waitForFunction(() => /competitors? of ui\/react\/forms$/.test(document.getElementById('audit-summary').textContent));
    const rivals = await page.$$eval('#competitors tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
    assert.ok(rivals.length > 0 && rivals.every((r) => r[0] !== 'ui/react/forms' && /^(\d+%|close)$/.test(r[1])), JSON.stringify(rivals));
    await retype(page, '#path', 'ui/react/Forms/SKILL.md');
    await page.waitForFunction(() => [...document.querySelectorAll('#served dd')].some((dd) => dd.textContent.startsWith('left out')));
    assert.equal(await served(), 'left out of skills/list: `skill://ui/react/forms/SKILL.md` is the skill `ui/react/forms`');
    assert.ok(await page.$$eval('#diagnostics li.warning', (lis) => lis.some((li) => li.textContent.includes('left out of the Skills extension'))));

    // Opening a folder: the engine's walk decides what is listed (skipped folder names, depth)
    // and the engine which files are read. The folder is written to the page's own file
    // system (OPFS: real directory handles) and handed to the editor as the picker's answer.
    const opened = await page.evaluate(async () => {
      const policy = window.skillsEditor.walkPolicy();
      const skill = (name) => `---\nname: ${name}\ndescription: The ${name} skill of the folder test.\n---\nBody.\n`;
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('picked', { create: true });
      async function write(path, text) {
        const parts = path.split('/');
        let d = dir;
        for (const part of parts.slice(0, -1)) d = await d.getDirectoryHandle(part, { create: true });
        const w = await (await d.getFileHandle(parts.at(-1), { create: true })).createWritable();
        await w.write(text);
        await w.close();
      }
      const chain = (n) => Array.from({ length: n }, (_, i) => `d${i}`).join('/');
      await write('kept/SKILL.md', skill('kept'));
      for (const name of policy.skipDirNames) await write(`${name}/skipped/SKILL.md`, skill('skipped'));
      // The deepest folder the walk enters holds a skill; one level deeper is listed, not entered.
      await write(`${chain(policy.maxDepth)}/SKILL.md`, skill(`d${policy.maxDepth - 1}`));
      await write(`${chain(policy.maxDepth + 1)}/SKILL.md`, skill(`d${policy.maxDepth}`));
      // Over the engine's size limit: listed, never read.
      await write('big/SKILL.md', skill('big') + 'x'.repeat(policy.maxSkillFileBytes));
      window.showDirectoryPicker = async () => dir;
      document.getElementById('open-folder').click();
      return { policy, deepest: chain(policy.maxDepth) };
    });
    await page.waitForFunction(() => /^collection: picked,/.test(document.getElementById('collection-name').textContent)
      && document.getElementById('status').textContent === 'ready', { timeout: 120_000 });
    const listed = await page.$$eval('#start-from option', (os) => os.slice(1).map((o) => o.textContent));
    console.log(`opened folder (skipped names ${opened.policy.skipDirNames.join(', ')}, depth ${opened.policy.maxDepth}): skills ${listed.join(', ')}`);
    assert.ok(opened.policy.skipDirNames.length > 0);
    assert.deepEqual(listed.sort(), [opened.deepest, 'kept'].sort());
    assert.match(await page.$eval('#collection-name', (e) => e.textContent), /collection: picked, 2 skills/);

    const out = join(js, 'test-output');
    mkdirSync(out, { recursive: true });
    const shot = join(out, 'editor.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`screenshot: ${shot}`);

    // The per-keystroke budget on the 2,621-skill corpus.
    if (existsSync(corpus)) {
      const loaded = await page.evaluate(() => window.skillsEditor.loadCollection('/corpus.json'));
      await retype(page, '#requests', ['postgres schema change without downtime', 'scan npm packages for CVEs',
        'clean a csv spreadsheet', 'react login form', 'write a rollback plan for a migration'].join('\n'));
      const bench = await page.evaluate(() => window.skillsEditor.bench(20));
      console.log(`chromium: corpus index of ${loaded.skills} skills built in ${loaded.buildMs.toFixed(0)} ms; ` +
        `lint + rank of the draft for ${bench.requests} requests: median ${bench.median.toFixed(1)} ms, max ${bench.max.toFixed(1)} ms over ${bench.runs} runs (5 plain searches: ${bench.searchMedian.toFixed(1)} ms): the ${BUDGET_MS} ms budget is ${bench.median <= BUDGET_MS ? 'met' : 'MISSED'}`);
      assert.equal(bench.requests, 5);
      assert.ok(bench.median <= failMs, `median ${bench.median} ms, over ${failMs} ms`);
      await page.screenshot({ path: join(out, 'editor-corpus.png'), fullPage: true });
    } else {
      console.log(`note: ${corpus} absent: the 50 ms budget on the corpus is not measured`);
    }
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
