"""How much context an answer needs: fixed budgets against adaptive packing rules (a negative result, issue 41).

On two cores an answer is model compute, and 80% of it is the prompt: the one lever left is to
send fewer tokens. `bench_context` measures, on the same rankings, evidence recall against the
context's tokens for fixed budgets, and for adaptive rules that stop packing (after a few
passages) once a passage's dense cosine to the question falls below a share `rel` of the best one
or below `floor`: the ranker's own signal that the rest is unlikely to help. A rule is chosen on
the train papers (recall within 0.01 of the 2,000-token budget, fewest tokens) and reported on the
test papers apart. The predicted answer time prices the prompt and the answer at the rates
measured in the generation section. It also measures how much of the context two consecutive
questions about the same paper share as a prefix (passages go first, in paper order), which is
what the KV cache can reuse between them.

No adaptive rule kept the train papers' recall within 0.01 of the 2,000-token budget, so none is in the package; this
script keeps the measurement, which the bench page (`nbs/pages/26_bench.ipynb`) and `scripts/readme_results.py` read
from `reports/bench/context_adaptive.json`. A plain script: it prints and writes numbers, checks nothing (about 10 s
with the shared papers' vectors cached). Run from the project root:

    .venv/bin/python benchmarks/adaptive_context.py [--data ../shared/data/qasper/original_format] [--out reports/bench/context_adaptive.json]
"""
from __future__ import annotations
import argparse, json, time
from pathlib import Path
from typing import Sequence
import numpy as np
from qasper_rag.core.env import shared_data_dir
from qasper_rag.papers.data import QasperCorpus, load_path

def adaptive_pack(ids: Sequence[str], # chunk ids, best first
                  cos: dict[str, float], # each chunk's dense cosine to the question
                  ntok: dict[str, int], # each chunk's tokens
                  budget: int = 2000, # most tokens
                  rel: float = 0.8, # after `min_passages`, keep a passage only at this share of the best cosine or more
                  floor: float = 0.0, # ... and at this cosine or more
                  min_passages: int = 3, # passages always kept (budget allowing)
                  max_passages: int = 20, # most passages
                 ) -> tuple[list[str], int]:
    "Chunks in rank order under `budget`, dropping those the dense cosine calls unlikely to help; returns them and their tokens."
    top, chosen, used = (cos[ids[0]] if ids else 0.0), [], 0
    for i in ids:
        if len(chosen) >= max_passages or used + ntok[i] > budget: continue
        if len(chosen) >= min_passages and (cos[i] < rel * top or cos[i] < floor): continue
        chosen.append(i); used += ntok[i]
    return chosen, used

def bench_context(corpus: QasperCorpus, # papers and their questions with evidence
                  groups: dict[str, str], # question id -> its split's name ("train" or "test" in it), e.g. `evaluate.question_groups`
                  budgets: Sequence[int] = (500, 1000, 1500, 2000, 2500, 3000), # fixed budgets of the curve
                  rels: Sequence[float] = (0.6, 0.7, 0.8, 0.9), # adaptive rules: shares of the best cosine
                  floors: Sequence[float] = (0.0, 0.2, 0.3), # adaptive rules: least cosines
                  reference: int = 2000, # the budget an adaptive rule must match (within 0.01 recall on train)
                 ) -> dict:
    "Evidence recall against context tokens: fixed budgets and adaptive rules, by split; the rule chosen on train; the prefix shared by consecutive questions."
    from qasper_rag.retrieve.packing import pack
    from qasper_rag.evaluate.recall import question_recall
    from qasper_rag.retrieve.retrieval import Retriever
    from qasper_rag.retrieve.config import get_config
    split = lambda qid: "train" if "train" in groups.get(qid, "") else "test" if "test" in groups.get(qid, "") else "all"
    r = Retriever(get_config("offline-2k").replace(budget=max(budgets)))
    rows = []
    for p in corpus:
        for q in p.questions:
            if not q.evidence: continue
            res = r.retrieve(p, q.text)
            ids = list(res.stages["final"].ids)
            rows.append({"split": split(q.id), "q": q, "cp": res.chunked, "ids": ids, "cos": dict(zip(res.stages["dense"].ids, res.stages["dense"].scores)),
                         "ntok": {i: res.chunked.by_id[i].n_tokens for i in ids}})
    def measure(choose) -> dict:
        out = {}
        for s in sorted({x["split"] for x in rows}):
            rec, tok = [], []
            for x in (x for x in rows if x["split"] == s):
                chosen, used = choose(x)
                if (v := question_recall(x["cp"], x["q"], chosen, used).recall) is not None: rec.append(v)
                tok.append(used)
            out[s] = {"recall": float(np.mean(rec)), "mean_tokens": float(np.mean(tok)), "median_tokens": float(np.median(tok)), "n": len(rec)}
        return out
    fixed = {b: measure(lambda x, b=b: (lambda c: (list(c.chunk_ids), c.n_tokens))(pack(x["ids"], x["cp"].by_id, b, 20))) for b in budgets}
    rules = [{"rel": rel, "floor": fl, **measure(lambda x, rel=rel, fl=fl: adaptive_pack(x["ids"], x["cos"], x["ntok"], reference, rel, fl))}
             for rel in rels for fl in floors]
    ref = fixed[reference].get("train")
    ok = [x for x in rules if ref and x["train"]["recall"] >= ref["recall"] - 0.01]
    shared, total = [], []
    for a, b in zip(rows, rows[1:]):
        if a["q"].paper_id != b["q"].paper_id: continue
        ca, cb = (pack(x["ids"], x["cp"].by_id, reference, 20).chunk_ids for x in (a, b))
        n = 0
        for u, v in zip(ca, cb):
            if u != v: break
            n += b["ntok"][v]
        shared.append(n); total.append(sum(b["ntok"][v] for v in cb))
    return {"reference": reference, "fixed": {str(b): v for b, v in fixed.items()}, "rules": rules,
            "chosen": min(ok, key=lambda x: x["train"]["mean_tokens"]) if ok else None,
            "shared_prefix": {"pairs": len(shared), "mean_tokens": float(np.mean(shared)) if shared else None,
                              "share": sum(shared) / sum(total) if shared else None,
                              "pairs_sharing": sum(1 for x in shared if x) / len(shared) if shared else None}}

if __name__ == "__main__":
    ROOT = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(shared_data_dir()/"original_format"))
    p.add_argument("--out", default=str(ROOT/"reports/bench/context_adaptive.json"))
    a = p.parse_args()
    from qasper_rag.evaluate.evaluate import question_groups
    t0 = time.perf_counter()
    r = bench_context(load_path(a.data), question_groups(a.data))
    Path(a.out).write_text(json.dumps({"script": "benchmarks/adaptive_context.py", "data": a.data, **r, "seconds": time.perf_counter() - t0}, indent=1) + "\n")
    ref = r["fixed"][str(r["reference"])]
    print(json.dumps({"reference": r["reference"], "fixed": ref, "chosen": r["chosen"], "shared_prefix": r["shared_prefix"]}, indent=1))
    print("wrote", a.out)
