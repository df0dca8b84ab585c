#!/usr/bin/env python3
"""How well `skills-mcp audit` names the skills that take each other's requests (issue 39).

On the retrieval evaluation's dev requests over the combined corpus, with no eval file present
(the audit derives every skill's requests from its own text and never sees the dev requests):
of the requests whose top search hit is another skill than the expected one, the share where
that skill is among the expected skill's first 3 audit competitors, or the expected skill among
its. The baseline counts the same way with, as "competitors", the 3 best other skills of a
search of each skill's own description (its first 60 words). Everything goes through the real
binary: `search --batch` for the requests and the baseline, `list --json` for the descriptions,
`audit --json` for the audit. From the repository root:

    cargo build --release -p skills-mcp
    python3 benches/eval/audit_quality.py [--bin target/release/skills-mcp]
        [--corpus ../shared/corpora/combined] [--queries ../shared/eval/dev_queries.json]

Prints the number of missed requests, the baseline's figure and the audit's, and the time the
audit took. The dev requests are read by `benches/support/dev_requests.py` (one place).
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")


def run(cmd, stdin=None):
    env = dict(os.environ)
    env.pop("SKILLS_DIR", None)
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=True,
                          env=env).stdout


def batch(args, requests, limit):
    """Top `limit` skill paths of each request, through `search --batch`."""
    out = run([args.bin, "search", "--batch", "--no-default-roots", "--root", args.corpus,
               "-n", str(limit)], "".join(r + "\n" for r in requests))
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(lines) == len(requests), (len(lines), len(requests))
    return [[h["skill_path"] for h in line.get("results", [])] for line in lines]


def skills(args):
    """(skill path, description) of every skill, from `list --json`."""
    out = []

    def walk(node):
        if node.get("description"):
            out.append((node["path"], node["description"]))
        for c in node.get("children", []):
            walk(c)

    for node in json.loads(run([args.bin, "list", "--json", "--no-default-roots", "--root",
                                args.corpus])):
        walk(node)
    return out


def figure(missed, competitors):
    hits = sum(1 for expected, winner in missed
               if winner in competitors.get(expected, [])[:3]
               or expected in competitors.get(winner, [])[:3])
    return hits, len(missed)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "skills-mcp"))
    p.add_argument("--corpus", default=os.path.join(SHARED, "corpora", "combined"))
    p.add_argument("--queries", default=os.path.join(SHARED, "eval", "dev_queries.json"))
    p.add_argument("--audit-json", help="read the audit from this file (`audit --json`, or "
                   "`eval_batch --index --audit`) instead of running the binary's")
    args = p.parse_args()

    dev = run([sys.executable, os.path.join(ROOT, "benches", "support", "dev_requests.py"),
               "--with-ids", args.queries])
    pairs = [line.split("\t", 1) for line in dev.splitlines() if line]
    tops = batch(args, [r for _, r in pairs], 1)
    missed = [(expected, top[0]) for (expected, _), top in zip(pairs, tops)
              if top and top[0] != expected]

    described = skills(args)
    requests = [" ".join(d.split()[:60]) for _, d in described]
    found = batch(args, requests, 4)
    baseline = {path: [h for h in hits if h != path][:3]
                for (path, _), hits in zip(described, found)}

    start = time.time()
    if args.audit_json:
        with open(args.audit_json) as f:
            report = json.load(f)
    else:
        report = json.loads(run([args.bin, "audit", "--json", "--no-default-roots", "--root",
                                 args.corpus]))
    took = time.time() - start
    audit = {s["skill"]: [c["skill"] for c in s["competitors"]] for s in report["skills"]}

    b, n = figure(missed, baseline)
    a, _ = figure(missed, audit)
    print(f"requests whose top hit is another skill: {n} of {len(pairs)}")
    print(f"baseline (3 best others for each skill's description): {b}/{n} = {b / n:.1%}")
    print(f"audit (first 3 competitors): {a}/{n} = {a / n:.1%}")
    if not args.audit_json:
        print(f"audit of {len(report['skills'])} skills: {took:.1f} s (index build included)")


if __name__ == "__main__":
    main()
