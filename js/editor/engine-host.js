// The editor's host adapter: under `skills-mcp editor`, the engine runs in the host (the same
// component `serve` runs, on the configured roots) and this page calls its JSON endpoints with
// the per-run secret in a header (never a cookie). No rule here either.

const SECRET_HEADER = 'X-Skills-Editor-Secret';
const STORE = 'skills-editor-secret';

/**
 * The secret of this run: from the URL's fragment (`#secret=...`, which no request carries),
 * kept for this tab and taken out of the address bar; `null` when the page was not opened by
 * `skills-mcp editor`.
 */
export function hostSecret() {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('secret');
  if (fromHash) {
    sessionStorage.setItem(STORE, fromHash);
    history.replaceState(null, '', location.pathname + location.search);
    return fromHash;
  }
  return sessionStorage.getItem(STORE);
}

/** The host's answers in the JavaScript package's shapes: camelCase keys, lowercase severities. */
function camel(value, key) {
  if (Array.isArray(value)) return value.map((v) => camel(v));
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      const ck = k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
      out[ck] = camel(v, ck);
    }
    return out;
  }
  if ((key === 'severity' || key === 'worst') && typeof value === 'string') return value.toLowerCase();
  return value;
}

/** An error the host answered: its message, and the HTTP status. */
export class HostError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
    this.kind = status === 409 ? 'stale' : `HTTP ${status}`;
  }
}

export async function connectHost(secret) {
  async function call(method, path, body) {
    const r = await fetch(path, {
      method,
      headers: { [SECRET_HEADER]: secret, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      cache: 'no-store',
      credentials: 'omit',
    });
    const answer = await r.json().catch(() => ({ error: `${r.status} ${r.statusText}` }));
    if (!r.ok) throw new HostError(r.status, answer.error ?? `${r.status}`);
    return answer;
  }

  return {
    mode: 'host',
    /** The roots (`readOnly`: why a root cannot be written) and the caller's skills. */
    state: () => call('GET', 'api/state'),
    /** A skill file: {text, digest, readOnly}. */
    open: (root, path) => call('POST', 'api/open', { root, path }),
    /** Lint the draft and rank it, in the host: {check, ranking, rankError}. */
    async analyse(root, path, text, requests, evals = []) {
      const a = await call('POST', 'api/check', { root, path, text, requests, evals });
      if (a.error) throw Object.assign(new Error(a.error.message), { kind: a.error.kind });
      const error = (e) => (e ? Object.assign(new Error(e.message), { kind: e.kind }) : null);
      // `evals`: the draft's eval queries run (`skills-mcp eval --json`'s shape for a skill).
      return { check: camel(a.check), ranking: camel(a.ranking), rankError: error(a.rankError), evals: a.evals ?? null, evalError: error(a.evalError) };
    },
    /**
     * The audit of the skill the file is, as saved (`skills-mcp audit --json`'s entry for it:
     * {skill, competitors: [{skill, strength, shared, separating}], findings}), the host's
     * one-skill audit; `null` when the file is no skill of the index yet. `requests`: those
     * meant for it (its eval queries that should trigger it); none: derived from its text.
     */
    async audit(root, path, requests = []) {
      const a = await call('POST', 'api/audit', { root, path, requests });
      if (a.error) throw Object.assign(new Error(a.error.message), { kind: a.error.kind });
      return a.audit ?? null;
    },
    /** Save: `digest` is the file's as opened (`null`: a new file). Returns the new digest. */
    save: (root, path, text, digest) => call('POST', 'api/save', { root, path, text, digest }),
  };
}
