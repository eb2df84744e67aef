"""Do the highlighted sentences alone hold what the passages hold? Measured on the reference labels (issue 42).

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/supporting_sentences.py [--labels ../shared/data/labels] [--data FOLDER] [--window 3]

For every labelled (sentence, cited passages) item that the reference labels call supported, the supporting sentences
of each cited passage (`verify.supporting_sentences`, the widest window tried `--window`; 1: the best single sentence)
are joined, and the lexical half of the grounded judge (one window of 3 sentences holds 80% of what the claim adds to
its question, every number present and bound to its noun) is asked whether they alone hold the claim, where it holds on
the whole passages. No model is called. Printed per label file, for the 10 train papers' items and for all items apart.

With `--judge`, the project's whole grounded judge (lexical grounding, then the embedded Qwen's Yes/No; `judges.GroundedJudge`,
its answers cached in `--cache`) reads each supported item twice, on the cited passages and on their supporting sentences
alone: issue 42 asks that the sentences alone be judged supported for at least 85% of the items the judge supports whole.
"""
import argparse, csv, json, re
from pathlib import Path
from qasper_rag.answer.judges import GROUNDED_MIN_COVERAGE, GROUNDED_WINDOW, grounding
from qasper_rag.answer.verify import supporting_sentences

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--labels", default=str(ROOT.parent / "shared/data/labels"))
p.add_argument("--data", default=str(ROOT.parent / "shared/data/qasper/original_format"))
p.add_argument("--window", type=int, default=GROUNDED_WINDOW, help="widest window of sentences tried (1: the best single sentence)")
p.add_argument("--judge", action="store_true", help="also read each item with the whole grounded judge (the embedded Qwen)")
p.add_argument("--cache", default=str(ROOT / "data/cache/supporting_judge.jsonl"), help="the judge's cache of P(Yes)")
p.add_argument("--threads", type=int, default=2)
a = p.parse_args()
judge = None
if a.judge:
    from qasper_rag.core.generate import load_generator
    from qasper_rag.answer.judges import GroundedJudge
    from qasper_rag.answer.entailment import judge_claim
    Path(a.cache).parent.mkdir(parents=True, exist_ok=True)
    judge = GroundedJudge(load_generator("qwen-1.5b", n_threads=a.threads), cache=a.cache)

train = {q["question_id"] for p in json.loads((Path(a.data) / "qasper-train-sample10.json").read_text()).values() for q in p["qas"]}

def holds(premise: str, claim: str, question: str) -> bool:
    g = grounding(premise, claim, GROUNDED_WINDOW, question)
    return g.coverage >= GROUNDED_MIN_COVERAGE and not g.numbers_missing and not g.misbound

for f in sorted(Path(a.labels).glob("citation_support_*.csv")):
    rows = [r for r in csv.DictReader(f.open(encoding="utf-8")) if r["label"] == "1"]
    for group, keep in (("train papers", lambda r: r["item_id"].split("#")[0] in train), ("all", lambda r: True)):
        n = full = alone = sents = jfull = jalone = 0
        for r in filter(keep, rows):
            n += 1
            docs = [d.strip() for d in re.split(r"\[Doc \d+\] ", r["cited_passages"]) if d.strip()]
            sup = [d[s:e] for d in docs for s, e in supporting_sentences(d, r["claim"], r["question"], a.window)]
            sents += len(sup)
            if holds("\n".join(docs), r["claim"], r["question"]):
                full += 1; alone += bool(sup) and holds(" ".join(sup), r["claim"], r["question"])
            if judge is not None and judge.entails("\n".join(docs), judge_claim(r["claim"], r["question"]), r["question"]):
                jfull += 1; jalone += bool(sup) and judge.entails(" ".join(sup), judge_claim(r["claim"], r["question"]), r["question"])
        print(f"{f.name} ({group}): {n} supported items; grounding holds on the cited passages for {full}, on their supporting "
              f"sentences alone for {alone} ({alone / full:.0%}); {sents / n:.2f} supporting sentences per item"
              + (f"; the grounded judge (qwen-1.5b) supports "
                 f"{jfull} on the cited passages and {jalone} of those on the supporting sentences alone ({jalone / max(jfull, 1):.0%})"
                 if judge is not None else ""))
