#!/bin/sh
# Where a search's instructions go through the component, by function, the component's JIT code
# named by wasm function: callgrind with per-instruction counts over the 240 dev requests minus
# one request, the JIT addresses attributed through wasmtime's perf map (SKILLS_MCP_PERFMAP=1).
# With FUNC (a substring of a wasm function's name, e.g. top_k), that function's machine code
# is annotated with the instructions a query at each address (read from the compiled-engine
# cache file, an ELF whose symbols are the wasm functions) and summed by kind (spill reloads,
# `lea`s, moves...). docs/performance.md, "The compiled component", shows what it found.
#
#   benches/jit_profile.sh [BINARY] ROOT [FUNC]
#   e.g. benches/jit_profile.sh target/release/skills-mcp ../shared/corpora/combined top_k
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release/skills-mcp
if [ -x "${1:-}" ] && [ ! -d "${1:-}" ]; then bin=$1; shift; fi
root=${1:?usage: benches/jit_profile.sh [BINARY] ROOT [FUNC]}
func=${2:-}
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py="$here/benches/support/jit_profile.py"
python3 "$here/benches/support/dev_requests.py" | head -1 > "$work/one.txt"
python3 "$here/benches/support/dev_requests.py" "$here/../shared/eval/dev_queries.json" > "$work/all.txt"
n=$(($(wc -l < "$work/all.txt") - 1))
export SKILLS_MCP_CACHE_DIR="$work/cache" SKILLS_MCP_PERFMAP=1
run() { "$bin" --no-default-roots --root "$root" search --batch "$@"; }
# Index cache and compiled component, natively and for valgrind's CPU (the newest artifact).
run < "$work/one.txt" >/dev/null 2>&1
valgrind --tool=none "$bin" --no-default-roots --root "$root" search --batch \
    < "$work/one.txt" >/dev/null 2>&1
for part in one all; do
    valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file="$work/$part.out" "$bin" --no-default-roots --root "$root" \
        search --batch < "$work/$part.txt" > /dev/null 2> "$work/$part.err"
    pid=$(sed -n 's/^==\([0-9]*\)==.*/\1/p' "$work/$part.err" | head -1)
    python3 "$py" parse "$work/$part.out" "/tmp/perf-$pid.map" "$work/$part.pkl"
    rm -f "$work/$part.out" "/tmp/perf-$pid.map"
done
if [ -n "$func" ]; then
    cwasm=$(ls -t "$work"/cache/engine-*.cwasm | head -1)
    python3 "$py" diff "$work/all.pkl" "$work/one.pkl" "$n" "$func" "jit-$func.txt" "$cwasm"
else
    python3 "$py" diff "$work/all.pkl" "$work/one.pkl" "$n"
fi
