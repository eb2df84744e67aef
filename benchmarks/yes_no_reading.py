"""A Yes or No that no passage settles: withdrawn to Unanswerable (the verifier before issue 38's change) or kept as the
model's reading with a notice (after), replayed on committed runs from their records alone.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/yes_no_reading.py [--out reports/judges/yes_no_reading.json]

For every record of a yes/no question, the model's own short answer (`verification.short_answer.before`) is made to agree
with the record's verified sentences by `short_eval.agreed_with_record`, the pipeline's own rule as the code has it now, and
scored with QASPER's official Answer-F1 against the run's shown short answer. No model is asked: the rule reads the
record's fields only (which sentences held, whether one was the model's own claim). Evidence-F1 is left to a full run (the
quotes a withdrawal removed stay shown now, so their paragraphs become predicted evidence).

The rule was chosen on the train papers and the development file together; the shared test papers are printed apart, to
report, never to choose.
"""
import argparse, json
from pathlib import Path
from qasper_rag.app import load_corpus
from qasper_rag.core.stats import bootstrap_ci
from qasper_rag.evaluate.evaluate import question_groups
from qasper_rag.evaluate.metrics import gold_from_corpus, score_questions
from qasper_rag.evaluate.runs import RunDir
from qasper_rag.evaluate.short_eval import agreed_with_record
from qasper_rag.answer.prompts import yes_no_question

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared/data/qasper"
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--runs", nargs="+", default=[f"{ROOT/'reports/offline-full'}={SHARED/'original_format'}", f"{ROOT/'reports/dev-bebbfe3'}={SHARED/'dev'}"],
               help="RUN=DATA pairs: a committed run folder and the QASPER data it answered")
p.add_argument("--out", default=str(ROOT/"reports/judges/yes_no_reading.json"))
a = p.parse_args()

kind = lambda s: "Unanswerable" if s.strip().lower().startswith("unanswerable") else s.strip(" .").capitalize() if s.strip(" .").lower() in ("yes", "no") else "other"
result, pooled = {}, {}
for spec in a.runs:
    run_dir, data = spec.split("=", 1)
    corpus, _ = load_corpus(data)
    groups, gold = question_groups(data), gold_from_corpus(corpus)
    for l in RunDir(run_dir).lines():
        r = l.record
        if r.failed or not yes_no_question(l.question) or l.question_id not in gold: continue
        before = ((r.verification or {}).get("short_answer") or {}).get("before") or r.short_answer
        now = agreed_with_record(before, r, [p.text for p in r.passages])
        g = groups.get(l.question_id, "?")
        s0, s1 = (score_questions({l.question_id: gold[l.question_id]}, {l.question_id: {"predicted_answer": s, "predicted_evidence": []}})[0].answer_f1
                  for s in (r.short_answer, now))
        refs = sorted({ref.answer for ref in gold[l.question_id]})
        pooled.setdefault(g, []).append({"question_id": l.question_id, "run": r.short_answer, "replay": now, "gold": refs, "f1_run": s0, "f1_replay": s1})

def summary(rows: list[dict]) -> dict:
    d = [x["f1_replay"] - x["f1_run"] for x in rows]
    lo, hi = bootstrap_ci(d)
    return {"n": len(rows), "withdrawn_run": sum(kind(x["run"]) == "Unanswerable" for x in rows),
            "withdrawn_replay": sum(kind(x["replay"]) == "Unanswerable" for x in rows),
            "answer_f1_run": round(sum(x["f1_run"] for x in rows) / len(rows), 4), "answer_f1_replay": round(sum(x["f1_replay"] for x in rows) / len(rows), 4),
            "difference_ci95": [round(lo, 4), round(hi, 4)], "better": sum(x > 0 for x in d), "worse": sum(x < 0 for x in d)}

fit = [x for g, rows in pooled.items() if "test" not in g for x in rows]
result = {"rule": "a yes/no question's Yes or No that no passage settles stays as the model's reading (verify.agreed_short_answer)",
          "groups": {g: summary(rows) for g, rows in sorted(pooled.items())}, "fit (train + development)": summary(fit),
          "questions": pooled}
Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
for g, s in [*result["groups"].items(), ("fit (train + development)", result["fit (train + development)"])]:
    print(f"{g}: yes/no questions n={s['n']}; withdrawn to Unanswerable {s['withdrawn_run']} -> {s['withdrawn_replay']}; "
          f"Answer-F1 on them {s['answer_f1_run']:.3f} -> {s['answer_f1_replay']:.3f} (paired difference 95% CI {s['difference_ci95'][0]:+.3f} to "
          f"{s['difference_ci95'][1]:+.3f}; {s['better']} better, {s['worse']} worse)")
print(f"wrote {a.out}")
