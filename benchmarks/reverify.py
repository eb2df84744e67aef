"""The verification of a run's answers replayed with the judge and verifier as they are now: which answer sentences
would be verified, re-cited, rewritten or removed differently, before a full run is spent on a change to either.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/reverify.py [--run reports/offline-full] [--data FOLDER] [--out FILE] [--threads 2]
        [--only train] [--no-answers]

For every answered record, the model's own reply (`raw_output`) is parsed and cut as the answerer does
(`answer._finish_sentences`), the passages it was sent are rebuilt (`short.run_passages`), `verify.Verifier` checks
the sentences again with the default grounded judge, its P(Yes) cached in a copy of the run's judge_cache.jsonl (so an
unchanged judge costs no model call), and the short answer that went into the agreement step (the record's
`verification.short_answer.before`), copied as its passage writes it (`answer._as_written`), is made to agree
again (`verify.agree_short_answer`), which is the last step of an answer. So the replay predicts each shown answer and
short answer, and Answer-F1 by data file, without asking the model for new answers; a full run confirms it. Quotes
chosen by the model under a grammar may differ by an option on a replay (llama.cpp's cache state).

The verifier is the shipped one: with the answers judge (`answering.AnswersJudge`: a shown sentence must also answer the
question; `--no-answers` replays support alone). Official Answer-F1 and Evidence-F1 (evidence: `answer.evidence_paragraphs`, the paragraphs of
the cited passages that hold the shown sentences) of the run and the replay are printed per data file with the paired bootstrap 95% interval of the difference.
"""
import argparse, json, shutil
from pathlib import Path
from tqdm.auto import tqdm
from qasper_rag.answer.answer import UNANSWERABLE, _as_written, _finish_sentences, evidence_paragraphs
from qasper_rag.answer.answering import AnswersJudge, asks_for
from qasper_rag.papers.chunking import ChunkedPaper
from qasper_rag.papers.chunking import ChunkerConfig, QasperChunker
from qasper_rag.app import load_corpus
from qasper_rag.evaluate.evaluate import question_groups
from qasper_rag.core.generate import load_generator
from qasper_rag.answer.judges import GroundedJudge
from qasper_rag.answer.prompts import check_citations, parse_output
from qasper_rag.evaluate.short_eval import run_passages
from qasper_rag.evaluate.metrics import gold_from_corpus, score_questions, token_f1
from qasper_rag.core.stats import bootstrap_ci
from qasper_rag.answer.verify import Verifier, agree_short_answer

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--run", default=str(ROOT/"reports/offline-full"))
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
p.add_argument("--out", default=str(ROOT/"data/cache/reverify.json"), help="each question's replayed (status, text) per sentence")
p.add_argument("--threads", type=int, default=2)
p.add_argument("--candidates", type=int, help="`Verifier.candidates`, the other passages tried before a rewrite (default: the verifier's)")
p.add_argument("--only", help="replay only the questions of the data files whose name holds this (e.g. train)")
p.add_argument("--asks", help="replay only the questions that ask for this (`answering.asks_for`: quantity, yes/no, choice, method, fact)")
p.add_argument("--no-answers", action="store_true", help="support alone: no answers judge (the verifier before it)")
p.add_argument("--answers-threshold", type=float, help="the verifier's answers judge's threshold (0: the form check gates, the model only ranks quotes)")
p.add_argument("--labels", default=str(ROOT.parent/"shared/data/labels/citation_support_answers_1203e.csv"),
               help="label file with support and answers columns: shown sentences that match a labelled one are counted by its labels")
a = p.parse_args()

