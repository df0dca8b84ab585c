# Sourced by the HTTP bench scripts (benches/http_wrk.sh, benches/http_instructions.sh), with
# `here` (the benches folder) and `queries_json` set: a scratch folder `$work` removed on exit
# (kept, and named on stderr, with KEEP=1 or KEEP_LOG=1), the dev requests one a line in
# `$work/queries.txt`, `free_port`, the server started by `serve_http` (stopped on exit) and
# `wait_ready`.
work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [[ ${KEEP:-${KEEP_LOG:-0}} == 1 ]]; then echo "kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

python3 "$here/support/dev_requests.py" "$queries_json" >"$work/queries.txt"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Wait up to $1 tenths of a second for the server `server_pid` to log that its skills are
# indexed in $work/server.log; its log and an error if it stops or does not get there.
wait_ready() {
  for _ in $(seq "$1"); do
    grep -q "skills indexed" "$work/server.log" && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; echo "error: the server stopped" >&2; exit 1; }
    sleep 0.1
  done
  echo "error: the server did not become ready" >&2
  exit 1
}

# Start `$binary serve --http` over `$corpus` on port `$port` (a free one when unset), with
# metrics on another free port, the configuration `$work/config.yaml` (written by the caller),
# usage recorded in the scratch folder and stderr (the access log) in `$work/server.log`; the
# words given run it (`NAME=value` settings, or a wrapper such as valgrind). Sets `server_pid`,
# `url` and `metrics_port`.
serve_http() {
  port=${port:-$(free_port)}
  metrics_port=$(free_port)
  env -u SKILLS_DIR "$@" "$binary" serve --http "127.0.0.1:$port" --no-default-roots \
    --root "$corpus" --config "$work/config.yaml" --metrics-listen "127.0.0.1:$metrics_port" \
    --usage-db "$work/usage.sqlite3" \
    </dev/null >/dev/null 2>"$work/server.log" &
  server_pid=$!
  url="http://127.0.0.1:$port/mcp"
}
