"""The verification of a run's answers replayed with the judge and verifier as they are now: which answer sentences
would be verified, re-cited, rewritten or removed differently, before a full run is spent on a change to either.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/reverify.py [--run reports/offline-full] [--data FOLDER] [--out FILE] [--threads 2]

For every answered record, the model's own reply (`raw_output`) is parsed and cut as the answerer does
(`answer._finish_sentences`), the passages it was sent are rebuilt (`short.run_passages`), `verify.Verifier` checks
the sentences again with the default grounded judge, its P(Yes) cached in a copy of the run's judge_cache.jsonl (so an
unchanged judge costs no model call), and the short answer that went into the agreement step (the record's
`verification.short_answer.before`), copied as its passage writes it (`answer._as_written`), is made to agree
again (`verify.agree_short_answer`), which is the last step of an answer. So the replay predicts each shown answer and
short answer, and Answer-F1 by data file, without asking the model for new answers; a full run confirms it. Quotes
chosen by the model under a grammar may differ by an option on a replay (llama.cpp's cache state).
"""
import argparse, json, shutil
from pathlib import Path
from tqdm.auto import tqdm
from qasper_rag.answer import _as_written, _finish_sentences
from qasper_rag.chunking import ChunkerConfig, QasperChunker
from qasper_rag.app import load_corpus
from qasper_rag.evaluate import question_groups
from qasper_rag.generate import load_generator
from qasper_rag.judges import GroundedJudge
from qasper_rag.prompts import check_citations, parse_output
from qasper_rag.short import run_passages
from qasper_rag.metrics import gold_from_corpus, token_f1
from qasper_rag.verify import Verifier, agree_short_answer

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--run", default=str(ROOT/"reports/offline-full"))
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
p.add_argument("--out", default=str(ROOT/"data/cache/reverify.json"), help="each question's replayed (status, text) per sentence")
p.add_argument("--threads", type=int, default=2)
p.add_argument("--candidates", type=int, help="`Verifier.candidates`, the other passages tried before a rewrite (default: the verifier's)")
a = p.parse_args()

run, out = Path(a.run), Path(a.out)
out.parent.mkdir(parents=True, exist_ok=True)
lines = [json.loads(l) for l in open(run/"records.jsonl") if l.strip()]
groups = question_groups(a.data)
corpus, _ = load_corpus(a.data)
passages_of = run_passages(corpus, QasperChunker(ChunkerConfig(**lines[0]["record"]["config"]["retrieval"]["chunker"])))
cache = out.with_suffix(".judge_cache.jsonl")
if (run/"judge_cache.jsonl").exists(): shutil.copy(run/"judge_cache.jsonl", cache)  # the run's file stays as the run left it
gen = load_generator("qwen-1.5b", n_threads=a.threads)
verifier = Verifier(GroundedJudge(gen, cache=cache), gen, **({"candidates": a.candidates} if a.candidates else {}))

gold = gold_from_corpus(corpus)
f1 = lambda q, short: max(token_f1(short, ref.answer) for ref in gold[q]) if q in gold else None
replayed, changed, shorts, scores = {}, [], [], {}
for l in tqdm([l for l in lines if l["record"].get("raw_output") and not l["record"].get("failed")], desc="verification replayed"):
    r, q = l["record"], l["question_id"]
    passages = passages_of(r)[0]
    sents, _, _ = _finish_sentences(check_citations(parse_output(r["raw_output"]).answer, len(passages)), passages, [])
    v, short = verifier.check(r["question"], sents, passages), r.get("short_answer", "")
    if (went_in := (r.get("verification") or {}).get("short_answer", {}).get("before")) is not None:
        went_in = _as_written(r["question"], went_in, sents, [c.body for c in passages], [])
        v, short, _ = agree_short_answer(r["question"], went_in, v, [c.body for c in passages])
    now, before = [(c.status, c.text) for c in v.sentences], [(s.get("status"), s.get("text", "")) for s in r.get("sentences", [])]
    replayed[q] = {"sentences": now, "short_answer": short}
    if q in gold: scores.setdefault(groups.get(q, "?"), []).append((f1(q, r.get("short_answer", "")), f1(q, short)))
    if now != before: changed.append((q, r["question"], before, now))
    if short != r.get("short_answer", ""): shorts.append((q, r["question"], r.get("short_answer", ""), short))
out.write_text(json.dumps(replayed, indent=1))
print(f"{len(replayed)} answers replayed; {len(changed)} shown differently, {len(shorts)} short answers differ; replays in {out}")
for g, xs in sorted(scores.items()):
    print(f"  {g}: Answer-F1 of the answered records, run {sum(a for a, _ in xs) / len(xs):.3f} -> replay {sum(b for _, b in xs) / len(xs):.3f} (n={len(xs)})")
print("\nshown differently:")
for q, question, before, now in changed:
    print(f"  {groups.get(q, '?')[:12]:12s} {question[:70]}")
    print(f"    run:    {[(s, t[:60]) for s, t in before]}")
    print(f"    replay: {[(s, t[:60]) for s, t in now]}")
print("\nshort answers that differ:")
for q, question, was, now in shorts:
    print(f"  {groups.get(q, '?')[:12]:12s} {question[:70]}: {was[:50]!r} -> {now[:50]!r} (F1 {f1(q, was)} -> {f1(q, now)})")
