#!/bin/sh
# What each idea for naming an audit's competitors does to the audit's figure (issue 39; the
# table of docs/authoring.md "How good it is"): the engine's own audit (`Index::audit_with`,
# through `eval_batch --index --audit`, natively: the same code the component runs) with one
# choice changed at a time by its `AUDIT_*` variable, each scored by `audit_quality.py` as the
# shipped audit is (same dev requests, same misses, searched through the real binary).
#
#   cargo build --release -p skills-mcp
#   cargo build --release -p skills-engine --example eval_batch
#   benches/eval/audit_ideas.sh [CORPUS] [QUERIES]     # BIN=, BATCH=: other binaries
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${1:-$here/../shared/corpora/combined}
queries=${2:-$here/../shared/eval/dev_queries.json}
bin=${BIN:-$here/target/release/skills-mcp}
batch=${BATCH:-$here/target/release/examples/eval_batch}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset SKILLS_DIR
idea() { # NAME [VAR=VALUE ...]: the figure of the audit with those choices
    name=$1; shift
    env "$@" "$batch" "$corpus" --index --audit > "$work/audit.json" 2>/dev/null
    figure=$(python3 "$here/benches/eval/audit_quality.py" --bin "$bin" --corpus "$corpus" \
        --queries "$queries" --audit-json "$work/audit.json" | sed -n 's/^audit (first 3 competitors): //p')
    printf '| %s | %s |\n' "$name" "$figure"
}
printf '| idea | figure |\n|---|---|\n'
idea "shipped: the closest (among the first 10 hits of the most requests), equally close ones by requests won or tied, then reach (among the hits of how many skills' requests), then summed score"
idea "equally close ones by requests won or tied, then summed score (no reach: the first order shipped)" AUDIT_ORDER=3
idea "equally close ones by reach alone, the broader first" AUDIT_ORDER=2
idea "equally close ones by the summed margin (own score less the rival's), the smaller first" AUDIT_ORDER=1
idea "closeness counted both ways (also the other's requests whose hits hold this skill)" AUDIT_MUTUAL=1
idea "the other's requests breaking ties of closeness" AUDIT_MUTUAL=2
idea "each sentence's clauses as requests too" AUDIT_CLAUSES=1
idea "no body headings as requests" AUDIT_HEADINGS=0
idea "8 body headings" AUDIT_HEADINGS=8
idea "the first 8 hits instead of 10" AUDIT_HITS=8
idea "the first 12 hits" AUDIT_HITS=12
idea "the first 20 hits" AUDIT_HITS=20
