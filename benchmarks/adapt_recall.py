"""Evidence recall of the adapted ranker (`qasper-rag adapt`, preset `offline-adapted`) against `offline` on the same
questions: the whole recall curve (500 to 6,000 tokens), by file (the 10 train papers, the 47 test papers) and
overall, with paired bootstrap intervals of the difference, and the retrieval time per question.

A plain script: it prints numbers and checks nothing. Run from the project root:

    QASPER_ADAPTED=data/adapted .venv/bin/python benchmarks/adapt_recall.py [--out reports/adapt/recall.json]
"""
from __future__ import annotations
import argparse, json, statistics, time
from pathlib import Path
import numpy as np
from qasper_rag.data import load_path, shared_data_dir
from qasper_rag.evaluate import question_groups
from qasper_rag.recall import question_recall
from qasper_rag.retrieval import Retriever

BUDGETS = (500, 1000, 2000, 4000, 6000)

def per_question(corpus, config: str, budgets=BUDGETS) -> tuple[dict, list[float]]:
    "question id -> {budget: evidence recall}; and the retrieval seconds of each question (index build excluded)."
    r, out, secs = Retriever(config), {}, []
    for p in corpus:
        r.index(p)
        for q in p.questions:
            if not q.evidence: continue
            t = time.perf_counter(); res = r.retrieve(p, q.text); secs.append(time.perf_counter() - t)
            out[q.id] = {b: question_recall(res.chunked, q, r.repack(res, b).chunk_ids).recall for b in budgets}
    return out, secs

def paired(a: dict, b: dict, ids, budget: int, seed: int = 0) -> dict:
    "Means of a and b over `ids` at `budget`, their difference and its 95% paired bootstrap interval."
    ids = [i for i in ids if a[i][budget] is not None and b[i][budget] is not None]
    x, y = np.array([a[i][budget] for i in ids]), np.array([b[i][budget] for i in ids])
    d = y - x
    boot = d[np.random.default_rng(seed).integers(0, len(d), size=(2000, len(d)))].mean(axis=1)
    return {"n": len(ids), "base": round(float(x.mean()), 3), "adapted": round(float(y.mean()), 3), "diff": round(float(d.mean()), 3),
            "ci95": [round(float(v), 3) for v in np.quantile(boot, [0.025, 0.975])], "better": int((d > 0).sum()), "worse": int((d < 0).sum())}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(shared_data_dir() / "original_format"))
    ap.add_argument("--base", default="offline"); ap.add_argument("--adapted", default="offline-adapted")
    ap.add_argument("--out", help="write the numbers as JSON here")
    a = ap.parse_args()
    corpus, groups = load_path(a.data), question_groups(a.data)
    base, tb = per_question(corpus, a.base)
    adap, ta = per_question(corpus, a.adapted)
    res = {"budgets": list(BUDGETS), "by_group": {}, "retrieval_ms": {"base": round(1000 * statistics.median(tb), 1), "adapted": round(1000 * statistics.median(ta), 1)}}
    for g in sorted(set(groups.values())) + ["all"]:
        ids = [i for i in base if g == "all" or groups.get(i) == g]
        res["by_group"][g] = {str(b): paired(base, adap, ids, b) for b in BUDGETS}
        for b in BUDGETS:
            s = res["by_group"][g][str(b)]
            print(f"{g:26s} @{b:5d}: {a.base} {s['base']:.3f}  {a.adapted} {s['adapted']:.3f}  diff {s['diff']:+.3f} {s['ci95']} (n={s['n']}, {s['better']} better, {s['worse']} worse)")
    print(f"retrieval per question (median, warm): {res['retrieval_ms']}")
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(res, indent=1) + "\n")

if __name__ == "__main__": main()