run, out = Path(a.run), Path(a.out)
out.parent.mkdir(parents=True, exist_ok=True)
lines = [json.loads(l) for l in open(run/"records.jsonl") if l.strip()]
groups = question_groups(a.data)
corpus, _ = load_corpus(a.data)
passages_of = run_passages(corpus, QasperChunker(ChunkerConfig(**lines[0]["record"]["config"]["retrieval"]["chunker"])))
cache = out.with_suffix(".judge_cache.jsonl")
if (run/"judge_cache.jsonl").exists() and not cache.exists(): shutil.copy(run/"judge_cache.jsonl", cache)  # the run's file stays as the run left it
gen = load_generator("qwen-1.5b", n_threads=a.threads)
judge = GroundedJudge(gen, cache=cache)
answers = None if a.no_answers else AnswersJudge(gen, cache=judge.cache, **({} if a.answers_threshold is None else {"threshold": a.answers_threshold}))
reader = AnswersJudge(gen, cache=judge.cache)  # the fitted answers judge, as a measure of what is shown (its kappa: reports/judges)
verifier = Verifier(judge, gen, answers=answers, **({"candidates": a.candidates} if a.candidates else {}))
chunked = {}
def evidence(r: dict, passages: list, shown: list, short: str) -> list[str]:
    "The evidence an answer predicts, as the answerer records it (`answer.evidence_paragraphs`; none for Unanswerable)."
    if short == UNANSWERABLE or not shown: return []
    pid = r["paper_id"]
    if pid not in chunked: chunked[pid] = ChunkedPaper(corpus.paper(pid), QasperChunker(ChunkerConfig(**r["config"]["retrieval"]["chunker"]))(corpus.paper(pid)))
    return evidence_paragraphs(chunked[pid], r["question"], [(c.claim, [passages[d - 1].id for d in c.citations]) for c in shown])

gold = gold_from_corpus(corpus)
f1 = lambda q, short: max(token_f1(short, ref.answer) for ref in gold[q]) if q in gold else None
replayed, changed, shorts, scores = {}, [], [], {}
preds_run, preds_new = {}, {}
todo = [l for l in lines if l["record"].get("raw_output") and not l["record"].get("failed") and (not a.only or a.only in groups.get(l["question_id"], ""))
        and (not a.asks or asks_for(l["question"]) == a.asks)]
for l in tqdm(todo, desc="verification replayed"):
    r, q = l["record"], l["question_id"]
    passages = passages_of(r)[0]
    sents, _, _ = _finish_sentences(check_citations(parse_output(r["raw_output"]).answer, len(passages)), passages, [])
    went_in = (r.get("verification") or {}).get("short_answer", {}).get("before")
    if went_in is not None: went_in = _as_written(r["question"], went_in, sents, [c.body for c in passages], [])
    v, short = verifier.check(r["question"], sents, passages, short=went_in or ""), r.get("short_answer", "")
    if went_in is not None: v, short, _ = agree_short_answer(r["question"], went_in, v, [c.body for c in passages])
    now, before = [(c.status, c.text) for c in v.sentences], [(s.get("status"), s.get("text", "")) for s in r.get("sentences", [])]
    replayed[q] = {"sentences": now, "short_answer": short, "answer": v.answer, "notice": v.notice, "closest": v.closest,
                   "shown": [{"text": c.text, "claim": c.claim, "citations": list(c.citations), "status": c.status, "answers": c.answers}
                             for c in v.shown if c.citations]}
    preds_run[q] = {"answer": r.get("short_answer", ""), "evidence": r.get("predicted_evidence", [])}
    preds_new[q] = {"answer": short, "evidence": evidence(r, passages, [c for c in v.shown if c.citations], short)}
    if q in gold: scores.setdefault(groups.get(q, "?"), []).append((f1(q, r.get("short_answer", "")), f1(q, short)))
    if now != before: changed.append((q, r["question"], before, now))
    if short != r.get("short_answer", ""): shorts.append((q, r["question"], r.get("short_answer", ""), short))
out.write_text(json.dumps(replayed, indent=1))
print(f"{len(replayed)} answers replayed; {len(changed)} shown differently, {len(shorts)} short answers differ; replays in {out}")
print(f"verifier: {judge.name}, answers judge: {answers.name if answers else 'none'}")
import csv
labelled = {(r["item_id"].split("#")[0], r["claim"].strip().rstrip(".")): r for r in csv.DictReader(open(a.labels))} if Path(a.labels).exists() else {}
def shown_measures(rows: dict, question: str, q: str) -> tuple[int, int, int, int]:
    "(shown, read as answering by the fitted answers judge, matching a labelled sentence, labelled supported and answering)."
    ss = [s for s in rows if s["claim"] and s["claim"] != "The passages do not answer this question"]
    lab = [labelled.get((q, s["claim"].strip().rstrip("."))) for s in ss]
    return (len(ss), sum(reader.verdict(question, s["claim"]).answers for s in ss), sum(l is not None for l in lab),
            sum(l is not None and l["label"] == "1" and l["answers"] == "1" for l in lab))
