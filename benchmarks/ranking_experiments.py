"""Ranking experiments at small budgets: what limits evidence recall at 2,000 tokens, and the
variants of the offline ranking that were tried and not kept.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/ranking_experiments.py [--data PATH] [--sentences] [--hyde]

Every number is evidence recall (`qasper_rag.evaluate.recall`) over the shared questions with evidence, at
1,000 / 2,000 / 4,000 / 6,000 tokens (chunker tokens, at most 20 passages, paper order), on the
`offline` ranking (BM25 + MiniLM reading whole chunks, RRF k=60) unless said otherwise:

- the ceiling: the smallest chunk holding each gold item, packed cheapest first;
- where the gold chunks rank, and how many are lost at 2,000 tokens;
- paragraph chunks, alone and scored with the rank of the 500-token chunk that holds them;
- packing by RRF score per token^alpha instead of by rank;
- the best-ranked table/figure captions first;
- a logistic-regression fusion of 14 features, trained on the train papers and tested on the
  test papers (and the reverse);
- `--sentences`: the MiniLM similarity of a chunk's best sentence as a third list (embeds every
  sentence: about 10 minutes on two cores);
- `--hyde`: a hypothetical passage from Qwen2.5-Coder-1.5B for every question (about 2 s each),
  as a dense and a BM25 list beside the question's own.

The LLM reranker is measured through the real path in `nbs/pages/22_ablations.ipynb`.
"""
from __future__ import annotations
import argparse, collections, re, statistics
import numpy as np
from qasper_rag.papers.chunking import ChunkerConfig
from qasper_rag.app import load_corpus
from qasper_rag.core.env import shared_data_dir
from qasper_rag.retrieve.packing import pack, rrf
from qasper_rag.evaluate.recall import question_recall
from qasper_rag.retrieve.retrieval import Retriever

from qasper_rag.retrieve.config import get_config
BUDGETS = (1000, 2000, 4000, 6000)


