"""Routing across a library of the shared QASPER papers: every shared paper is added to one library
(`qasper_rag.answer.library.measure_library`), and each shared question is routed to papers as `qasper-rag ask --library`
does. Printed and written (--out, JSON): right paper first / among the first 3 and 5, the share of confident routes
and how often they are right, by file (the 10 train papers, the 47 test papers) and overall; beside it, the
open-domain baseline: how often the right paper is among the passages of `scope="corpus"` retrieval at the same
budget, and how often it holds the first passage; and retrieval inside the first 1, 2, 3 routed papers at that budget
(`routed_context_report`), as `ask --library` does for an ambiguous route. --page renders the library page beside the JSON.

A plain script: it prints numbers and checks nothing. Run from the project root (`make library`):

    .venv/bin/python benchmarks/library_routing.py [--library DIR] [--budget 2000] [--out reports/library/routing.json] [--page]

The library goes to a temporary folder unless --library names one (an existing one is reused: nothing is re-read).
"""
from __future__ import annotations
import argparse, json, tempfile
from pathlib import Path
from qasper_rag.core.env import shared_data_dir
from qasper_rag.answer.library_answer import ROUTE_VOTES
from qasper_rag.evaluate.routing import measure_library

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(shared_data_dir() / "original_format"), help="QASPER files to add (a folder)")
    ap.add_argument("--library", help="library folder (default: a temporary one)")
    ap.add_argument("--budget", type=int, default=2000, help="context tokens of the open-domain baseline")
    ap.add_argument("--out", help="write the numbers as JSON here")
    ap.add_argument("--page", action="store_true", help="render the library page (library.html) beside --out")
    a = ap.parse_args()
    m = measure_library(a.data, Path(a.library or tempfile.mkdtemp()) / "library", a.budget)
    rep, base = m["routing"], m["open_domain"]
    print(f"{m['papers']} papers; library built in {m['build_seconds']} s; routing {m['route_ms']:.0f} ms per question")
    for g, s in [*rep["by_group"].items(), ("all", rep["all"])]:
        b = base["by_group"].get(g, base["all"])
        print(f"{g}: n={s['n']} routed first {s['first']}, top3 {s['top3']}, top5 {s['top5']}; confident ({ROUTE_VOTES}+ of 4 agree) "
              f"{s['confident']} (n={s['n_confident']}), right when confident {s['right_when_confident']} | open-domain at {a.budget} tokens: "
              f"right paper in context {b['right_paper_in_context']}, first passage {b['right_paper_first']}, {b['papers_in_context_mean']} papers in context")
        c = m["routed_context"]["by_group"].get(g, m["routed_context"]["all"])
        print("  retrieval inside the routed papers: right paper in context " + ", ".join(f"first {k}: {c[f'right_paper_in_context_{k}']}"
              for k in m["routed_context"]["papers"]) + f"; as ask --library does: {c['right_paper_in_context_asked']} ({c['papers_in_context_mean_asked']} papers)")
    if a.out:
        out = Path(a.out); out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(m, indent=1) + "\n")
        if a.page:
            from qasper_rag.report import render
            print(f"page: {render('library', {'routing_json': str(out.resolve())}, out.parent)}")

if __name__ == "__main__": main()