for name, rows_of in (("run", lambda l: [s for s in l["record"]["sentences"] if s.get("status") not in ("removed", None) and s.get("citations")]),
                      ("replay", lambda l: replayed[l["question_id"]]["shown"])):
    m = [shown_measures(rows_of(l), l["question"], l["question_id"]) for l in todo]
    tot = [sum(x[i] for x in m) for i in range(4)]
    print(f"  {name}: {tot[0]} shown sentences, {tot[1]} read as answering by {reader.name} (threshold {reader.threshold}); "
          f"{tot[2]} match a labelled sentence, {tot[3]} of them labelled supported and answering; "
          f"questions with a sentence read as answering: {sum(x[1] > 0 for x in m)} of {len(m)}")
for g in sorted({groups.get(q, "?") for q in replayed}):
    gq = {q: gold[q] for q in replayed if groups.get(q, "?") == g and q in gold}
    if not gq: continue
    s0, s1 = score_questions(gq, preds_run), score_questions(gq, preds_new)
    for m in ("answer_f1", "evidence_f1"):
        x0, x1 = [getattr(s, m) for s in s0], [getattr(s, m) for s in s1]
        lo, hi = bootstrap_ci([b - a_ for a_, b in zip(x0, x1)])
        print(f"  {g}: {m} of the answered records (official), run {sum(x0) / len(x0):.3f} -> replay {sum(x1) / len(x1):.3f} "
              f"(n={len(x0)}; difference 95% CI {lo:+.3f} to {hi:+.3f}; {sum(b > a_ for a_, b in zip(x0, x1))} better, {sum(b < a_ for a_, b in zip(x0, x1))} worse)")
for g, xs in sorted(scores.items()):
    print(f"  {g}: Answer-F1 of the answered records, run {sum(a for a, _ in xs) / len(xs):.3f} -> replay {sum(b for _, b in xs) / len(xs):.3f} (n={len(xs)})")
yn = [l for l in todo if asks_for(l["question"]) == "yes/no" and l["question_id"] in gold]
if yn:  # the Yes/No withdrawals against the gold type: was the answer kept, and was it right?
    kind = lambda s: "Unanswerable" if s.strip().lower().startswith("unanswerable") else s.strip(" .").capitalize() if s.strip(" .").lower() in ("yes", "no") else "other"
    for name, short_of in (("run", lambda l: l["record"].get("short_answer", "")), ("replay", lambda l: replayed[l["question_id"]]["short_answer"])):
        rows = [(kind(short_of(l)), {r.answer for r in gold[l["question_id"]]}) for l in yn]
        right = sum(k in refs for k, refs in rows)
        gold_bool = [(k, refs) for k, refs in rows if refs & {"Yes", "No"}]
        print(f"  yes/no questions ({name}): {len(rows)}; short answer Yes {sum(k == 'Yes' for k, _ in rows)}, No {sum(k == 'No' for k, _ in rows)}, "
              f"Unanswerable {sum(k == 'Unanswerable' for k, _ in rows)}, other {sum(k == 'other' for k, _ in rows)}; right (an annotator's answer) {right}; "
              f"of the {len(gold_bool)} with a gold Yes/No: withdrawn {sum(k == 'Unanswerable' for k, _ in gold_bool)}, right {sum(k in refs for k, refs in gold_bool)}")
print("\nshown differently:")
for q, question, before, now in changed:
    print(f"  {groups.get(q, '?')[:12]:12s} {question[:70]}")
    print(f"    run:    {[(s, t[:60]) for s, t in before]}")
    print(f"    replay: {[(s, t[:60]) for s, t in now]}")
print("\nshort answers that differ:")
for q, question, was, now in shorts:
    print(f"  {groups.get(q, '?')[:12]:12s} {question[:70]}: {was[:50]!r} -> {now[:50]!r} (F1 {f1(q, was)} -> {f1(q, now)})")
