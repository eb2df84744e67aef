"""BM25Index on the 57 shared QASPER papers: build time, query latency and memory, both backends.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/bench_bm25.py [--method lucene|robertson] [--repeats 5] [--k 10]

Per paper: one index per paper, each question of the paper against its own paper's index (the
reference design). All papers: one index over every chunk, every question against it.
"""
from __future__ import annotations
import argparse, platform, resource, statistics, time, tracemalloc
import numpy as np
import bm25s, rank_bm25  # noqa: F401  (versions)
from importlib.metadata import version
from qasper_rag.retrieve.bm25 import BM25Index, bm25_tokenize, stem
from qasper_rag.papers.chunking import QasperChunker
from qasper_rag.papers.data import load_path
from qasper_rag.core.env import shared_data_dir

BACKENDS = ("bm25s", "rank_bm25")


def ms(seconds: float) -> str: return f"{1000 * seconds:9.2f}"


def pct(xs: list[float], q: float) -> float: return float(np.percentile(xs, q))


def latencies(pairs: list[tuple[BM25Index, str]], k: int, repeats: int) -> list[float]:
    "Seconds of every `search(q, k)` call, each query repeated `repeats` times."
    out = []
    for idx, q in pairs:
        for _ in range(repeats):
            t = time.perf_counter(); idx.search(q, k); out.append(time.perf_counter() - t)
    return out


def traced(fn):
    "Run `fn`; return its result, the peak and the retained Python heap (bytes) that tracemalloc saw."
    tracemalloc.start(); tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    out = fn()
    now, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, peak - before, now - before


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="lucene", choices=["lucene", "robertson"])
    ap.add_argument("--repeats", type=int, default=5, help="times each query is run for the latency figures")
    ap.add_argument("--k", type=int, default=10)
    a = ap.parse_args()

    print(f"python {platform.python_version()} | bm25s {version('bm25s')} | rank-bm25 {version('rank-bm25')} | "
          f"method={a.method} k1=1.5 b=0.75 | k={a.k} | repeats={a.repeats}")
    t = time.perf_counter()
    corpus = load_path(shared_data_dir()/"original_format")
    chunker = QasperChunker()
    chunks = {p.id: chunker(p) for p in corpus}
    t_chunk = time.perf_counter() - t
    all_chunks = [c for cs in chunks.values() for c in cs]
    questions = corpus.questions()
    sizes = [len(cs) for cs in chunks.values()]
    print(f"{len(corpus)} papers, {len(all_chunks)} chunks ({min(sizes)}-{max(sizes)} per paper, median "
          f"{statistics.median(sizes):.0f}), {len(questions)} questions; load + chunk {t_chunk:.2f} s")

    texts = [c.text for c in all_chunks]
    bm25_tokenize("warm up")  # imports nltk (about a second) outside the timing
    stem.cache_clear()
    t = time.perf_counter(); toks = [bm25_tokenize(x) for x in texts]; t_cold = time.perf_counter() - t
    t = time.perf_counter(); [bm25_tokenize(x) for x in texts]; t_warm = time.perf_counter() - t
    n_tok = sum(map(len, toks))
    print(f"tokenize all chunks: {t_cold:.3f} s cold stem cache, {t_warm:.3f} s warm; {n_tok} terms, "
          f"{len(set(t for d in toks for t in d))} distinct\n")

    rows, per_backend = [], {}
    for be in BACKENDS:
        # one index per paper (build includes tokenization, stem cache warm)
        builds, per_paper = [], {}
        for pid, cs in chunks.items():
            t = time.perf_counter()
            per_paper[pid] = BM25Index(backend=be, method=a.method).index([c.text for c in cs], [c.id for c in cs])
            builds.append(time.perf_counter() - t)
        lat_p = latencies([(per_paper[q.paper_id], q.text) for q in questions], a.k, a.repeats)
        # one index over all chunks
        t = time.perf_counter()
        big = BM25Index(backend=be, method=a.method).index(texts, [c.id for c in all_chunks])
        build_all = time.perf_counter() - t
        t = time.perf_counter(); BM25Index(backend=be, method=a.method)._build(toks, [c.id for c in all_chunks])
        build_all_pretok = time.perf_counter() - t
        lat_a = latencies([(big, q.text) for q in questions], a.k, a.repeats)
        # memory: a fresh global index under tracemalloc (Python heap incl. numpy buffers)
        _, peak, kept = traced(lambda: BM25Index(backend=be, method=a.method).index(texts, [c.id for c in all_chunks]))
        per_backend[be] = big
        rows.append((be, sum(builds), statistics.median(builds), max(builds), build_all, build_all_pretok,
                     statistics.median(lat_p), pct(lat_p, 95), statistics.median(lat_a), pct(lat_a, 95), peak, kept))

    print("build times (s = seconds, ms = milliseconds)")
    print(f"{'backend':10} {'57 papers s':>11} {'paper med ms':>12} {'paper max ms':>12} {'all-chunks ms':>13} {'pre-tokenized ms':>16}")
    for r in rows:
        print(f"{r[0]:10} {r[1]:11.3f} {ms(r[2]):>12} {ms(r[3]):>12} {ms(r[4]):>13} {ms(r[5]):>16}")
    print(f"\nquery latency, search(question, k={a.k}) incl. query tokenization, {len(questions)} questions x {a.repeats}")
    print(f"{'backend':10} {'per-paper med ms':>16} {'p95 ms':>9} {'all-chunks med ms':>17} {'p95 ms':>9}")
    for r in rows:
        print(f"{r[0]:10} {ms(r[6]):>16} {ms(r[7]):>9} {ms(r[8]):>17} {ms(r[9]):>9}")
    print("\nmemory of building the all-chunks index (tracemalloc, Python heap incl. numpy)")
    print(f"{'backend':10} {'peak MiB':>9} {'retained MiB':>13}")
    for r in rows:
        print(f"{r[0]:10} {r[10] / 2**20:9.2f} {r[11] / 2**20:13.2f}")

    diffs = [np.abs(per_backend["bm25s"].scores(q.text) - per_backend["rank_bm25"].scores(q.text)).max() for q in questions]
    same = sum([i for i, _ in per_backend["bm25s"].search(q.text, a.k)] == [i for i, _ in per_backend["rank_bm25"].search(q.text, a.k)]
               for q in questions)
    print(f"\nparity on the all-chunks index: max |score diff| {max(diffs):.2e}; identical top-{a.k} for {same}/{len(questions)} questions")
    print(f"process peak RSS (getrusage ru_maxrss, includes chunking tokenizer): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
