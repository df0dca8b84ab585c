#!/usr/bin/env python3
"""The dev requests of the retrieval evaluation, one a line, for the bench scripts.

    dev_requests.py [--with-ids] [QUERIES_JSON] [REPEAT]

Each entry's `short` then `task` request, in file order (240 lines for the 120 entries),
whitespace collapsed to single spaces (a request is one line of `search --batch`), the whole
list REPEAT times (default 1). With `--with-ids` each line is the expected skill's `id`, a tab,
then the request. QUERIES_JSON defaults to ../shared/eval/dev_queries.json beside
the repository. The same requests as `benches/support/mod.rs` and the recorded answers use.
"""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
with_ids = "--with-ids" in args
args = [a for a in args if a != "--with-ids"]
path = args[0] if len(args) > 0 else os.path.join(
    here, "..", "..", "..", "shared", "eval", "dev_queries.json")
repeat = int(args[1]) if len(args) > 1 else 1
lines = [(q["id"] + "\t" if with_ids else "") + " ".join(q[k].split())
         for q in json.load(open(path)) for k in ("short", "task")]
sys.stdout.write("".join(line + "\n" for line in lines) * repeat)
