// Builds the JavaScript package from the engine component (one command: `npm --prefix js run build`).
//
// 1. the component: `cargo build -p skills-engine --release --target wasm32-wasip2` into
//    target/guest (the very build `host/build.rs` runs, so after a host build it is up to date
//    at once); SKILLS_ENGINE_WASM=path/to/skills_engine.wasm uses a prebuilt one instead;
// 2. `jco transpile --instantiation sync` into dist/engine (sync instantiation from a module
//    compiled once: after a trap, a fresh instance is made at once, as the native host does);
// 3. `jco types wit/` into dist/types (the WIT contract as documented TypeScript);
// 4. the bundled skills (skills/) as dist/bundled-skills.json, for the browser editor.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const js = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(js, '..');
const dist = join(js, 'dist');
const jco = join(js, 'node_modules', '@bytecodealliance', 'jco', 'dist', 'jco.js');

function run(cmd, args, opts = {}) {
  console.error(`$ ${cmd} ${args.join(' ')}`);
  execFileSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
}

let wasm = process.env.SKILLS_ENGINE_WASM;
if (!wasm) {
  run('cargo', ['build', '--package', 'skills-engine', '--release', '--target', 'wasm32-wasip2',
    '--target-dir', join(repo, 'target', 'guest')], { cwd: repo });
  wasm = join(repo, 'target', 'guest', 'wasm32-wasip2', 'release', 'skills_engine.wasm');
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
copyFileSync(wasm, join(dist, 'skills_engine.component.wasm'));
run(process.execPath, [jco, 'transpile', wasm, '--instantiation', 'sync', '--name', 'skills_engine',
  '--no-nodejs-compat', '--quiet', '--out-dir', join(dist, 'engine')]);
run(process.execPath, [jco, 'types', join(repo, 'wit'), '--world-name', 'skills-engine',
  '--out-dir', join(dist, 'types')]);

// The bundled skills, as one JSON file: {name, files: [{path, text}]} (text files only).
const skills = join(repo, 'skills');
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p);
    else if (st.isFile()) {
      const bytes = readFileSync(p);
      const text = bytes.toString('utf8');
      if (Buffer.from(text, 'utf8').equals(bytes)) {
        files.push({ path: relative(skills, p).split(sep).join('/'), text });
      }
    }
  }
})(skills);
writeFileSync(join(dist, 'bundled-skills.json'), JSON.stringify({ name: 'skills', files }));
console.error(`built ${relative(repo, dist)}: engine, types, ${files.length} bundled files`);
