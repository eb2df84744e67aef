"""A run's shown sentences read by the project's checks: supported by what they cite (the gold-evidence check, which no part
of the pipeline reads: a cited passage holds an annotator's evidence; and the run's judge, which is also the verifier's, so
it grades its own repair and is printed only beside it) and answering (the answers judge with the model's P(Yes) at the threshold
fitted on the train papers' labels, `answering.ANSWERS_THRESHOLD`; the verifier gates on the form check alone and uses the
model's P(Yes) only to rank quotes).

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/shown_checks.py --run reports/offline-full --data ../shared/data/qasper/original_format [--out FILE]

Printed per data file: shown sentences supported, answering, and both (k of n, Wilson 95% interval), and the answerable
questions (an annotator gave an answer) with at least one shown sentence that is both. The checks' agreement with
independent labels is measured apart (`qasper-rag labels --check <label file> --json`: kappa of the support judge, and
`answers_kappa` of the answers judge, train and test papers apart).
"""
import argparse, json
from pathlib import Path
from tqdm.auto import tqdm
from qasper_rag.answer.answering import ANSWERS_THRESHOLD, AnswersJudge
from qasper_rag.app import load_corpus
from qasper_rag.core.generate import load_generator
from qasper_rag.core.llm import ProbabilityCache
from qasper_rag.evaluate.evaluate import _share, question_groups
from qasper_rag.evaluate.runs import RunDir

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--run", required=True)
p.add_argument("--data", required=True, help="the QASPER data the run answered")
p.add_argument("--threads", type=int, default=2)
p.add_argument("--out", help="JSON summary (default: shown_checks.json in the run folder)")
a = p.parse_args()

run = RunDir(a.run)
settings = run.settings()
corpus, _ = load_corpus(a.data)
groups = question_groups(a.data)
answerable = {q.id for q in corpus.questions() if any(x.type != "none" for x in q.answers)}
gen = load_generator(settings["generator"], n_threads=a.threads)
judge = AnswersJudge(gen, ANSWERS_THRESHOLD, cache=ProbabilityCache(run.path / "answers_cache.jsonl"))
rows = []
for l in tqdm(run.lines(), desc="shown sentences"):
    if l.record.failed: continue
    for j in l.judged:
        if not j.cited: continue  # the no-answer sentence and other uncited text: nothing shown as a claim
        v = judge.verdict(l.question, j.claim)
        rows.append({"question_id": l.question_id, "group": groups.get(l.question_id, "?"), "claim": j.claim,
                     "supported": j.judge_recall == 1, "gold_supported": j.gold_recall == 1, "answers": v.answers, "p": v.p, "reason": v.reason})

def summary(rs: list[dict], qids: set[str]) -> dict:
    both = {r["question_id"] for r in rs if r["supported"] and r["answers"]}
    asked = qids & answerable
    return {"shown": len(rs), "supported": _share(sum(r["supported"] for r in rs), len(rs)), "answers": _share(sum(r["answers"] for r in rs), len(rs)),
            "supported_and_answers": _share(sum(r["supported"] and r["answers"] for r in rs), len(rs)),
            "gold_supported": _share(sum(r["gold_supported"] for r in rs), len(rs)),
            "gold_supported_and_answers": _share(sum(r["gold_supported"] and r["answers"] for r in rs), len(rs)),
            "answerable_questions_with_one": _share(len(both & asked), len(asked))}

qids_by = {}
for l in run.lines(): qids_by.setdefault(groups.get(l.question_id, "?"), set()).add(l.question_id)
out = {"run": str(a.run), "code": settings.get("code"), "support_judge": settings.get("judge"), "answers_judge": f"{judge.name} (threshold {ANSWERS_THRESHOLD})",
       "groups": {g: summary([r for r in rows if r["group"] == g], qs) for g, qs in sorted(qids_by.items())},
       "all": summary(rows, set().union(*qids_by.values())), "sentences": rows}
path = Path(a.out) if a.out else run.path / "shown_checks.json"
path.write_text(json.dumps(out, indent=1) + "\n")
fmt = lambda s: f"{s['k']}/{s['n']} = {s['share']:.3f} [{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]" if s["n"] else "n=0"
for g, s in [*out["groups"].items(), ("all", out["all"])]:
    print(f"{g}: shown {s['shown']}; supported (run's judge, the verifier's) {fmt(s['supported'])}; gold-evidence check {fmt(s['gold_supported'])}; "
          f"answering {fmt(s['answers'])}; both {fmt(s['supported_and_answers'])} (gold check and answering: {fmt(s['gold_supported_and_answers'])}); "
          f"answerable questions with one such sentence {fmt(s['answerable_questions_with_one'])}")
print(f"support: {out['support_judge']}; answers: {out['answers_judge']}; wrote {path}")