def order(ids, scores) -> list[str]:
    "Ids by descending score, ties in their original order."
    return [ids[k] for k in np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")]


def fuse(*rankings) -> list[str]: return [i for i, _ in rrf(rankings, 60)]


class Table:
    "Recall at each budget per variant."
    def __init__(self): self.rows = collections.defaultdict(lambda: collections.defaultdict(list))
    def add(self, name, cp, q, ranking, by_id=None, max_passages=20):
        for b in BUDGETS:
            ids = pack(ranking, by_id or cp.by_id, b, max_passages, "paper").chunk_ids
            self.rows[name][b].append(question_recall(cp, q, ids).recall)
    def show(self, title):
        print(f"\n{title}")
        for name, v in self.rows.items():
            print(f"  {name:44s} " + "  ".join(f"{b}: {statistics.mean(x):.3f}" for b, x in v.items()) + f"   (n={len(v[2000])})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(shared_data_dir()/"original_format"))
    ap.add_argument("--sentences", action="store_true", help="also the best-sentence list (slow)")
    ap.add_argument("--hyde", action="store_true", help="also HyDE on every question (needs the embedded generator)")
    a = ap.parse_args()
    corpus, _ = load_corpus(a.data)
    r = Retriever(get_config("offline"), corpus=corpus)
    items = [(p, q, r.retrieve(p, q.text)) for p in corpus for q in p.questions if q.evidence]
    print(f"{len(items)} questions with evidence, {len(corpus)} papers")

    # the ceiling, and where the gold chunks rank
    t = Table(); ranks, lost = collections.Counter(), collections.Counter()
    for p, q, res in items:
        cp, final = res.chunked, res.stages["final"]
        cheapest = sorted({min(l.full, key=lambda c: cp.by_id[c].n_tokens) for ev in q.evidence if (l := cp.locate(ev)).full},
                          key=lambda c: cp.by_id[c].n_tokens)
        t.add("ceiling: smallest chunk per gold item", cp, q, cheapest)
        t.add("offline", cp, q, final)
        ctx = set(pack(final, cp.by_id, 2000, 20, "paper").chunk_ids)
        for ev in q.evidence:
            if not (l := cp.locate(ev)).full: continue
            k = min(final.index(c) for c in l.full) // 3 * 3
            ranks[k] += 1; lost[k] += not ctx & set(l.full)
    t.show("ceiling vs offline")
    print("  rank of the best gold chunk: items (lost at 2,000 tokens)")
    print("  " + ", ".join(f"{k}-{k + 2}: {ranks[k]} ({lost[k]})" for k in sorted(ranks)))

    # paragraph chunks, alone and with their enclosing chunk's rank
    rp = Retriever(get_config("offline").replace(name="paragraphs", chunker=ChunkerConfig(unit="paragraph")), corpus=corpus)
    key = lambda c: {(s.section, s.paragraph) for s in c.spans} if c.spans else {("float", c.float_index)}
    t = Table()
    for p, q, res in items:
        b = rp.retrieve(p, q.text); pids = b.stages["final"]
        parent = {}
        for i, c in enumerate(res.stages["final"]):
            for k in key(res.chunked.by_id[c]): parent.setdefault(k, i)
        by_parent = sorted(pids, key=lambda c: (min(parent.get(k, 999) for k in key(b.chunked.by_id[c])), pids.index(c)))
        t.add("paragraph chunks", b.chunked, q, pids)
        t.add("paragraph chunks + enclosing chunk's rank", b.chunked, q, fuse(b.stages["bm25"], b.stages["dense"], by_parent))
    t.show("paragraph chunks")

    # packing by score per token, captions first
    t = Table()
    for p, q, res in items:
        cp, final = res.chunked, res.stages["final"]
        sc = dict(rrf([res.stages["bm25"], res.stages["dense"]], 60))
        for alpha in (0.15, 0.3, 0.5):
            t.add(f"RRF score / tokens^{alpha}", cp, q, sorted(sc, key=lambda c: -sc[c] / cp.by_id[c].n_tokens ** alpha))
        floats = [c for c in final if cp.by_id[c].kind in ("table", "figure")]
        for m in (1, 2, 3):
            t.add(f"best {m} caption(s) first", cp, q, floats[:m] + [c for c in final if c not in floats[:m]])
    t.show("packing")

    # learned fusion: train on one split, test on the other
    from sklearn.linear_model import LogisticRegression
    from qasper_rag.retrieve.bm25 import bm25_tokenize
    num = re.compile(r"\b(how (many|much|big|large|well)|size|score|accuracy|performance|result|improve|outperform|compare)", re.I)
    data = re.compile(r"\b(data ?set|corpus|corpora|data)\b", re.I)
    def features(p, q, res):
        idx = r.index(p); cp, ids = res.chunked, idx.ids
        bm, dn = idx.bm25.scores(q.text), idx.vectors @ res.query_vector
        rank = {s: {c: i for i, c in enumerate(res.stages[s])} for s in ("bm25", "dense", "final")}
        gold = {c for ev in q.evidence for c in cp.locate(ev).full}
        qt, isnum, isdata = set(bm25_tokenize(q.text)), bool(num.search(q.text)), bool(data.search(q.text))
        X = [[bm[k] / (max(bm) or 1), dn[k], dn[k] - max(dn), *(1 / (1 + rank[s][c]) for s in ("bm25", "dense", "final")),
              ch.kind == "abstract", fl, ch.n_tokens / 500, ch.order / len(ids),
              len(qt & set(bm25_tokenize(ch.section or ""))) / (len(qt) or 1), fl * isnum, fl * isdata, (ch.kind == "abstract") * isdata]
             for k, c in enumerate(ids) for ch in [cp.by_id[c]] for fl in [ch.kind in ("table", "figure")]]
        return ids, np.array(X, float), np.array([c in gold for c in ids])
    from pathlib import Path
    from qasper_rag.papers.data import load_path
    train_files = sorted(Path(a.data).glob("*train*")) if Path(a.data).is_dir() else []
    train_ids = {p.id for f in train_files for p in load_path(f)}
    if not train_ids or len(train_ids) == len(corpus): print("\nlearned fusion skipped: no train/test split in --data")
    else:
        by_file = collections.defaultdict(list)
        for p, q, res in items: by_file[p.id in train_ids].append((p, q, res, *features(p, q, res)))
        t = Table()
        for fit_on, test_on, label in ((True, False, "train papers -> test papers"), (False, True, "test papers -> train papers")):
            m = LogisticRegression(class_weight="balanced", max_iter=2000).fit(
                np.vstack([x[4] for x in by_file[fit_on]]), np.concatenate([x[5] for x in by_file[fit_on]]))
            for p, q, res, ids, X, y in by_file[test_on]:
                t.add(f"offline, on the {label.split(' -> ')[1]}", res.chunked, q, res.stages["final"])
                t.add(f"logistic fusion, {label}", res.chunked, q, order(ids, m.predict_proba(X)[:, 1]))
        t.show("learned fusion (14 features)")

    if a.sentences:
        from qasper_rag.retrieve.crag import sentences
        emb, t = r.embedder, Table()
        for p, q, res in items:
            idx = r.index(p); qv = res.query_vector
            best = [float((emb.encode_documents([c.text[:c.prefix_chars] + s for s in
                                                 ([s for s in sentences(c.body) if len(s.split()) >= 3] or [c.body])]) @ qv).max())
                    for c in idx.chunked.chunks]
            t.add("BM25 + chunk vector + best sentence", res.chunked, q, fuse(res.stages["bm25"], res.stages["dense"], order(idx.ids, best)))
        t.show("best sentence")

    if a.hyde:
        from qasper_rag.core.generate import load_generator
        from qasper_rag.retrieve.retrieval import HYDE_PROMPT
        gen, emb, t = load_generator("qwen-1.5b"), r.embedder, Table()
        for p, q, res in items:
            idx = r.index(p)
            h = gen.generate([{"role": "user", "content": HYDE_PROMPT.format(title=p.title, question=q.text)}], max_tokens=96).text
            hv = emb.encode_documents([h])[0]
            t.add("BM25 + dense + HyDE dense + HyDE BM25", res.chunked, q,
                  fuse(res.stages["bm25"], res.stages["dense"], order(idx.ids, idx.vectors @ hv), order(idx.ids, idx.bm25.scores(q.text + " " + h))))
        t.show("HyDE on every question")


if __name__ == "__main__":
    main()
