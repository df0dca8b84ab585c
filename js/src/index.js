// @skills-mcp/engine: the skills-mcp engine component for JavaScript (Node and browsers).
//
// The engine holds every rule about skills; this file only hands it listings and file bytes
// and converts its answers to plain JavaScript (numbers, no BigInt; errors as EngineError).
// See ../../docs/javascript.md.
import { instantiate } from '../dist/engine/skills_engine.js';
import { wasiImports } from './wasi.js';

export { walkRoot } from './walk.js';

const CORE_FILES = ['skills_engine.core.wasm', 'skills_engine.core2.wasm', 'skills_engine.core3.wasm'];

/** Default engine settings (the `matching` section's defaults). */
export const DEFAULT_CONFIG = Object.freeze({
  algorithm: 'ranked',
  minScore: 0.2,
  ambiguityThreshold: 0.1,
  maxResults: 3,
});

/**
 * An error the engine reported (`kind` is the WIT `error` case), a trap (`kind: 'trap'`), or a
 * call to an export the loaded engine does not have (`kind: 'missing-export'`: the package and
 * `dist/engine` do not match; nothing ran and nothing is restarted).
 */
export class EngineError extends Error {
  constructor(kind, message, detail) {
    super(message);
    this.name = 'EngineError';
    this.kind = kind;
    if (detail !== undefined) this.detail = detail;
  }
}

/** BigInt -> number, recursively (u64 sizes are far below 2^53). */
function plain(v) {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Uint8Array) return v;
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = plain(x);
    return out;
  }
  return v;
}

function engineError(e) {
  const p = e && Object.prototype.hasOwnProperty.call(e, 'payload') ? e.payload : undefined;
  if (p && typeof p === 'object' && typeof p.tag === 'string') {
    const val = plain(p.val);
    let message;
    if (p.tag === 'too-large') message = `${val.path} is ${val.size} bytes, over the limit of ${val.limit} bytes`;
    else if (p.tag === 'not-ready') message = 'the index is not finished';
    else message = String(val);
    return new EngineError(p.tag, message, p.tag === 'too-large' ? val : undefined);
  }
  return null;
}

/** Thrown by `exported` before any engine code runs; `_call` turns it into an EngineError. */
class MissingExport extends Error {
  constructor(name) {
    super(`the engine has no export \`${name}\` (js/dist/engine does not match js/src: run \`npm run build\`)`);
    this.name = 'MissingExport';
  }
}

/** The function `name` of `target` (engine exports or an index handle), bound to it. */
function exported(target, name) {
  const f = target == null ? undefined : target[name];
  if (typeof f !== 'function') throw new MissingExport(name);
  return f.bind(target);
}

function toBytes(data) {
  if (typeof data === 'string') return new TextEncoder().encode(data);
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  throw new TypeError('file contents must be a string, a Uint8Array or an ArrayBuffer');
}

function toConfig(config = {}) {
  const c = { ...DEFAULT_CONFIG, ...config };
  return {
    algorithm: c.algorithm,
    minScore: c.minScore,
    ambiguityThreshold: c.ambiguityThreshold,
    maxResults: c.maxResults,
  };
}

function toEntries(entries) {
  return entries.map((e) => ({ path: e.path, kind: e.kind ?? 'file', size: BigInt(e.size ?? 0) }));
}

async function loadCoreModules() {
  const base = new URL('../dist/engine/', import.meta.url);
  if (base.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return Promise.all(CORE_FILES.map(async (f) => WebAssembly.compile(await readFile(new URL(f, base)))));
  }
  return Promise.all(CORE_FILES.map((f) => WebAssembly.compileStreaming(fetch(new URL(f, base)))));
}

/**
 * Load the engine: compile its core modules once and make an instance.
 * @param {{ onStderr?: (line: string) => void, onRestart?: (why: Error) => void,
 *   wrapFiles?: (read: Function) => Function, wrapExports?: (exports: object) => object }} [options]
 *   `wrapFiles` and `wrapExports` are for tests: they wrap the engine's `files.read` import (to
 *   inject faults past the package's own guard) and the exports of each new instance.
 */
export async function loadEngine(options = {}) {
  const modules = await loadCoreModules();
  return new Engine(Object.fromEntries(CORE_FILES.map((f, i) => [f, modules[i]])), options);
}

/** The engine: an instance of the component, remade after a trap. */
export class Engine {
  #modules;
  #options;
  #exports = null;
  #generation = 0;
  #restarts = 0;
  /** The index whose `files.read` calls are being answered. */
  #current = null;

