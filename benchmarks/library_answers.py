"""Answers across a library of the shared QASPER papers, as `qasper-rag ask --library` gives them: how often an answer
cites a passage of another paper than the one its question is about (the library issue's wrong-paper citation rate),
with and without the ambiguity notice, by file (the 10 train papers, the 47 test papers) and overall, with n.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/library_answers.py --library DIR [--data FOLDER] [--out FILE] [--limit N] [--threads 2]

Every shared paper goes into the library at --library (made when new, reused when it exists: `make library`'s papers
plus nothing else). Each question is asked of the whole library with the default answer settings (embedded model,
verification on) and one JSON line per answer is appended to --out (default: reports/library/answers.jsonl): the route,
whether the notice was shown, the paper of every passage sent and cited. An interrupted run resumes where it stopped;
--limit N answers at most N more questions (the train papers' questions first, then the test papers'), so a long run
can be spread over sessions. The summary covers every answer in --out.
"""
from __future__ import annotations
import argparse, json, time
from pathlib import Path
from qasper_rag.papers.chunking import chunk_paper_id
from qasper_rag.core.env import shared_data_dir
from qasper_rag.evaluate.evaluate import question_groups
from qasper_rag.evaluate.routing import wrong_paper_summary

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(shared_data_dir() / "original_format"), help="QASPER files to add (a folder)")
    ap.add_argument("--library", required=True, help="library folder (made when new; an existing one is reused)")
    ap.add_argument("--out", default="reports/library/answers.jsonl", help="answers, one JSON line each (appended; resumed)")
    ap.add_argument("--limit", type=int, help="answer at most this many more questions")
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    a = ap.parse_args()
    from tqdm.auto import tqdm
    from qasper_rag.app import make_answerer
    from qasper_rag.answer.library import Library, MANIFEST
    from qasper_rag.answer.library_answer import LibraryAnswerer
    from qasper_rag.settings import AnswerSettings
    root, out = Path(a.library), Path(a.out)
    lib = Library(root, create=not (root / MANIFEST).exists())
    lib.add(sorted(Path(a.data).glob("*.json*")), progress=True); lib.index()
    groups = question_groups(a.data)
    done = {json.loads(l)["question_id"] for l in out.read_text().splitlines() if l.strip()} if out.exists() else set()
    todo = sorted((q for q in lib.corpus().questions() if q.id not in done), key=lambda q: "train" not in groups.get(q.id, ""))[:a.limit]
    if todo:
        la = LibraryAnswerer(lib, make_answerer(AnswerSettings(threads=a.threads).resolved(), cache_dir=lib.cache_dir))
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "a") as f:
            for q in tqdm(todo, desc="answers across the library"):
                t0 = time.perf_counter()
                rec, route = la.ask(q.text)
                row = {"question_id": q.id, "paper_id": q.paper_id, "group": groups.get(q.id, "all"), "question": q.text,
                       "route": route.to_dict(), "notice": bool(route.ambiguous), "answer": rec.answer, "short_answer": rec.short_answer,
                       "sent_papers": sorted({chunk_paper_id(c.chunk_id) for c in rec.context}),
                       "cited_papers": [chunk_paper_id(p.chunk_id) for p in rec.passages], "failed": rec.failed,
                       "seconds": round(time.perf_counter() - t0, 2)}
                f.write(json.dumps(row) + "\n"); f.flush()
    rows = [json.loads(l) for l in out.read_text().splitlines() if l.strip()] if out.exists() else []
    for g in sorted({r["group"] for r in rows}) + ["all"]:
        s = wrong_paper_summary([r for r in rows if g in ("all", r["group"])])
        print(f"{g}: " + "; ".join(f"{k}: " + ", ".join(f"{kk} {vv}" for kk, vv in v.items()) for k, v in s.items()))

if __name__ == "__main__": main()
