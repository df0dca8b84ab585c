//! The full default configuration with a comment on every key (`skills-mcp example-config`).
//! The matching values are filled in from the engine's defaults, where they are written once.

/// The commented template; `{min_score}`, `{ambiguity_threshold}` and `{max_results}` are
/// filled in by [`example_config`].
const TEMPLATE: &str = r#"# skills-mcp configuration (every value below is the default).
#
# Pass it with `--config FILE`. A skills root's own `config.yaml` is content, not configuration
# of the server: there only `matching`, lower script and asset limits, `scripts.enabled: false`
# and a narrower `scripts.allowed_extensions` apply; any other key is ignored with a warning.
# Precedence, lowest first: defaults < config.yaml of each root (in root order)
#   < --config FILE < environment variables < command-line flags.
# Environment: ANALYTICS_ENDPOINT, SKILLS_MCP_DATABASE_URL, SKILLS_MCP_SUBJECT_KEY,
#   REFRESH_INTERVAL_MINUTES, SKILLS_DIR, SKILLS_REPO, SKILLS_BRANCH, GITHUB_TOKEN. Unknown keys are warned about and ignored.

# How a request is matched to skills.
matching:
  # Ranking: `ranked` (fielded BM25 with stemming, scores 0..1) or `keywords` (the
  # keyword-overlap scoring of the original spec).
  algorithm: ranked
  # Results scoring below this are dropped (0.0-1.0).
  min_score: {min_score}
  # When the two best scores are closer than this, the request is ambiguous (0.0-1.0).
  ambiguity_threshold: {ambiguity_threshold}
  # Most candidates returned for an ambiguous request (1-1000).
  max_results: {max_results}

# Keeping the index fresh.
refresh:
  # Periodically pull the git source (when `sources.repo` is set) and reindex.
  enabled: true
  # Minutes between two periodic refreshes (at least 1).
  interval_minutes: 15
  # Watch local roots and reindex when a file changes (live reload).
  watch: true
  # Quiet time after the last change before reindexing, in milliseconds (10-60000).
  debounce_ms: 300

# Server-side scripts (`run_script`; only scripts declared `execution: server`).
scripts:
  # Global switch for running scripts on the server.
  enabled: true
  # Seconds before a script's process group is killed (at least 1).
  timeout_seconds: 60
  # Cap on each of stdout and stderr, in bytes.
  max_output_bytes: 1048576
  # Extensions a script may have.
  allowed_extensions:
    - .sh
    - .ts
    - .js
    - .py
  # Program (and arguments) that runs a script, by extension; no shell is involved.
  runners:
    # JavaScript.
    .js: node
    # Python.
    .py: python3
    # Shell scripts.
    .sh: bash
    # TypeScript.
    .ts: npx tsx
  # Most scripts running at once; beyond, run_script answers "busy" (1-1024).
  max_concurrent: 4
  # Variables of the server's environment passed to scripts, besides PATH, HOME, LANG, LC_ALL
  # and TMPDIR (nothing else of the server's environment reaches a script).
  env_passthrough: []
  # Seconds between SIGTERM and SIGKILL to the script's process group at the timeout.
  kill_grace_seconds: 5

# Assets served by `get_asset`.
assets:
  # Largest asset returned, in bytes.
  max_size_bytes: 1048576
  # Largest text asset returned inline, in bytes.
  inline_text_max_bytes: 10240

# Usage analytics (events are POSTed in batches; a local JSONL file buffers failures).
analytics:
  # Send events (needs an endpoint; ANALYTICS_ENDPOINT sets both).
  enabled: false
  # http:// or https:// URL of the endpoint.
  endpoint: ""
  # Seconds between two batches.
  flush_interval_seconds: 30
  # Events not delivered yet wait here (JSONL), and are sent with the next batch.
  buffer_path: ~/.skills-mcp/analytics-buffer.jsonl
  # Most events kept waiting; the oldest are dropped beyond, and the count is reported.
  max_buffer_events: 10000
  # Seconds a POST may take.
  timeout_seconds: 10
  # The usage store, read by `skills-mcp stats` (independent of the endpoint above).
  # A SQLite file ("" = $XDG_STATE_HOME/skills-mcp/usage.sqlite3), or off.
  store: ""
  # postgres://user:password@host/db?sslmode=verify-full: several replicas write to one
  # database instead of the file (SKILLS_MCP_DATABASE_URL sets it).
  database_url: ""
  # Keep the request text of no_match, ambiguous and skill_served events.
  record_queries: true
  # The caller's authenticated subject on events: true, hash (keyed with subject_key), false.
  record_subjects: true
  # The secret of record_subjects: hash (SKILLS_MCP_SUBJECT_KEY sets it).
  subject_key: ""
  # Events older than this many days are deleted from the store (0 keeps everything).
  retention_days: 90
  # Put beside server_id on events ("" = SKILLS_MCP_REPLICA_ID, else the host name).
  replica_id: ""

