"""Routing across a library of the shared QASPER papers: every shared paper is added to one library
(`qasper_rag.library`), and each shared question is routed to papers as `qasper-rag ask --library` does.
Printed and written (--out, JSON): right paper first / among the first 3 and 5, the share of confident routes and
how often they are right, by file (the 10 train papers, the 47 test papers) and overall; beside it, the
open-domain baseline: how often the right paper is among the passages of `scope="corpus"` retrieval at the same
budget, and how often it holds the first passage.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/library_routing.py [--library DIR] [--budget 2000] [--out reports/library/routing.json]

The library goes to a temporary folder unless --library names one (an existing one is reused: nothing is re-read).
"""
from __future__ import annotations
import argparse, json, tempfile, time
from pathlib import Path
from qasper_rag.data import shared_data_dir
from qasper_rag.evaluate import question_groups
from qasper_rag.library import Library, routing_report, ROUTE_VOTES

def open_domain_baseline(lib: Library, groups: dict, budget: int) -> dict:
    "Right paper among the passages / first of plain open-domain retrieval (RRF over all chunks), by group."
    r = lib._retriever("open-domain")
    r.config = r.config.replace(budget=budget)
    rows = []
    for q in lib.corpus().questions():
        res = r.retrieve(None, q.text)
        papers = [i.rsplit(":", 1)[0] for i in res.context.chunk_ids]
        first = res.stages["final"].ids[0].rsplit(":", 1)[0]
        rows.append((groups.get(q.id, "all"), q.paper_id in papers, first == q.paper_id, len(set(papers))))
    out = {}
    for g in sorted({x[0] for x in rows}) + ["all"]:
        xs = [x for x in rows if g == "all" or x[0] == g]
        out[g] = {"n": len(xs), "right_paper_in_context": round(sum(x[1] for x in xs) / len(xs), 3),
                  "right_paper_first": round(sum(x[2] for x in xs) / len(xs), 3),
                  "papers_in_context_mean": round(sum(x[3] for x in xs) / len(xs), 2)}
    return out

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(shared_data_dir() / "original_format"), help="QASPER files to add (a folder)")
    ap.add_argument("--library", help="library folder (default: a temporary one)")
    ap.add_argument("--budget", type=int, default=2000, help="context tokens of the open-domain baseline")
    ap.add_argument("--out", help="write the numbers as JSON here")
    a = ap.parse_args()
    root = Path(a.library or tempfile.mkdtemp()) / "library"
    lib = Library(root, create=not (root / "manifest.json").exists())
    t0 = time.perf_counter()
    files = sorted(Path(a.data).glob("*.json"))
    rows = lib.add(files)
    print(f"library {root}: {len(lib)} papers ({', '.join(r.status for r in rows)}), add {time.perf_counter() - t0:.1f} s")
    print(f"index: {lib.index()}")
    groups = question_groups(a.data)
    t0 = time.perf_counter()
    rep = routing_report(lib.router(), lib.corpus().questions(), groups)
    per_q = (time.perf_counter() - t0) / max(1, rep["all"]["n"])
    base = open_domain_baseline(lib, groups, a.budget)
    for g, s in [*rep["by_group"].items(), ("all", rep["all"])]:
        b = base[g]
        print(f"{g}: n={s['n']} routed first {s['first']}, top3 {s['top3']}, top5 {s['top5']}; confident ({ROUTE_VOTES}+ of 4 agree) "
              f"{s['confident']} (n={s['n_confident']}), right when confident {s['right_when_confident']} | open-domain at {a.budget} tokens: "
              f"right paper in context {b['right_paper_in_context']}, first passage {b['right_paper_first']}, {b['papers_in_context_mean']} papers in context")
    print(f"routing: {per_q * 1000:.0f} ms per question")
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        rep.pop("rows")
        Path(a.out).write_text(json.dumps({"routing": rep, "open_domain": base, "budget": a.budget, "route_ms": round(per_q * 1000, 1),
                                           "papers": len(lib), "data": Path(a.data).name}, indent=1) + "\n")

if __name__ == "__main__": main()
