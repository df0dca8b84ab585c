#!/usr/bin/env bash
# Instructions per search request over HTTP, counted by callgrind (repeatable on a noisy, shared
# machine, unlike wall time): the release binary's `serve --http` (metrics on, no access rules,
# the access log to a file, as benches/http_wrk.sh) runs under callgrind with instrumentation off;
# after a warm-up, instrumentation is turned on for `wrk -t1 -c$CONNECTIONS -d$DURATION` of the
# stateless `search_skills` POSTs of benches/wrk/search.lua (the 240 dev requests cycled), then
# off, and the counts are divided by the requests the server answered in that window (its
# access log lines). Prints the total, the search in the engine (`Catalog::search_brief`: wasm and
# lifting) and the rest (HTTP, rmcp, JSON, logs, metrics) and, with TOP=N, the N functions of
# highest inclusive count per request (callgrind_annotate --inclusive=yes).
#
#   cargo build --release -p skills-mcp
#   benches/http_instructions.sh [BINARY]
#   DURATION=40s TOP=40 benches/http_instructions.sh
#
# Environment: CORPUS (../shared/corpora/combined), QUERIES (dev_queries.json), CONNECTIONS (4),
# DURATION (30s), TOP (0), KEEP=1 keeps the callgrind output and the server log.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
binary=$(realpath "${1:-$repo/target/release/skills-mcp}")
corpus=${CORPUS:-$repo/../shared/corpora/combined}
queries_json=${QUERIES:-$repo/../shared/eval/dev_queries.json}
connections=${CONNECTIONS:-4}
duration=${DURATION:-30s}
top=${TOP:-0}

for tool in wrk python3 valgrind callgrind_control callgrind_annotate; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found" >&2; exit 2; }
done
[[ -x $binary ]] || { echo "error: no binary at $binary" >&2; exit 2; }

# shellcheck source=support/scratch.sh
source "$here/support/scratch.sh"
# No file watching: a change in the shared corpus by someone else would rebuild within the count.
printf 'server:\n  max_in_flight: 1024\n  shutdown_delay_seconds: 0\n  request_timeout_seconds: 600\nrefresh:\n  watch: false\n' \
  >"$work/config.yaml"
# The index cache and the component compiled for valgrind's CPU features, in the scratch folder.
export SKILLS_MCP_CACHE_DIR="$work/cache"
"$binary" --no-default-roots --root "$corpus" search postgres >/dev/null 2>&1
valgrind --tool=none "$binary" --no-default-roots --root "$corpus" search postgres \
  >/dev/null 2>&1

serve_http valgrind --tool=callgrind --smc-check=all-non-file --instr-atstart=no \
  --callgrind-out-file="$work/callgrind.out"
wait_ready 3000
script="$here/wrk/search.lua"
answered() { grep -c 'http: POST /mcp tools/call search_skills 200' "$work/server.log" || true; }

wrk -t1 -c"$connections" -d10s -s "$script" "$url" -- "$work/queries.txt" >/dev/null
sleep 1
before=$(answered)
callgrind_control -i on "$server_pid" >/dev/null
wrk -t1 -c"$connections" -d"$duration" -s "$script" "$url" -- "$work/queries.txt" >"$work/run.txt"
callgrind_control -i off "$server_pid" >/dev/null
after=$(answered)
callgrind_control -d "$server_pid" >/dev/null
sleep 1
n=$((after - before))
grep wrk-summary "$work/run.txt" | sed 's/^wrk-summary/wrk:/'
errors=$(sed -n 's/.*errors=\([0-9]*\).*/\1/p' "$work/run.txt")
[[ $errors == 0 ]] || echo "warning: $errors errors" >&2
# The dump's file(s) (the file written at exit counts nothing: instrumentation is off by then).
total=0
files=()
for f in "$work"/callgrind.out*; do
  t=$(sed -n 's/^totals: *//p' "$f" | head -1)
  if [[ -n $t && $t != 0 ]]; then
    total=$((total + t))
    files+=("$f")
  fi
done
callgrind_annotate --inclusive=yes "${files[@]}" 2>/dev/null >"$work/inclusive.txt"
# The search in the engine (wasm and the lifting of its answer): the rest is the host's part.
search=$(grep -E '^ *[0-9,]+ .*:skills_mcp::catalog::Catalog::search(_brief)? ' "$work/inclusive.txt" |
  head -1 | awk '{ gsub(",", "", $1); print $1 }')
python3 -c "import sys; t, s, n = int(sys.argv[1]), int(sys.argv[2] or 0), int(sys.argv[3]); print(f'requests={n} per_request={t / n / 1e6:.3f} M search={s / n / 1e6:.3f} M rest={(t - s) / n / 1e6:.3f} M')" "$total" "$search" "$n"
if ((top > 0)); then
  grep -E '^ *[0-9,]+ ' "$work/inclusive.txt" | head -"$top" |
    awk -v n="$n" '{ c = $1; gsub(",", "", c); $1 = ""; printf "%10.1f k %s\n", c / n / 1000, $0 }'
fi
