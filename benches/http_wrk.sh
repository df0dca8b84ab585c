#!/usr/bin/env bash
# Search throughput over HTTP with wrk (issue 27): the real release binary (built beforehand,
# this script builds nothing) serves the combined corpus over `serve --http` with metrics on
# (`--metrics-listen`) and no access rules; wrk sends stateless MCP POSTs of `search_skills`
# (benches/wrk/search.lua), the 240 dev requests (each entry's `short` and `task` strings of
# ../shared/eval/dev_queries.json) cycled. After a warm-up it runs
# `wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency` and prints requests/s, p50, p99, errors,
# the CPU time the server and wrk spent per request (user + system) and the context switches of
# the server's threads per request.
#
#   cargo build --release -p skills-mcp
#   benches/http_wrk.sh                      # target/release/skills-mcp, -t2 -c64 -d10s
#   benches/http_wrk.sh path/to/skills-mcp   # another binary
#   RUNS=3 CONNECTIONS=8 benches/http_wrk.sh # several runs, 8 connections
#
# Environment: CORPUS (default ../shared/corpora/combined), QUERIES (dev_queries.json),
# THREADS (2), CONNECTIONS (64), DURATION (10s), WARMUP (3s), RUNS (1), PORT (free port),
# SERVER_ENV (extra `NAME=value` words for the server, e.g. SKILLS_MCP_PERFMAP=1),
# KEEP_LOG=1 keeps the server's stderr (the access log) in the printed folder.
# As in production, the server's stderr (one access-log line per request) goes to a file and
# usage is recorded (to a SQLite store in the scratch folder, not the user's).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
binary=${1:-$repo/target/release/skills-mcp}
corpus=${CORPUS:-$repo/../shared/corpora/combined}
queries_json=${QUERIES:-$repo/../shared/eval/dev_queries.json}
threads=${THREADS:-2}
connections=${CONNECTIONS:-64}
duration=${DURATION:-10s}
warmup=${WARMUP:-3s}
runs=${RUNS:-1}

for tool in wrk python3; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found (apt-get install -y $tool)" >&2; exit 2; }
done
[[ -x $binary ]] || { echo "error: no binary at $binary (cargo build --release -p skills-mcp)" >&2; exit 2; }
[[ -d $corpus ]] || { echo "error: no corpus at $corpus (set CORPUS)" >&2; exit 2; }
[[ -f $queries_json ]] || { echo "error: no queries at $queries_json (set QUERIES)" >&2; exit 2; }

# shellcheck source=support/scratch.sh
source "$here/support/scratch.sh"
port=${PORT:-}
# Room for every connection (the default cap, 256, is above 64 too).
printf 'server:\n  max_in_flight: 1024\n  shutdown_delay_seconds: 0\n' >"$work/config.yaml"
# shellcheck disable=SC2086
serve_http ${SERVER_ENV:-}
wait_ready 1200

script="$here/wrk/search.lua"
echo "server: $binary (pid $server_pid) on $url, corpus $corpus ($(grep -o '[0-9,]* skills indexed' "$work/server.log" | head -1))"
echo "queries: $(wc -l <"$work/queries.txt") dev requests; wrk -t$threads -c$connections -d$duration --latency; $(nproc) cpus; load: $(uptime | sed 's/.*load average: //')"
wrk -t"$threads" -c"$connections" -d"$warmup" -s "$script" "$url" -- "$work/queries.txt" >"$work/warmup.txt"
grep wrk-summary "$work/warmup.txt" | sed 's/^wrk-summary/warm-up:/'
# CPU seconds (user + system) the server has used so far.
server_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$server_pid/stat"
}
# Context switches (voluntary and not) of the server's threads so far: each hand-off of a
# request between threads (a wake-up) costs the kernel's time, which instruction counts miss.
# A thread that exits takes its count along (the blocking pool's idle threads after 10 s).
server_switches() {
  cat /proc/"$server_pid"/task/*/status 2>/dev/null |
    awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}
for run in $(seq "$runs"); do
  cpu_before=$(server_cpu)
  switches_before=$(server_switches)
  # wrk's own CPU (user + system seconds) through bash's `time`.
  { TIMEFORMAT='%U %S'; time wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$script" \
    "$url" -- "$work/queries.txt" >"$work/run.txt"; } 2>"$work/wrk-cpu.txt"
  cpu_after=$(server_cpu)
  switches_after=$(server_switches)
  [[ $runs == 1 ]] && cat "$work/run.txt"
  summary=$(grep wrk-summary "$work/run.txt")
  requests=$(sed 's/.*requests=\([0-9]*\).*/\1/' <<<"$summary")
  # CPU time per request, in microseconds: on a shared machine, a figure that does not depend
  # on how much of the CPUs the other processes left.
  per_request=$(awk -v a="$cpu_before" -v b="$cpu_after" -v n="$requests" -v w="$(cat "$work/wrk-cpu.txt")" \
    -v s="$switches_before" -v z="$switches_after" \
    'BEGIN { split(w, t, " "); printf "server_cpu_us=%.0f wrk_cpu_us=%.0f switches=%.2f", (b - a) * 1e6 / n, (t[1] + t[2]) * 1e6 / n, (z - s) / n }')
  rss=$(awk '/VmRSS|VmHWM/ {printf "%s %.1f MiB ", $1, $2 / 1024}' "/proc/$server_pid/status")
  echo "run $run: ${summary#wrk-summary } $per_request server ${rss}load $(cut -d' ' -f1 /proc/loadavg)"
done
metrics=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
  "http://127.0.0.1:$metrics_port/metrics" | grep -c '^skills_mcp' || true)
echo "metrics: $metrics skills_mcp_* series on http://127.0.0.1:$metrics_port/metrics"
