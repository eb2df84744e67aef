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
`--kept-only` uses only the questions that passed adapt's round trip.

Measured on the 10 train papers (2026-12-03; questions for all 285 of their chunks, 847 questions,
594 kept; 26 min of generation on two cores; n=44 questions with evidence; recall at 1,000 / 2,000 /
4,000 / 6,000 tokens):
    offline                       0.481 / 0.638 / 0.814 / 0.932
    bm25, all questions           0.400 / 0.612 / 0.837 / 0.920
    dense, all, alpha 1           0.453 / 0.591 / 0.875 / 0.920
    both, all, alpha 1            0.411 / 0.636 / 0.848 / 0.920
    dense, kept, alpha 1          0.464 / 0.665 / 0.856 / 0.936   (2,000: +0.027, 95% -0.034 to +0.100)
    both, kept, alpha 0.3         0.400 / 0.657 / 0.867 / 0.936   (2,000: +0.019, 95% -0.030 to +0.080)
Expansion moves relevant chunks from the deep ranks into the first 4,000 tokens (+0.02 to +0.06)
but not into the first 1,000-2,000, where it mostly costs recall (the expanded BM25 list: -0.08 at
1,000 tokens): the generated questions match many chunks of the same paper about equally. No
variant is reliably better at 2,000 tokens, so no preset uses expansion and the test papers'
chunks were not given questions for it.
"""
from __future__ import annotations
import argparse, json, statistics
import numpy as np
from qasper_rag.bm25 import BM25Index
from qasper_rag.data import load_path
from qasper_rag.recall import question_recall
from qasper_rag.retrieval import Retriever

BUDGETS = (1000, 2000, 4000, 6000)


def generated(path: str, kept_only: bool) -> dict[str, list[str]]:
    "chunk id -> its generated questions."
    out = {}
    for line in open(path):
        d = json.loads(line)
        out[d["chunk_id"]] = [q["text"] for q in d["questions"] if q["kept"] or not kept_only]
    return out


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
                v = vecs[k] + alpha * r.embedder.encode_documents(qs[c.id]).mean(axis=0)
                vecs[k] = v / np.linalg.norm(v)
        object.__setattr__(idx, "vectors", vecs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--questions", required=True, help="an adapt run's questions.jsonl")
    ap.add_argument("--config", default="offline")
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--kept-only", action="store_true")
    a = ap.parse_args()
    qs = generated(a.questions, a.kept_only)
    corpus = load_path(a.data)
    variants = {"offline": (False, False), "bm25": (True, False), "dense": (False, True), "both": (True, True)}
    rows = {}
    for name, (b, d) in variants.items():
        r = Retriever(a.config)
        rec = {bud: [] for bud in BUDGETS}
        papers = 0
        for p in corpus:
            idx = r.index(p)
            if not all(c.id in qs for c in idx.chunked.chunks): continue  # only papers whose every chunk has questions
            papers += 1
            expand(r, idx, qs, b, d, a.alpha)
            for q in p.questions:
                if not q.evidence: continue
                res = r.retrieve(p, q.text)
                for bud in BUDGETS: rec[bud].append(question_recall(res.chunked, q, r.repack(res, bud).chunk_ids).recall)
        rows[name] = rec
        print(f"{name:8s} " + "  ".join(f"{bud}: {statistics.mean(v):.3f}" for bud, v in rec.items())
              + f"   (n={len(rec[2000])} questions, {papers} papers)", flush=True)
    base = rows["offline"][2000]
    for name, rec in rows.items():
        if name == "offline": continue
        d = np.array(rec[2000]) - np.array(base)
        boot = np.random.default_rng(0).choice(d, (2000, len(d))).mean(axis=1)
        print(f"{name}: 2,000 tokens {np.mean(d):+.3f} (95% {np.percentile(boot, 2.5):+.3f} to {np.percentile(boot, 97.5):+.3f}); "
              f"better {int((d > 0).sum())}, worse {int((d < 0).sum())}")


if __name__ == "__main__":
    main()
