"""How the grounded judge's coverage and threshold were chosen: kappa against the reference labels of citation
support on a grid, the train papers' items (where the choice is made) and the test papers' items apart.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/judge_fit.py [--labels FILE] [--data FOLDER] [--cache FILE]

The judge is `GroundedJudge` as shipped (question-aware grounding, `misbound_numbers`, the embedded Qwen reading the
best window), with only `min_coverage` and `threshold` varied. Its P(Yes) values are cached in `--cache`, so the grid
asks the model once per window (about two minutes on two cores, cold).
"""
import argparse
from pathlib import Path
from qasper_rag.evaluate.evaluate import question_groups
from qasper_rag.core.generate import load_generator
from qasper_rag.answer.judges import GroundedJudge

from qasper_rag.answer.labels import check_labels, read_label_items
ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--labels", default=str(ROOT.parent/"shared/data/labels/citation_support_offline_full.csv"))
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
p.add_argument("--cache", default=str(ROOT/"data/cache/judge_fit.jsonl"))
a = p.parse_args()
Path(a.cache).parent.mkdir(parents=True, exist_ok=True)
items = read_label_items(a.labels)
where = question_groups(a.data)
groups = {i.item_id: where[i.item_id.split("#")[0]] for i in items if i.item_id.split("#")[0] in where}
gen = load_generator("qwen-1.5b")
print(f"{len(items)} labelled items; kappa (false 'supported' rate) per group")
for cov in (0.7, 0.8):
    for thr in (0.3, 0.4, 0.5, 0.6):
        r = check_labels(items, GroundedJudge(gen, threshold=thr, min_coverage=cov, cache=a.cache), groups)
        cells = "  ".join(f"{g}: {v['kappa']:.3f} ({v['false_supported_rate']}, n={v['n']})" for g, v in sorted(r["groups"].items()))
        print(f"coverage {cov}  threshold {thr}  all {r['kappa']:.3f} (n={r['n']})  {cells}", flush=True)
