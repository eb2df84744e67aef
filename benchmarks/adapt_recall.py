"""Evidence recall of the adapted rankers (`qasper-rag adapt`: presets `offline-adapted`, the bi-encoder, and
`offline-cross`, the cross-encoder reranking the top candidates) each against `offline` on the same questions (`qasper_rag.retrieve.adapt.compare_recall`): the whole recall curve (500 to 6,000 tokens), by file (the 10 train
papers, the 47 test papers) and overall, with paired bootstrap intervals of the difference, and the retrieval time
per question (what the adapted stage adds). --page renders the adaptation page beside the JSON, with the run's manifest copied there.

A plain script: it prints numbers and checks nothing. Run from the project root:

    QASPER_ADAPTED=data/adapted .venv/bin/python benchmarks/adapt_recall.py [--out reports/adapt/recall.json] [--page]
"""
from __future__ import annotations
import argparse, json, shutil
from pathlib import Path
from qasper_rag.evaluate.recall import compare_recall
from qasper_rag.core.env import adapted_dir
from qasper_rag.papers.data import load_path
from qasper_rag.core.env import shared_data_dir
from qasper_rag.evaluate.evaluate import question_groups

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(shared_data_dir() / "original_format"))
    ap.add_argument("--base", default="offline")
    ap.add_argument("--other", nargs="+", default=["offline-adapted", "offline-cross"], help="the configurations compared with --base, each in turn")
    ap.add_argument("--out", help="write the numbers as JSON here (and the adaptation run's manifest beside it)")
    ap.add_argument("--page", action="store_true", help="render the adaptation page (adapt.html) beside --out")
    a = ap.parse_args()
    corpus, groups, comparisons = load_path(a.data), question_groups(a.data), []
    for other in a.other:
        res = compare_recall(corpus, a.base, other, groups)
        for g, rows in res["by_group"].items():
            for b, s in rows.items():
                print(f"{g:26s} @{int(b):5d}: {a.base} {s['base']:.3f}  {other} {s['other']:.3f}  diff {s['diff']:+.3f} {s['ci95']} "
                      f"(n={s['n']}, {s['better']} better, {s['worse']} worse)")
        print(f"retrieval per question (median, warm): {res['retrieval_ms']}")
        comparisons.append(res)
    res = {"comparisons": comparisons}
    if a.out:
        out = Path(a.out); out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(res, indent=1) + "\n")
        if (adapted_dir() / "manifest.json").is_file(): shutil.copy(adapted_dir() / "manifest.json", out.parent / "manifest.json")
        if a.page:
            from qasper_rag.report import render
            print(f"page: {render('adapt', {'recall_json': str(out.resolve())}, out.parent)}")

if __name__ == "__main__": main()
