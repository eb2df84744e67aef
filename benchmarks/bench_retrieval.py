"""The retrieval pipeline on the 57 shared QASPER papers: index build time, per-stage query latency
(median and p95) and peak memory, for one configuration.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/bench_retrieval.py [--config final] [--cache DIR] [--limit N] [--llm-rerank qwen-1.5b]

By default the vector cache is a fresh temporary folder, so "index build" includes embedding every
chunk (a cold start); pass `--cache data/cache` to measure a warm start. The BM25 libraries are
compared side by side in benchmarks/bench_bm25.py. The LLM reranker's scores live in the same
cache folder (`relevance.jsonl`), so a cold start also asks the LLM for every candidate: with
`--llm-rerank qwen-1.5b` use `--limit` (the LLM stage took 80 s a question, median of the first 4, on two cores).
"""
from __future__ import annotations
import argparse, platform, resource, statistics, tempfile, time
import numpy as np
from qasper_rag.papers.data import load_path
from qasper_rag.core.env import shared_data_dir
from qasper_rag.retrieve.retrieval import Retriever


from qasper_rag.retrieve.config import get_config
def stats(xs: list[float]) -> str:
    "Median and p95 in milliseconds."
    return f"median {1000 * statistics.median(xs):8.1f} ms   p95 {1000 * float(np.percentile(xs, 95)):8.1f} ms" if xs else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="final")
    ap.add_argument("--cache", help="vector cache folder (default: a fresh temporary folder: cold start)")
    ap.add_argument("--limit", type=int, help="only the first N questions")
    ap.add_argument("--llm-rerank", help="add the LLM reranking stage with this generator (e.g. qwen-1.5b)")
    a = ap.parse_args()
    cfg = get_config(a.config)
    if a.llm_rerank: cfg = cfg.replace(name=f"{cfg.name}+llm", llm_rerank=a.llm_rerank)
    corpus = load_path(shared_data_dir()/"original_format")
    qs = [(p, q) for p in corpus for q in p.questions][:a.limit]
    print(f"python {platform.python_version()} | config {cfg.name} | {len(corpus)} papers, {len(qs)} questions")
    with tempfile.TemporaryDirectory() as tmp:
        r = Retriever(cfg, cache_dir=a.cache or tmp)
        t = time.perf_counter(); _ = r.embedder, r.late, r.llm_relevance; t_models = time.perf_counter() - t
        t = time.perf_counter()
        for p in corpus: r.index(p)
        t_index = time.perf_counter() - t
        n_chunks = sum(len(i.ids) for i in r._indexes.values())
        print(f"model loading {t_models:.1f} s; index build (chunk + BM25 + chunk vectors{'' if a.cache else ', cold cache'}) "
              f"{t_index:.1f} s for {n_chunks} chunks ({n_chunks / t_index:.1f} chunks/s)")
        per_stage, total = {}, []
        for p, q in qs:
            t = time.perf_counter(); res = r.retrieve(p, q.text); total.append(time.perf_counter() - t)
            for k, v in res.timings.items(): per_stage.setdefault(k, []).append(v)
        print("query latency per stage (first question of a paper includes encoding its chunks for the reranker):")
        for k, v in per_stage.items(): print(f"  {k:8} {stats(v)}")
        print(f"  {'total':8} {stats(total)}")
    print(f"peak memory (ru_maxrss) {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
