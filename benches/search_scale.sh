#!/bin/sh
# Search at scale through the real binary (issue 27): for each corpus, the index build (index
# cache off), the restart from a warm index cache, the median time per dev query through the
# component (`search --batch`, the 240 dev requests REPS times over, minus a one-request run,
# both with the index cache warm), and the peak RSS of the batch run.
#
#   benches/search_scale.sh [BINARY]        # default target/release/skills-mcp
#   REPS=10 RUNS=3 benches/search_scale.sh   # (the defaults)
#
# Corpora: the combined corpus (../shared/corpora/combined, 2,620 skills) and the generated
# 10,000 and 50,000 (benches/support/gen_corpus.rs, seed 7, cached under target/bench-corpus/
# by `cargo test --release -p skills-engine --test answers`). Requests:
# ../shared/eval/dev_queries.json. RUNS (default 3) timed runs each, the median reported.
# Not part of CI's quick runs (a 50,000-skill corpus is generated and indexed).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/release/skills-mcp}
reps=${REPS:-10}
runs=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
requests="$here/benches/support/dev_requests.py"
python3 "$requests" | head -1 > "$work/one.txt"
python3 "$requests" "$here/../shared/eval/dev_queries.json" "$reps" > "$work/all.txt"
n=$(($(wc -l < "$work/all.txt")))
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timed() { # input file, then the command: median seconds over $runs runs
    f=$1; shift
    i=0; while [ $i -lt "$runs" ]; do
        python3 -c 'import subprocess,sys,time; t=time.perf_counter(); subprocess.run(sys.argv[2:], stdin=open(sys.argv[1]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True); print(time.perf_counter()-t)' "$f" "$@"
        i=$((i+1))
    done | median
}
printf '| corpus | skills | build, cache off (s) | restart, cache warm (s) | per query (µs) | peak RSS, batch (MB) |\n|---|---|---|---|---|---|\n'
for spec in "combined:$here/../shared/corpora/combined" \
            "gen10k:$here/target/bench-corpus/gen-10000-s7-v1" \
            "gen50k:$here/target/bench-corpus/gen-50000-s7-v1"; do
    name=${spec%%:*}; root=${spec#*:}
    [ -d "$root" ] || { echo "skipped: $root is absent" >&2; continue; }
    export SKILLS_MCP_CACHE_DIR="$work/cache-$name"
    skills=$("$bin" --no-default-roots --root "$root" validate 2>&1 | sed -n 's/^.* \([0-9][0-9]*\) skills indexed.*$/\1/p' | tail -1)
    # warm-up: the compiled component and the index cache written
    "$bin" --no-default-roots --root "$root" search --batch < "$work/one.txt" > /dev/null 2>&1
    cold=$(SKILLS_MCP_INDEX_CACHE=off timed "$work/one.txt" "$bin" --no-default-roots --root "$root" search --batch)
    warm=$(timed "$work/one.txt" "$bin" --no-default-roots --root "$root" search --batch)
    all=$(timed "$work/all.txt" "$bin" --no-default-roots --root "$root" search --batch)
    rss=$(/usr/bin/time -f '%M' "$bin" --no-default-roots --root "$root" search --batch < "$work/all.txt" 2>&1 >/dev/null | tail -1)
    per=$(python3 -c "print(round(($all - $warm) / ($n - 1) * 1e6))")
    printf '| %s | %s | %.2f | %.2f | %s | %.0f |\n' "$name" "$skills" "$cold" "$warm" "$per" "$(python3 -c "print($rss / 1024)")"
done
