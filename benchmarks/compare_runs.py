"""Two evaluation runs side by side on the questions both finished (`qasper_rag.evaluate.evaluate.compare_runs`): Answer-F1 and
Evidence-F1 (official semantics) per data file with the paired bootstrap 95% interval of the difference, Unanswerable
short answers, shown claims and the share the run's own judge supports, median seconds and tokens per question.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/compare_runs.py --before FOLDER --after FOLDER [--label TEXT] [--data FOLDER] [--out FILE]

`--before` and `--after` are run folders (their records.jsonl); `--before` may also be `git:REV`, the report run
committed at REV (reports/offline-full/records.jsonl read with `git show`), so the run a report replaced stays
comparable after the new one is committed. The result goes to `--out` (default: AFTER/previous_run.json), which the
evaluation page shows when it lies in the run folder.
"""
import argparse, json, subprocess
from pathlib import Path
from qasper_rag.app import load_corpus
from qasper_rag.evaluate.evaluate import compare_runs, question_groups

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--before", required=True, help="the earlier run folder, or git:REV for the report run committed at REV")
p.add_argument("--after", default=str(ROOT/"reports/offline-full"), help="the later run folder")
p.add_argument("--label", default="", help="how the page names the earlier run (default: --before)")
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
p.add_argument("--out", default="", help="JSON file written (default: AFTER/previous_run.json)")
a = p.parse_args()

def records(where: str) -> tuple[list[dict], dict]:
    "A run's records and settings, from a folder or from git:REV (the committed report run)."
    if where.startswith("git:"):
        rev = subprocess.run(["git", "rev-parse", "--short", where[4:]], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        show = lambda f: subprocess.run(["git", "show", f"{rev}:reports/offline-full/{f}"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        return [json.loads(l) for l in show("records.jsonl").splitlines() if l.strip()], {**json.loads(show("run.json")), "commit": rev}
    d = Path(where)
    if not (d/"records.jsonl").exists(): raise SystemExit(f"{d}: no records.jsonl there; pass a run folder (or git:REV)")
    return [json.loads(l) for l in open(d/"records.jsonl") if l.strip()], json.loads((d/"run.json").read_text()) if (d/"run.json").exists() else {}

(before, b_run), (after, a_run) = records(a.before), records(a.after)
corpus, _ = load_corpus(a.data)
rows = compare_runs(before, after, corpus, question_groups(a.data))
for r in rows:
    print(f"{r['group']:26s} n={r['n']:3d}  Answer-F1 {r['answer_f1_before']:.3f} -> {r['answer_f1_after']:.3f} "
          f"(difference {r['answer_f1_difference_ci95']})  Evidence-F1 {r['evidence_f1_before']:.3f} -> {r['evidence_f1_after']:.3f} "
          f"(difference {r['evidence_f1_difference_ci95']})  Unanswerable {r['unanswerable_before']} -> {r['unanswerable_after']}  "
          f"shown claims {r['shown_claims_before']} -> {r['shown_claims_after']}  s/question {r['seconds_median_before']} -> {r['seconds_median_after']} "
          f"at median prompt tokens {r['prompt_tokens_median_before']} -> {r['prompt_tokens_median_after']}, completion {r['completion_tokens_median_before']} -> {r['completion_tokens_median_after']}")
side = lambda run: {**{k: run.get(k) for k in ("model", "judge", "verify", "config")}, "commit": run.get("commit") or (run.get("code") or {}).get("commit")}  # runs keep it under `code`
out = Path(a.out or Path(a.after)/"previous_run.json")
out.write_text(json.dumps({"before": {"label": a.label or a.before, **side(b_run), "questions": len(before)},
                           "after": {**side(a_run), "questions": len(after)}, "rows": rows}, indent=1) + "\n")
print(f"wrote {out}")
