#!/bin/sh
# Instructions per search through the component, counted by callgrind (repeatable on a noisy,
# shared machine, unlike wall time): the release binary's `search --batch` over the 240 dev
# requests twice, minus a one-request run, divided by 479. The index cache and the compiled
# component are warmed first, natively and under valgrind (valgrind reports other CPU features,
# so the component is compiled again for it and must be cached before counting).
#
#   benches/search_instructions.sh [BINARY] [ROOT]...
#   default: target/release/skills-mcp on ../shared/corpora/combined and the generated 10,000
#   and 50,000 under target/bench-corpus/ (when present)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/release/skills-mcp}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "$here/../shared/corpora/combined" \
    "$here/target/bench-corpus/gen-10000-s7-v1" "$here/target/bench-corpus/gen-50000-s7-v1"
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
requests="$here/benches/support/dev_requests.py"
python3 "$requests" | head -1 > "$work/one.txt"
python3 "$requests" "$here/../shared/eval/dev_queries.json" 2 > "$work/two.txt"
n=$(($(wc -l < "$work/two.txt")))
count() { # input file: instructions of one run of the batch
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" --no-default-roots \
        --root "$root" search --batch < "$1" 2>&1 >/dev/null | sed -n 's/.*refs: *//p' | tr -d ,
}
printf '| corpus | instructions per query |\n|---|---:|\n'
for root in "$@"; do
    [ -d "$root" ] || { echo "skipped: $root is absent" >&2; continue; }
    export SKILLS_MCP_CACHE_DIR="$work/cache-$(basename "$root")"
    "$bin" --no-default-roots --root "$root" search --batch < "$work/one.txt" >/dev/null 2>&1
    valgrind --tool=none "$bin" --no-default-roots --root "$root" search --batch \
        < "$work/one.txt" >/dev/null 2>&1
    one=$(count "$work/one.txt")
    two=$(count "$work/two.txt")
    printf '| %s | %s |\n' "$(basename "$root")" "$(python3 -c "print(f'{($two - $one) / ($n - 1) / 1e6:.2f} M')")"
done
