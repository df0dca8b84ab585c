#!/usr/bin/env python3
"""Instructions a search by function, the component's JIT code named by wasm function.

Used by benches/jit_profile.sh (read it first). Subcommands:

  parse OUT PERFMAP PICKLE   callgrind output (--dump-instr=yes --compress-pos=no
                             --compress-strings=no) and wasmtime's perf map -> self
                             instructions per function and per (JIT function, offset)
  diff ALL ONE N [FUNC ANN CWASM]
                             (ALL - ONE) / N per function, best first (the first 30, or
                             JIT_TOP from the environment); with FUNC (a substring
                             of a JIT function's name), ANN gets that function's machine code
                             (objdump of the compiled-engine cache file CWASM, whose symbols
                             are the wasm functions) with the instructions a query at each
                             address, and a summary by kind is printed
"""
import bisect
import collections
import os
import pickle
import re
import subprocess
import sys


def parse(out, perfmap, dest):
    ranges = []
    for line in open(perfmap):
        addr, size, name = line.rstrip("\n").split(" ", 2)
        ranges.append((int(addr, 16), int(size, 16), name))
    ranges.sort()
    starts = [r[0] for r in ranges]
    per_fn, per_off = collections.Counter(), collections.Counter()
    fn, skip = "?", False
    for line in open(out):
        if line.startswith("fn="):
            fn = line[3:].strip()
        elif line.startswith("calls="):
            skip = True  # the next cost line is the call's inclusive cost
        elif line.startswith("0x"):
            if skip:
                skip = False
                continue
            parts = line.split()
            addr, cost = int(parts[0], 16), int(parts[-1])
            i = bisect.bisect_right(starts, addr) - 1
            if i >= 0 and addr < ranges[i][0] + ranges[i][1]:
                name = "JIT " + ranges[i][2]
                per_off[(name, addr - ranges[i][0])] += cost
            else:
                name = fn
            per_fn[name] += cost
    with open(dest, "wb") as f:
        pickle.dump((per_fn, per_off), f)


def kind(ins):
    op = ins.split()[0] if ins.split() else ""
    if re.search(r"^mov\w*\s+-?0x[0-9a-f]+\(%rsp\),", ins) or re.search(r"^mov\w*\s+\(%rsp\),", ins):
        return "reload from a spill slot"
    if re.search(r",-?0x[0-9a-f]*\(%rsp\)\s*$", ins) or re.search(r",\(%rsp\)\s*$", ins):
        return "store to a spill slot"
    if op.startswith("j"):
        return "branch"
    if op in ("cmp", "test"):
        return "compare"
    if op == "lea":
        return "lea (address arithmetic)"
    if op.startswith("mov") and re.search(r"^\S+\s+%\w+,%\w+\s*$", ins):
        return "register move"
    if "(" in ins:
        return "other memory access"
    return "other"


def diff(all_pkl, one_pkl, n, func=None, ann=None, cwasm=None):
    a = pickle.load(open(all_pkl, "rb"))
    o = pickle.load(open(one_pkl, "rb"))
    d = collections.Counter(a[0])
    d.subtract(o[0])
    total = sum(d.values())
    jit = sum(v for k, v in d.items() if k.startswith("JIT "))
    print(f"a query: {total / n:,.0f} instructions, {jit / n:,.0f} in the component's JIT code")
    for name, v in d.most_common(int(os.environ.get("JIT_TOP", "30"))):
        print(f"{v / n:10,.0f} {100 * v / total:5.1f}%  {name[:120]}")
    if not func:
        return
    offs = collections.Counter()
    names = set()
    for (name, off), v in a[1].items():
        if func in name:
            offs[off] += v
            names.add(name)
    for (name, off), v in o[1].items():
        if func in name:
            offs[off] -= v
    if not names:
        sys.exit(f"no JIT function matches {func!r}")
    wasm_fn = re.search(r"wasm\[\d+\]::function\[\d+\]", sorted(names)[0]).group(0)
    syms = subprocess.run(["nm", "-S", cwasm], capture_output=True, text=True, check=True).stdout
    start = size = None
    for line in syms.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[3].startswith(wasm_fn + "::"):
            start, size = int(parts[0], 16), int(parts[1], 16)
    if start is None:
        sys.exit(f"{wasm_fn} is not in {cwasm}")
    asm = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", f"--start-address={start}",
         f"--stop-address={start + size}", cwasm],
        capture_output=True, text=True, check=True).stdout
    kinds = collections.Counter()
    with open(ann, "w") as f:
        for line in asm.splitlines():
            m = re.match(r"\s*([0-9a-f]+):\s*(.*)", line)
            if not m:
                continue
            off = int(m.group(1), 16) - start
            c = offs.get(off, 0) / n
            kinds[kind(m.group(2))] += c
            f.write(f"{off:6x} {c:10.1f}  {m.group(2)}\n")
    shown = sum(kinds.values())
    print(f"\n{wasm_fn} ({func}): {shown:,.0f} instructions a query, by kind (annotated in {ann}):")
    for k, v in kinds.most_common():
        print(f"{v:10,.0f} {100 * v / max(shown, 1):5.1f}%  {k}")


if __name__ == "__main__":
    if sys.argv[1] == "parse":
        parse(*sys.argv[2:5])
    elif sys.argv[1] == "diff":
        diff(sys.argv[2], sys.argv[3], int(sys.argv[4]), *sys.argv[5:8])
    else:
        sys.exit(__doc__)