  constructor(modules, options = {}) {
    this.#modules = modules;
    this.#options = options;
    this.#instantiate();
  }

  #instantiate() {
    const imports = wasiImports(this.#options.onStderr);
    const files = {
      // The engine's `files.read`: never throws (a throw would unwind through the engine); a
      // failing read is the WIT error, which costs only that call.
      read: (root, path) => {
        try {
          const index = this.#current;
          if (!index) return { tag: 'err', val: 'no index is being queried' };
          return { tag: 'ok', val: index._read(root, path) };
        } catch (e) {
          return { tag: 'err', val: String(e && e.message ? e.message : e) };
        }
      },
    };
    if (this.#options.wrapFiles) files.read = this.#options.wrapFiles(files.read);
    imports['skills-mcp:engine/files'] = files;
    imports['skills-mcp:engine/files@0.1.0'] = files;
    const instance = instantiate((name) => this.#modules[name], imports);
    const exports = instance.engine ?? instance['skills-mcp:engine/engine@0.1.0'] ?? instance['skills-mcp:engine/engine'];
    this.#exports = this.#options.wrapExports ? this.#options.wrapExports(exports) : exports;
    this.#generation += 1;
  }

  /** How many times a trap made the engine start a fresh instance. */
  get restarts() { return this.#restarts; }

  /** @internal */
  get _generation() { return this.#generation; }

  /** @internal Run `f(exports)` for `index` (or none); engine errors become EngineError, a trap a fresh instance. */
  _call(index, f) {
    const previous = this.#current;
    this.#current = index;
    try {
      return plain(f(this.#exports));
    } catch (e) {
      // Found missing before the engine ran: a mismatch of package and build, not a trap.
      if (e instanceof MissingExport) throw new EngineError('missing-export', e.message);
      const known = engineError(e);
      if (known) throw known;
      // A trap, or an exception that unwound through the engine (its state is then
      // inconsistent: the next call would panic): this instance is done. Like the native host,
      // answer this call with an error and go on with a fresh instance.
      this.#restarts += 1;
      this.#instantiate();
      this.#options.onRestart?.(e);
      throw new EngineError('trap', `the engine trapped (${e && e.message ? e.message : e}); it was restarted on a fresh instance, indexes are rebuilt on their next use`);
    } finally {
      this.#current = previous;
    }
  }

  /** How hosts must walk a root (numbers). */
  walkPolicy() {
    return this._call(null, (x) => exported(x, 'getWalkPolicy')());
  }

  /**
   * One folder of a walk, by the engine's rules (WIT `walk-folder`; `walkRoot` of walk.js
   * drives it): which `children` ([{name, kind: 'file'|'directory'|'symlink'|{special}, size}],
   * any order) of the folder `path` are listed and in which order, which folders to walk next.
   */
  walkFolder(root, path, depth, listed, children) {
    const kids = children.map((c) => ({
      name: String(c.name),
      kind: typeof c.kind === 'object' && c.kind !== null ? { tag: 'special', val: String(c.kind.special) } : { tag: c.kind },
      size: BigInt(c.size ?? 0),
    }));
    return this._call(null, (x) => x.walkFolder(root, path, depth, listed, kids));
  }

  /** Check a relative file argument; returns it, or throws `invalid-path`. */
  validateRelativePath(path) {
    return this._call(null, (x) => exported(x, 'validateRelativePath')(path));
  }

  /**
   * Check one skill file from its contents, without an index.
   * @param {string} path path relative to its root (`pdf/SKILL.md`, `ui/react/forms.md`)
   * @param {string|Uint8Array} contents
   * @param {{ listing?: Array<{path: string, kind?: string, size?: number}>, config?: object }} [options]
   */
  checkSkill(path, contents, options = {}) {
    const bytes = toBytes(contents);
    const listing = toEntries(options.listing ?? []);
    return this._call(null, (x) => exported(x, 'checkSkill')(toConfig(options.config), path, bytes, listing));
  }

  /**
   * Trigger evals: parse and check an eval file (`evals/eval_queries.json`, a JSON array of
   * `{"query": string, "should_trigger": boolean}`): `{queries, problems}`, `queries` empty when
   * there are problems (`{entry?, line?, column?, message}`: the 0-based entry, or the line and
   * column of a JSON syntax error).
   * @param {string|Uint8Array} contents
   */
  parseEvalQueries(contents) {
    const bytes = toBytes(contents);
    return this._call(null, (x) => {
      const parse = exported(x, 'parseEvalQueries');
      try {
        return { queries: parse(bytes), problems: [] };
      } catch (e) {
        // The WIT error of this call is the list of problems, not an engine `error`.
        if (e && Object.prototype.hasOwnProperty.call(e, 'payload') && Array.isArray(e.payload)) {
          return { queries: [], problems: e.payload };
        }
        throw e;
      }
    });
  }

  /**
   * Build an index of `roots` (lowest precedence first).
   * @param {Array<Root>} roots each `{name, entries, read}`; `read(path)` returns the bytes
   *   (string or Uint8Array) synchronously (the engine reads bodies on demand during queries)
   * @param {object} [config] engine settings (DEFAULT_CONFIG)
   */
  buildIndex(roots, config = {}) {
    return new Index(this, roots, toConfig(config));
  }
}

/** The questions a finished index, or a view of one, answers. */
export class IndexQueries {
  /** Number of skills. */
  get size() { return this._query('len'); }
  /** Ranked results, best first: `{skillPath, name, description, score, matched}`. */
  search(query, limit = 10) { return this._query('search', query, limit); }
  /** Per-field, per-term account of one skill's score for a query. */
  explain(query, skillPath) { return this._query('explain', query, skillPath); }
  /** Route a request: `{outcome: 'no-match'}`, `{outcome: 'ambiguous', candidates}` or `{outcome: 'matched', hit}`. */
  route(context) {
    const o = this._query('route', context);
    if (o.tag === 'matched') return { outcome: 'matched', hit: o.val };
    if (o.tag === 'ambiguous') return { outcome: 'ambiguous', candidates: o.val };
    return { outcome: 'no-match' };
  }
  /** Content with inheritance applied, and every asset and script. */
  resolve(skillPath) { return this._query('resolve', skillPath); }
  /** One skill by skill path or unique name. */
  get(pathOrName) { return this._query('get', pathOrName); }
  /** Closest skill paths to a mistyped one. */
  suggest(pathOrName, limit = 3) { return this._query('suggest', pathOrName, limit); }
  /** Every skill, sorted by skill path. */
  skills() { return this._query('skills'); }
  /** A page of `{skillPath, name, description}`. */
  summaries(start = 0, count = 100) { return this._query('summaries', start, count); }
  /** The skill tree (flattened; `children` are indexes), optionally below `path`. */
  list(path) { return this._query('tree', path); }
  /** Which file an asset or script request refers to. */
  locateAsset(skillPath, file) { return this._query('locateAsset', skillPath, file); }
  /** Every file of a skill, `SKILL.md` first. */
  manifest(skillPath) { return this._query('manifest', skillPath); }
  /**
   * The `SKILL.md` the Skills extension serves for a skill (by skill path), as text: the file
   * with `name` set to the served name (generated for a hierarchical skill).
   */
  skillMd(skillPath) {
    return new TextDecoder().decode(this._query('extensionSkillMd', skillPath).bytes);
  }
  /** Every examined file with its findings (what `skills-mcp validate` prints). */
  lint() { return this._query('reports'); }
  /** Only the findings. */
  diagnostics() { return this._query('diagnostics'); }
  /**
   * Rank a draft skill among this collection for each request, as if it were added to it
   * (replacing the skill of the same path), without rebuilding it.
   */
  scoreDraft(path, contents, requests, limit = 10) {
    return this._query('scoreDraft', path, toBytes(contents), requests, limit);
  }
  /**
   * Trigger evals: where the skill's eval file is (`evals/eval_queries.json` in its resource
   * folder): `{skillPath, root, path, exists}`.
   */
  evalFile(skillPath) { return this._query('evalFile', skillPath); }
  /** Trigger evals: the eval files that exist, one per skill that has one. */
  evalFiles() { return this._query('evalFiles'); }
  /**
   * Trigger evals: run `queries` (`[{query, should_trigger}]` as in the file, or
   * `shouldTrigger`) for the skill `skillPath`, each routed as `route` routes a context:
   * `{skillPath, passed, total, train: {passed, total}, validation: {passed, total}, queries:
   * [{query, shouldTrigger, split: 'train'|'validation', outcome: 'matched'|'other'|'ambiguous'|
   * 'no_match', winner (the matched skill, null unless matched or other), candidates (when
   * ambiguous), rank (among the hits routing scored, or null), passed}]}`.
   * @param {{ acceptAmbiguous?: boolean }} [options] count an ambiguous answer naming the skill as triggering
   */
  evaluate(skillPath, queries, options = {}) {
    return skillEval(this._query('evaluate', skillPath, toEvalQueries(queries), Boolean(options.acceptAmbiguous)));
  }
  /**
   * Trigger evals for a draft skill file (`path` relative to its root, as for `scoreDraft`), as
   * if it were in this collection (replacing the skill of its path) without a rebuild: what
   * an editor shows as the author types. The result as `evaluate` gives it.
   */
  evaluateDraft(path, contents, queries, options = {}) {
    return skillEval(this._query('evaluateDraft', path, toBytes(contents), toEvalQueries(queries), Boolean(options.acceptAmbiguous)));
  }
  /**
   * `Engine.checkSkill` against this collection: the same findings, and what the Skills
   * extension's `skills/list` does with the file in it (as if it replaced the skill of its
   * path): `extPath` where it is listed, or `leftOut` saying why not (another skill holds that
   * URI, a limit with its figures, no valid name).
   * @param {{ listing?: Array<{path: string, kind?: string, size?: number}> }} [options]
   *   the entries of the skill's folder (their sizes count toward the limits)
   */
  checkSkill(path, contents, options = {}) {
    return this._query('checkSkill', path, toBytes(contents), toEntries(options.listing ?? []));
  }
  /**
   * Collection health (what `skills-mcp audit` prints), worst first: per skill `{skillPath,
   * requests, derived, competitors: [{skillPath, strength, shared, separating}], findings:
   * [{kind: 'unreachable'|'duplicate'|'hijacker', message}]}`.
   * @param {Array<{skillPath: string, requests: string[]}>} [requests] the requests meant for
   *   some skills (their eval queries), instead of those derived from their text
   */
  audit(requests = []) {
    const given = requests.map((r) => ({ skillPath: String(r.skillPath), requests: toList(r.requests) }));
    return this._query('audit', given);
  }
  /** The requests `audit` derives from a skill's own text. */
  auditRequests(skillPath) { return this._query('auditRequests', skillPath); }
  /**
   * One skill's audit (for an editor): its entry of `audit()` (no `hijacker` finding, which
   * needs every skill's requests) at one skill's cost.
   * @param {string[]} [requests] the requests meant for it (its eval queries); none: derived
   */
  auditOne(skillPath, requests = []) { return this._query('auditOne', skillPath, toList(requests)); }
}

/** Eval queries as the engine takes them, from `{query, should_trigger}` (the file's) or `{query, shouldTrigger}`. */
function toEvalQueries(queries) {
  return queries.map((q) => ({
    query: String(q.query),
    shouldTrigger: Boolean(q.shouldTrigger ?? q.should_trigger),
  }));
}

/** `skill-eval` in the shape `skills-mcp eval --json` prints (camelCase keys). */
function skillEval(e) {
  return {
    skillPath: e.skillPath,
    passed: e.passed,
    total: e.total,
    train: { passed: e.trainPassed, total: e.trainTotal },
    validation: { passed: e.validationPassed, total: e.validationTotal },
    queries: e.results.map((r) => {
      const o = r.outcome;
      return {
        query: r.query,
        shouldTrigger: r.shouldTrigger,
        split: r.split,
        outcome: o.tag === 'no-match' ? 'no_match' : o.tag,
        winner: o.tag === 'matched' ? e.skillPath : o.tag === 'other' ? o.val : null,
        candidates: o.tag === 'ambiguous' ? o.val : [],
        rank: r.rank ?? null,
        passed: r.passed,
      };
    }),
  };
}

function toList(xs) {
  return (xs ?? []).map(String);
}

function toRule(r) {
  return {
    skills: toList(r.skills), roots: toList(r.roots), groups: toList(r.groups),
    subjects: toList(r.subjects), scopes: toList(r.scopes),
  };
}

function toCaller(c) {
  if (c === 'unrestricted') return { tag: 'unrestricted' };
  const id = c ?? {};
  return {
    tag: 'identity',
    val: { subject: id.subject == null ? undefined : String(id.subject), groups: toList(id.groups), scopes: toList(id.scopes) },
  };
}

/** A finished index of some roots. */
export class Index extends IndexQueries {
  #engine;
  #roots;
  #config;
  #handle = null;
  #generation = 0;
  /** Files that could not be read while building: `{root, path, error}`. */
  readErrors = [];

  #rules = null;
  #builds = 0;

  constructor(engine, roots, config) {
    super();
    this.#engine = engine;
    this.#roots = roots.map((r) => ({ name: String(r.name ?? ''), entries: r.entries ?? [], read: r.read }));
    this.#config = config;
    this.#build();
  }

  /** @internal */
  _read(root, path) {
    const r = this.#roots[root];
    if (!r) throw new Error(`no root ${root}`);
    return toBytes(r.read(path));
  }

  #build() {
    this.readErrors = [];
    this.#handle = null;
    const handle = this.#engine._call(this, (x) => {
      if (typeof x?.Index !== 'function') throw new MissingExport('Index');
      return new x.Index(this.#config);
    });
    this.#generation = this.#engine._generation;
    // `add-files` batches as large as the engine's walk policy says.
    const { maxBatchBytes, maxBatchFiles } = this.#engine.walkPolicy();
    this.#roots.forEach((root, id) => {
      const wanted = this.#engine._call(this, () => exported(handle, 'addRoot')(root.name, toEntries(root.entries)));
      let batch = [];
      let size = 0;
      const flush = () => {
        if (batch.length) {
          const files = batch;
          this.#engine._call(this, () => exported(handle, 'addFiles')(id, files));
        }
        batch = [];
        size = 0;
      };
      for (const path of wanted) {
        let bytes;
        try {
          bytes = toBytes(root.read(path));
        } catch (e) {
          // left out: the engine reports it as never supplied
          this.readErrors.push({ root: id, path, error: String(e && e.message ? e.message : e) });
          continue;
        }
        if (batch.length && (size + bytes.length > maxBatchBytes || batch.length >= maxBatchFiles)) flush();
        batch.push({ path, bytes });
        size += bytes.length;
      }
      flush();
    });
    this.#engine._call(this, () => exported(handle, 'finish')());
    // Rules set earlier apply to the rebuilt index too (they were accepted then).
    if (this.#rules !== null) {
      const rules = this.#rules;
      this.#engine._call(this, () => exported(handle, 'setAccess')(rules));
    }
    this.#handle = handle;
    this.#builds += 1;
  }

  /** @internal Call the export `name` of this index's handle with `args` (rebuilt first after a trap). */
  _query(name, ...args) {
    this._current();
    const handle = this.#handle;
    return this.#engine._call(this, () => exported(handle, name)(...args));
  }

  /** @internal The index made current (rebuilt after a trap); how many builds it took so far. */
  _current() {
    if (this.#handle === null || this.#generation !== this.#engine._generation) this.#build();
    return this.#builds;
  }

  /** @internal Run `f` on the engine for this index. */
  _run(f) {
    return this.#engine._call(this, f);
  }

  /**
   * Set the operator's access rules (`[{skills, roots, groups, subjects, scopes}]`, lists of
   * strings, any left out empty) and check them: `[{key, severity, message}]`, keyed like the
   * configuration (`access.rules[0].skills[1]`). With an `error` finding the rules are not
   * applied. Rules apply to `view`s made afterwards (and to this index after a rebuild).
   */
  setAccess(rules) {
    const converted = rules.map(toRule);
    const findings = this._query('setAccess', converted);
    if (!findings.some((f) => f.severity === 'error')) this.#rules = converted;
    return findings;
  }

  /**
   * The index as `caller` sees it (`'unrestricted'`, or `{subject, groups, scopes}`; `{}` is
   * anonymous): every query answers as if the skills hidden from it did not exist.
   */
  view(caller) {
    return new IndexView(this, toCaller(caller));
  }

  /** The skills `caller` may not see: `[{path, rules}]` (indices of the rules selecting each). */
  hidden(caller) {
    return this._query('hidden', toCaller(caller)).map((h) => ({ path: h.path, rules: Array.from(h.rules) }));
  }

}

/** An index as one caller sees it (`Index.view`); made again after the index is rebuilt. */
export class IndexView extends IndexQueries {
  #index;
  #caller;
  #handle = null;
  #builds = -1;

  constructor(index, caller) {
    super();
    this.#index = index;
    this.#caller = caller;
  }

  /** @internal */
  _query(name, ...args) {
    const builds = this.#index._current();
    if (this.#handle === null || this.#builds !== builds) {
      this.#handle = this.#index._query('view', this.#caller);
      this.#builds = builds;
    }
    const handle = this.#handle;
    return this.#index._run(() => exported(handle, name)(...args));
  }
}

/**
 * A root held in memory: `files` is `[{path, text}]` or `[{path, bytes}]` (paths relative,
 * `/`-separated). Folders are derived by the engine from the file paths.
 */
export function fromFiles(name, files) {
  const byPath = new Map(files.map((f) => [f.path, f.bytes ?? f.text ?? '']));
  return {
    name,
    entries: files.map((f) => ({ path: f.path, kind: 'file', size: toBytes(byPath.get(f.path)).length })),
    read(path) {
      if (!byPath.has(path)) throw new Error(`${path}: no such file`);
      return byPath.get(path);
    },
  };
}