# Where skills come from.
sources:
  # Use ~/.claude/skills, ~/.agents/skills, ./.claude/skills, ./.agents/skills and ./skills
  # when they exist.
  default_roots: true
  # More skill roots, after the standard ones (SKILLS_DIR and --root come after these): a
  # path, or `{path: DIR, name: NAME}` naming it for access rules (default: the folder's name;
  # names are unique, a repeated derived name gets -2, -3...).
  roots: []
  # Git URL of a skills repository (SKILLS_REPO); empty for none.
  repo: ""
  # Branch of the repository to track (SKILLS_BRANCH).
  branch: main
  # Folder of the repository holding the skills (default: skills/ when it exists, else the root).
  # subpath: skills
  # More git repositories, after `repo`, each with url, branch, subpath, token_env (the
  # variable holding its token; default GITHUB_TOKEN; tokens never go in a file) and name (for
  # access rules; default: the repository's name).
  repos: []
  # Skills published as OCI artifacts (ToolHive's layout), after the git sources, each with
  # ref (host/repository:tag or @sha256:digest), name (default: the repository's last segment;
  # must equal the artifact's dev.toolhive.skills.name label), verify: {key: FILE} (accept only
  # artifacts with a cosign signature by this ECDSA P-256 public key), token_env (the
  # variable holding a registry token; default: anonymous) and token_realm (a token realm on
  # another origin that may receive that token, e.g. https://auth.docker.io; by default only
  # the registry's own origin does). Pulled into git.content_dir.
  oci: []
  # Registries (and index hosts) spoken to in plain HTTP (host or host:port); loopback ones
  # always are.
  insecure_registries: []
  # The lock file `skills-mcp lock` writes and `lock --check` compares (relative to the
  # --config file's folder; default: skills.lock beside the --config file, else ./skills.lock).
  # lock_file: skills.lock
  # Serve exactly the revisions of the lock file (as `serve --locked`): a remote that moved is
  # reported, not followed; a skill whose content disagrees with the lock is not served.
  locked: false
  # Agent Skills discovery indexes (another server's /.well-known/agent-skills/index.json),
  # after the OCI sources: a URL, or {url, name, token_env} (name for access rules, default
  # the URL's host; token_env the variable holding a bearer token, sent to that origin only).
  # Every entry is checked against its digest before use.
  indexes: []
  # Origins (scheme://host[:port]) an index's entries may be fetched from besides the index's
  # own; they get no credentials. Entries on other origins are refused.
  index_origins: []

# Git checkouts (one folder per source; skills are served from an immutable snapshot per commit).
git:
  # Where checkouts live.
  content_dir: ~/.skills-mcp/content
  # Seconds a git command (clone, fetch) may take before it is stopped.
  timeout_seconds: 120

