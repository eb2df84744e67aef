"""Document expansion with generated questions (doc2query; Nogueira et al. 2019): does indexing each
chunk together with the questions the embedded LLM wrote for it raise evidence recall?

A plain script: it prints numbers and checks nothing. The questions come from a `qasper-rag adapt`
run folder (its questions.jsonl: written from paper text only, never from QASPER's questions); the
chunks without generated questions are indexed as they are. Run from the project root:

    .venv/bin/qasper-rag adapt --data FILE --out DIR --no-train --threads 2   # questions for every chunk of FILE's papers
    .venv/bin/python benchmarks/expansion_recall.py --data FILE --questions DIR/questions.jsonl

Variants, each on the `offline` preset (BM25 + MiniLM, RRF k=60), measured at 1,000 / 2,000 /
4,000 / 6,000 tokens over the questions with evidence of the papers whose chunks all have questions:
- bm25: the BM25 list reads the chunk text followed by its generated questions;
- dense: a chunk's vector is its own vector plus `--alpha` times the mean of its questions' vectors (renormalised);
- both.
`--kept-only yes` uses only the questions that passed adapt's round trip.

`--out FILE` writes every variant's recall curve and its paired difference with `offline` at 2,000
tokens (bootstrap 95% interval) for each setting of --kept-only / --alpha given (all four
combinations of all/kept questions and alpha 1.0/0.3 by default), as in reports/adapt/expansion.json
(the train papers, questions for all their chunks; scripts/readme_results.py reads it). What it
showed: expansion pulls relevant chunks into the first 4,000 tokens but not into the first
1,000-2,000, where the expanded BM25 list costs recall (the generated questions match many chunks
of the same paper about equally); no variant is reliably better at 2,000 tokens, so no preset uses
expansion and the test papers' chunks were not given questions for it.
"""
from __future__ import annotations
import argparse, json, statistics
import numpy as np
from qasper_rag.retrieve.bm25 import BM25Index
from qasper_rag.papers.data import load_path
from qasper_rag.evaluate.recall import question_recall
from qasper_rag.retrieve.retrieval import Retriever

BUDGETS = (1000, 2000, 4000, 6000)


def generated(path: str, kept_only: bool) -> dict[str, list[str]]:
    "chunk id -> its generated questions."
    out = {}
    for line in open(path):
        d = json.loads(line)
        out[d["chunk_id"]] = [q["text"] for q in d["questions"] if q["kept"] or not kept_only]
    return out


_MEANS: dict[tuple[str, ...], np.ndarray] = {}  # a chunk's questions -> their mean vector, encoded once for every variant and weight

def question_mean(r: Retriever, questions: list[str]) -> np.ndarray:
    "The mean vector of a chunk's generated questions (every setting uses the same embedded model)."
    key = tuple(questions)
    if key not in _MEANS: _MEANS[key] = r.embedder.encode_documents(questions).mean(axis=0)
    return _MEANS[key]


