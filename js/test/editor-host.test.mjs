// `skills-mcp editor` (the real binary: target/release/skills-mcp, or SKILLS_MCP_BIN) in a real
// headless Chromium: open a skill from the tree, change its description, see a test request's
// rank flip as you type, its audit competitors, save, the file on disk changed and `skills-mcp search` ranks the new
// text; a stale save is refused with the reason shown; the page's API refuses a request
// without the secret. The engine runs in the host here (the page holds no engine).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const js = fileURLToPath(new URL('..', import.meta.url));
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
const binary = process.env.SKILLS_MCP_BIN ?? resolve(js, '../target/release/skills-mcp');

function write(root, files) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

const skill = (name, description, body) => `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

/** Start `skills-mcp editor --no-browser` on `root`; resolves to {child, url} once it printed its URL. */
function startEditor(root, home) {
  const child = spawn(binary, ['editor', '--no-browser', '--no-default-roots', '--root', root], {
    env: { ...process.env, HOME: home, SKILLS_MCP_INDEX_CACHE: 'off', SKILLS_DIR: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = [];
  createInterface({ input: child.stderr }).on('line', (l) => log.push(l));
  return new Promise((ok, ko) => {
    createInterface({ input: child.stdout }).once('line', (url) => ok({ child, url: url.trim(), log }));
    child.once('exit', (code) => ko(new Error(`skills-mcp editor exited (${code}): ${log.join('\n')}`)));
  });
}

async function retype(page, selector, text) {
  await page.click(selector);
  await page.keyboard.down('Control');
  await page.keyboard.press('a');
  await page.keyboard.up('Control');
  await page.keyboard.press('Backspace');
  await page.keyboard.type(text);
}

const rankOf = (page, request) => page.$eval(`#ranks tr[data-request="${request}"] td.rank`, (td) => td.textContent);

// Skipped with the reason where Chromium or the binary is absent; under CI, a failure instead.
const absent = !existsSync(chromium) ? `${chromium} absent` : !existsSync(binary) ? `${binary} absent (cargo build --release -p skills-mcp)` : false;
const skip = process.env.CI ? false : absent;