# How `serve` speaks MCP (ignored in a root's config.yaml). See docs/http.md.
server:
  # `stdio` (the default) or `http` (as `serve --http`).
  transport: stdio
  # Address `serve --http` listens on (IP:PORT, localhost:PORT or :PORT).
  listen: 127.0.0.1:8080
  # Host header values accepted (names or name:port; "*" accepts any). Others get 403.
  allowed_hosts:
    - localhost
    - 127.0.0.1
    - ::1
  # Origin values accepted (scheme://host[:port], `:*` for any port). Others get 403;
  # requests without an Origin (not from a browser) are accepted.
  allowed_origins:
    - http://localhost:*
    - http://127.0.0.1:*
    - http://[::1]:*
    - https://localhost:*
    - https://127.0.0.1:*
    - https://[::1]:*
  # Listen on a non-loopback address without authentication (open to everyone).
  public_without_auth: false
  # Largest request body, in bytes (413 beyond; at least 1024).
  max_body_bytes: 1048576
  # Seconds to read a request and produce its response head (504 beyond).
  request_timeout_seconds: 30
  # Most requests handled at once; beyond, 503 at once (never a queue).
  max_in_flight: 256
  # Seconds a connection may take to send its headers, or stay idle, before it is closed.
  header_read_timeout_seconds: 10
  # Seconds a shutdown (SIGTERM, SIGINT) waits for requests in flight.
  shutdown_grace_seconds: 10
  # Seconds between SIGTERM and closing the listener (0 to 3600): /readyz answers 503 while
  # requests are still served, so a load balancer stops sending new ones first (the drain).
  shutdown_delay_seconds: 5
  # Sessions and SSE streams for clients older than 2026-07-28; false: every request is
  # answered statelessly (any replica answers any request).
  sessions: true
  # Serve Prometheus metrics at http://ADDR/metrics on a listener of its own (either
  # transport; as --metrics-listen). A port alone (9464) is loopback; "" = off.
  # See docs/operations.md.
  metrics_listen: ""
  # File whose first line is the bearer token /metrics asks for ("" = see metrics_token_env).
  metrics_token_file: ""
  # Environment variable holding that token when no file is given (unset: /metrics is open).
  metrics_token_env: SKILLS_MCP_METRICS_TOKEN

# Authentication of HTTP clients (serve --http); ignored in a root's config.yaml. Flags
# (--auth-tokens-file, --auth-tokens-env, --resource-url, --oauth-issuer, --oauth-jwks) override it.
auth:
  # File of static bearer tokens, one per line: `TOKEN [SCOPE...]` (no scope: every scope).
  tokens_file: ""
  # Environment variable holding static tokens (same lines, separated by newlines or `;`).
  tokens_env: SKILLS_MCP_AUTH_TOKENS
  # This server's public URL (the audience of JWTs, the `resource` of the metadata).
  resource_url: ""
  # OAuth 2.1 resource server: JWT access tokens of these authorization servers.
  oauth:
    # Issuer identifiers of the accepted authorization servers (empty: OAuth off).
    issuers: []
    # Their signing keys: a JWKS file or an http(s) URL.
    jwks: ""
    # Minutes after which the key set is fetched again (in the background).
    jwks_refresh_minutes: 15
    # Least seconds between two fetches caused by a token with an unknown `kid`.
    jwks_min_refresh_seconds: 30
    # Seconds a JWKS fetch may take.
    jwks_timeout_seconds: 10
    # Clock skew allowed on `exp` and `nbf`, in seconds (0-300).
    leeway_seconds: 60
  # Names of the scopes tokens carry.
  scopes:
    # Reading skills: tools, resources, prompts, skills/*.
    read: skills:read
    # Running scripts (`run_script`).
    run: skills:run
    # Refreshing sources (`refresh_skills`).
    refresh: skills:refresh

# Who sees which skill (--config FILE only; ignored with a warning in a root's config.yaml).
# SIGHUP re-reads it (and the token file): new rules apply, a bad file is refused.
access:
  # The JWT claim holding a caller's groups (a list or a space-separated string); a dotted
  # path such as realm_access.roles reaches a nested claim.
  groups_claim: groups
  # The local operator's groups (stdio, HTTP on loopback without authentication), e.g.
  # `local: {groups: [ops]}`; unset: the local operator sees every skill.
  local:
  # Rules: a skill no rule selects is visible to every caller; a skill some rule selects is
  # visible only to callers one of those rules admits (any listed group, subject or scope).
  # - skills: ["finance/**"]   # globs over skill paths (`finance/**`: finance and below)
  #   roots: [hr-handbook]     # roots / git sources by name
  #   groups: [finance]
  #   subjects: [alice]
  #   scopes: [skills:hr]      # a scope named here is a known scope for tokens
  rules: []
"#;

/// The full default configuration, a comment on every key.
pub fn example_config() -> String {
    let d = skills_engine::model::EngineConfig::DEFAULT;
    TEMPLATE
        .replace("{min_score}", &format!("{:?}", d.min_score))
        .replace(
            "{ambiguity_threshold}",
            &format!("{:?}", d.ambiguity_threshold),
        )
        .replace("{max_results}", &d.max_results.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matching_defaults_are_filled_in() {
        let text = example_config();
        assert!(!text.contains("{min_score}") && !text.contains("{max_results}"));
        let parsed: super::super::Config = serde_yaml::from_str(&text).unwrap();
        assert_eq!(parsed, super::super::Config::default());
    }
}
