"""Which paragraphs of a cited passage are an answer's evidence: every paragraph the passage covers (what the answerer
records), or the paragraph(s) that hold what the shown sentence says. A passage packs up to 500 tokens, often three or
four paragraphs, while a QASPER annotator marks the paragraph the answer rests on; a plain script that prints official
Evidence-F1 of a run's records both ways, per data file, with the paired bootstrap interval. No model is called: the
shown sentences, their citations and the passages sent are all in the records.

    .venv/bin/python benchmarks/evidence_units.py --run reports/offline-full --data ../shared/data/qasper/original_format
"""
import argparse, json
from pathlib import Path
from qasper_rag.app import load_corpus
from qasper_rag.papers.chunking import ChunkedPaper, ChunkerConfig, QasperChunker
from qasper_rag.evaluate.evaluate import question_groups
from qasper_rag.evaluate.metrics import gold_from_corpus, score_questions
from qasper_rag.core.stats import bootstrap_ci
from qasper_rag.answer.answer import evidence_paragraphs

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--run", default=str(ROOT/"reports/offline-full"))
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
a = p.parse_args()

lines = [json.loads(l) for l in open(Path(a.run)/"records.jsonl") if l.strip()]
groups, (corpus, _) = question_groups(a.data), load_corpus(a.data)
gold = gold_from_corpus(corpus)
chunked = {}
def paper(r):
    pid = r["paper_id"]
    if pid not in chunked: chunked[pid] = ChunkedPaper(corpus.paper(pid), QasperChunker(ChunkerConfig(**r["config"]["retrieval"]["chunker"]))(corpus.paper(pid)))
    return chunked[pid]
preds_old, preds_new = {}, {}
for l in lines:
    r, q = l["record"], l["question_id"]
    if q not in gold: continue
    preds_old[q] = {"answer": r.get("short_answer", ""), "evidence": r.get("predicted_evidence", [])}
    ids = {d["doc"]: d["chunk_id"] for d in r.get("passages", [])}
    shown = [(s["claim"], [ids[d] for d in s.get("citations", []) if d in ids]) for s in r.get("sentences", [])
             if s.get("status") not in ("removed", "no answer", None) and s.get("citations")]
    ev = [] if not r.get("predicted_evidence") else evidence_paragraphs(paper(r), r["question"], shown)
    preds_new[q] = {"answer": r.get("short_answer", ""), "evidence": ev}
for g in sorted({groups.get(q, "?") for q in preds_old}):
    gq = {q: gold[q] for q in preds_old if groups.get(q, "?") == g}
    s0, s1 = score_questions(gq, preds_old), score_questions(gq, preds_new)
    x0, x1 = [s.evidence_f1 for s in s0], [s.evidence_f1 for s in s1]
    lo, hi = bootstrap_ci([b - c for c, b in zip(x0, x1)])
    n0 = sum(len(preds_old[q]["evidence"]) for q in gq); n1 = sum(len(preds_new[q]["evidence"]) for q in gq)
    print(f"{g}: Evidence-F1 (official) whole passages {sum(x0)/len(x0):.3f} ({n0} paragraphs) -> supporting paragraphs "
          f"{sum(x1)/len(x1):.3f} ({n1}) (n={len(x0)}; difference 95% CI {lo:+.3f} to {hi:+.3f}; "
          f"{sum(b > c for c, b in zip(x0, x1))} better, {sum(b < c for c, b in zip(x0, x1))} worse)")