def expand(r: Retriever, idx, qs: dict[str, list[str]], bm25: bool, dense: bool, alpha: float):
    "Replace `idx`'s BM25 index and/or vectors with the expanded ones (the chunks' texts, what the LLM reads, are unchanged)."
    chunks = idx.chunked.chunks
    if bm25:
        bm = BM25Index(); bm.index([c.text + "\n" + "\n".join(qs.get(c.id, [])) for c in chunks], [c.id for c in chunks])
        object.__setattr__(idx, "bm25", bm)
    if dense:
        vecs = np.array(idx.vectors, copy=True)
        for k, c in enumerate(chunks):
            if qs.get(c.id):
                v = vecs[k] + alpha * question_mean(r, qs[c.id])
                vecs[k] = v / np.linalg.norm(v)
        object.__setattr__(idx, "vectors", vecs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--questions", required=True, help="an adapt run's questions.jsonl")
    ap.add_argument("--config", default="offline")
    ap.add_argument("--alpha", type=float, nargs="+", default=[1.0, 0.3], help="weights of the questions' mean vector")
    ap.add_argument("--kept-only", choices=["no", "yes", "both"], default="both", help="use only the round trip's kept questions")
    ap.add_argument("--out", help="write the results here (JSON)")
    a = ap.parse_args()
    corpus = load_path(a.data)
    runs = []
    for kept in {"no": [False], "yes": [True], "both": [False, True]}[a.kept_only]:
        for alpha in a.alpha:
            print(f"questions: {'kept' if kept else 'all'}, alpha {alpha}")
            runs.append({"kept_only": kept, "alpha": alpha, **measure(corpus, generated(a.questions, kept), a.config, alpha)})
    if a.out:
        lines = [json.loads(l) for l in open(a.questions)]
        out = {"data": a.data, "config": a.config, "questions_file": a.questions, "chunks": len(lines),
               "questions": sum(len(d["questions"]) for d in lines), "kept": sum(q["kept"] for d in lines for q in d["questions"]),
               "generation_seconds": round(sum(d["seconds"] for d in lines), 1), "budgets": list(BUDGETS), "runs": runs}
        with open(a.out, "w") as f: f.write(json.dumps(out, indent=1) + "\n")
        print(f"written: {a.out}")


_OFFLINE: dict = {}  # (config, chunks with questions) -> the unexpanded recall curve and its number of papers


def measure(corpus, qs: dict[str, list[str]], config: str, alpha: float) -> dict:
    "Every variant's recall curve over the papers whose chunks all have questions, and its paired difference with offline at 2,000."
    variants = {"offline": (False, False), "bm25": (True, False), "dense": (False, True), "both": (True, True)}
    rows = {}
    for name, (b, d) in variants.items():
        if name == "offline" and (config, frozenset(qs)) in _OFFLINE:  # unexpanded: the same for every weight and question set
            rows[name], papers = _OFFLINE[config, frozenset(qs)]; continue
        r = Retriever(config)
        rec = {bud: [] for bud in BUDGETS}
        papers = 0
        for p in corpus:
            idx = r.index(p)
            if not all(c.id in qs for c in idx.chunked.chunks): continue  # only papers whose every chunk has questions
            papers += 1
            expand(r, idx, qs, b, d, alpha)
            for q in p.questions:
                if not q.evidence: continue
                res = r.retrieve(p, q.text)
                for bud in BUDGETS: rec[bud].append(question_recall(res.chunked, q, r.repack(res, bud).chunk_ids).recall)
        rows[name] = rec
        if name == "offline": _OFFLINE[config, frozenset(qs)] = rec, papers
        print(f"{name:8s} " + "  ".join(f"{bud}: {statistics.mean(v):.3f}" for bud, v in rec.items())
              + f"   (n={len(rec[2000])} questions, {papers} papers)", flush=True)
    base, out = rows["offline"][2000], {"n": len(rows["offline"][2000]), "papers": papers, "variants": {}}
    for name, rec in rows.items():
        v = out["variants"][name] = {"recall": {str(b): round(statistics.mean(x), 4) for b, x in rec.items()}}
        if name == "offline": continue
        d = np.array(rec[2000]) - np.array(base)
        boot = np.random.default_rng(0).choice(d, (2000, len(d))).mean(axis=1)
        v["diff_2000"] = {"diff": round(float(np.mean(d)), 4), "ci95": [round(float(np.percentile(boot, q)), 4) for q in (2.5, 97.5)],
                          "better": int((d > 0).sum()), "worse": int((d < 0).sum())}
        print(f"{name}: 2,000 tokens {np.mean(d):+.3f} (95% {v['diff_2000']['ci95'][0]:+.3f} to {v['diff_2000']['ci95'][1]:+.3f}); "
              f"better {v['diff_2000']['better']}, worse {v['diff_2000']['worse']}")
    return out


if __name__ == "__main__":
    main()