test('skills-mcp editor in headless Chromium: open, edit, rank, save', { skip, timeout: 300_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'skills-editor-root-'));
  const home = mkdtempSync(join(tmpdir(), 'skills-editor-home-'));
  const profile = mkdtempSync(join(tmpdir(), 'skills-editor-chromium-'));
  write(root, {
    'data/csv/SKILL.md': skill('csv', 'Clean messy CSV files.', '# CSV\n\nFix the delimiters.'),
    'docs/pdf/SKILL.md': skill('pdf', 'Extract text from PDF files.', '# PDF\n\nUse pdftotext.'),
    'ui/forms/SKILL.md': skill('forms', 'Web forms and validation.', '# Forms'),
  });
  const { child, url, log } = await startEditor(root, home);
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      `--user-data-dir=${profile}`],
  });
  try {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/#secret=[A-Za-z0-9_-]{43}$/);
    const page = await browser.newPage();
    await page.setViewport({ width: 1500, height: 900 });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(url);
    await page.waitForFunction(() => document.getElementById('status').textContent === 'ready', { timeout: 60_000 });
    // The secret left the address bar (kept for this tab only).
    assert.equal(await page.evaluate(() => location.hash), '');
    assert.match(await page.$eval('#collection-name', (e) => e.textContent), /^3 skills in 1 root$/);

    // Open a skill from the tree.
    await page.click('#tree a.skill[data-file="data/csv/SKILL.md"]');
    await page.waitForFunction(() => document.getElementById('path').value === 'data/csv/SKILL.md'
      && document.getElementById('source').value.includes('Clean messy CSV files.'));
    await page.waitForFunction(() => document.querySelector('#diagnostics li.none')?.textContent === 'no findings');
    assert.match(await page.$eval('#served', (e) => e.textContent), /skill:\/\/data\/csv\/SKILL\.md \(name csv\)/);

    // Its audit competitors (the host's one-skill audit): the PDF skill shares "files".
    await page.waitForFunction(() => /competitors? of data\/csv$/.test(document.getElementById('audit-summary').textContent));
    const rivals = await page.$$eval('#competitors tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
    const pdfRival = rivals.find((r) => r[0] === 'docs/pdf');
    assert.ok(pdfRival, JSON.stringify(rivals));
    assert.match(pdfRival[1], /^(\d+%|close)$/);
    assert.match(pdfRival[2], /files/, JSON.stringify(rivals));

    // An eval query (should trigger): it fails against the saved description...
    assert.equal(await page.$eval('#eval-file', (e) => e.textContent), 'data/csv/evals/eval_queries.json');
    await page.click('#add-eval');
    await page.keyboard.type('tidy spreadsheet columns');
    const evalPass = () => page.$eval('#evals tbody tr td.pass', (td) => td.textContent);
    await page.waitForFunction(() => document.querySelector('#evals tbody tr td.pass')?.textContent === 'FAIL');
    // A test request: the skill does not match it, then does, first, as the description changes.
    await retype(page, '#requests', 'tidy spreadsheet columns');
    await page.waitForSelector('#ranks tr[data-request="tidy spreadsheet columns"]');
    const before = await rankOf(page, 'tidy spreadsheet columns');
    assert.equal(before, 'not matched');
    await page.evaluate(() => {
      const ta = document.getElementById('source');
      const at = ta.value.indexOf('CSV files.') + 'CSV files.'.length;
      ta.focus();
      ta.setSelectionRange(at, at);
    });
    await page.keyboard.type(' Tidies spreadsheet columns.');
    await page.waitForFunction(() => /^1 of \d+$/.test(document.querySelector('#ranks tr[data-request="tidy spreadsheet columns"] td.rank')?.textContent ?? ''));
    // ...and passes against the draft, as you type, with the outcome said.
    await page.waitForFunction(() => document.querySelector('#evals tbody tr td.pass')?.textContent === 'pass');
    assert.match(await page.$eval('#evals tbody tr td.outcome', (td) => td.textContent), /^matched \(rank 1\)$/);
    console.log(`host editor: rank for "tidy spreadsheet columns": before ${before}, after ${await rankOf(page, 'tidy spreadsheet columns')}; eval query: FAIL -> ${await evalPass()}`);
    assert.equal(await page.$eval('#save-state', (e) => e.textContent), 'unsaved changes');

    // Save: the file on disk is the text in the editor, and `skills-mcp search` ranks it.
    await page.click('#save');
    await page.waitForFunction(() => document.getElementById('save-state').textContent.startsWith('saved'));
    const onDisk = readFileSync(join(root, 'data/csv/SKILL.md'), 'utf8');
    assert.equal(onDisk, await page.$eval('#source', (e) => e.value));
    assert.match(onDisk, /description: Clean messy CSV files\. Tidies spreadsheet columns\./);
    const search = spawnSync(binary, ['search', '--json', '--no-default-roots', '--root', root, 'tidy spreadsheet columns'], {
      env: { ...process.env, HOME: home, SKILLS_MCP_INDEX_CACHE: 'off', SKILLS_DIR: '' }, encoding: 'utf8',
    });
    assert.equal(JSON.parse(search.stdout).results[0].skill_path, 'data/csv', search.stderr);

    // The eval queries saved to the skill's eval file, in the format `skills-mcp eval` reads.
    await page.click('#save-evals');
    await page.waitForFunction(() => document.getElementById('eval-state').textContent === 'saved');
    assert.deepEqual(JSON.parse(readFileSync(join(root, 'data/csv/evals/eval_queries.json'), 'utf8')),
      [{ query: 'tidy spreadsheet columns', should_trigger: true }]);

    // Stale: another writer changed the file; the save is refused and says why; the disk keeps
    // the other writer's text.
    const theirs = onDisk.replace('Fix the delimiters.', 'Fix the delimiters and the quoting.');
    writeFileSync(join(root, 'data/csv/SKILL.md'), theirs);
    await page.focus('#source');
    await page.keyboard.type(' Also trims cells.');
    // The first save keeps its button disabled until its refresh of the page has finished.
    await page.waitForFunction(() => !document.getElementById('save').disabled);
    await page.click('#save');
    await page.waitForFunction(() => document.getElementById('save-error').textContent !== ''
      || document.getElementById('save-state').textContent.startsWith('saved ('), { timeout: 90_000 });
    const said = await page.$eval('#save-error', (e) => e.textContent);
    assert.match(said, /changed on disk/, `${said} | ${await page.$eval('#save-state', (e) => e.textContent)} | ${log.join(" / ")}`);
    assert.equal(readFileSync(join(root, 'data/csv/SKILL.md'), 'utf8'), theirs);

    // The API without the secret, from the page itself: refused.
    const status = await page.evaluate(async () => (await fetch('api/state')).status);
    assert.equal(status, 401);

    const out = join(js, 'test-output');
    mkdirSync(out, { recursive: true });
    await page.screenshot({ path: join(out, 'editor-host.png'), fullPage: true });
    console.log(`screenshot: ${join(out, 'editor-host.png')}`);
    assert.deepEqual(errors, []);
    assert.ok(log.some((l) => l.includes('editor: saved')), log.join('\n'));
  } finally {
    await browser.close();
    child.kill();
    for (const d of [root, home, profile]) rmSync(d, { recursive: true, force: true });
  }
});
