#!/bin/sh
# The collection audit at scale through the real binary (issue 39): `skills-mcp audit --json`
# on the combined corpus (../shared/corpora/combined, 2,620 skills) and the generated 50,000
# (benches/support/gen_corpus.rs, seed 7, cached under target/bench-corpus/ by
# `cargo test --release -p skills-engine --test answers`), the compiled engine and the index
# cache warm, so the time is the audit's (one warm-up run first). RUNS (default 3) timed runs
# each, the median reported, and the peak RSS of one run. Targets: under 10 s for the 2,620
# skills, under 5 minutes for the 50,000.
#
#   benches/audit_scale.sh [BINARY]        # default target/release/skills-mcp
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/release/skills-mcp}
runs=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset SKILLS_DIR
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timed() { # the command: median seconds over $runs runs
    i=0; while [ $i -lt "$runs" ]; do
        python3 -c 'import subprocess,sys,time; t=time.perf_counter(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True); print(time.perf_counter()-t)' "$@"
        i=$((i+1))
    done | median
}
printf '| corpus | skills | audit, caches warm (s) | peak RSS (MB) |\n|---|---|---|---|\n'
for spec in "combined:$here/../shared/corpora/combined" \
            "gen50k:$here/target/bench-corpus/gen-50000-s7-v1"; do
    name=${spec%%:*}; root=${spec#*:}
    [ -d "$root" ] || { echo "skipped: $root is absent" >&2; continue; }
    export SKILLS_MCP_CACHE_DIR="$work/cache-$name"
    "$bin" --no-default-roots --root "$root" audit --json > "$work/audit.json" 2>/dev/null
    skills=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["skills"]))' "$work/audit.json")
    t=$(timed "$bin" --no-default-roots --root "$root" audit --json)
    rss=$(/usr/bin/time -f '%M' "$bin" --no-default-roots --root "$root" audit --json 2>&1 >/dev/null | tail -1)
    printf '| %s | %s | %.2f | %.0f |\n' "$name" "$skills" "$t" "$(python3 -c "print($rss / 1024)")"
done
