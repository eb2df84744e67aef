"""The plain short-answer baseline of the short-answers issue, replayed on a run's own contexts, and the Answer-F1 of
every short-answer variant by answer type, train and test papers apart, with bootstrap intervals.

A plain script: it prints numbers and checks nothing. Run from the project root (`make short-baseline`):

    .venv/bin/python benchmarks/short_answers.py [--run reports/offline-full] [--data FOLDER] [--out FILE]

For every question of the run, the passages it sent go to the embedded model with the concise instruction of
`qasper_rag.answer.prompts.short_answer_messages` alone (`qasper_rag.answer.short.plain_short_answers`: a plain retrieve-and-prompt
baseline on the same context), appended to `--out` (default: plain_short.jsonl in the run folder, which the
evaluation page reads), so an interrupted replay resumes. Then Answer-F1 (official semantics) by the questions' type:
- `run`: the run's short answers (after verification and agreement with the verified answer);
- `before agreement`: the model's own short answer line (`verification.short_answer.before`);
- `plain baseline`: the baseline's;
- `plain + agreement`: the baseline's answer made to agree with the run's verified answer as the pipeline does
  (`short.agreed_with_record`: Unanswerable when no sentence held, the first verified sentence when the answer is in
  neither the verified answer nor a passage sent): what the pipeline would show with its short answer from that call;
- `typed`: the answerer's short-answer stage as it is now, replayed on the run: a short answer of the wrong form for its
  question (`short.short_answer_problem`: no quantity, a restated question, a count instead of names) asked again in
  that form on the same passages (`short.retyped_short_answers`, appended to RUN/typed_short.jsonl: only those questions
  call the model), acronyms expanded as a passage defines them, a number that counts something else than the question
  asks replaced by the passages' number of it (`short.rebind_number`), then made to agree with the verified answer. Only for a
  run answered without the stage (`short.asked_again` finds no second ask in its records): on a run answered with it, `run`
  is the stage, and a replay would apply it twice.
Every variant is scored on the replayed questions only (all of them once the replay is complete).
"""
import argparse, json, statistics
from pathlib import Path
from qasper_rag.papers.chunking import ChunkerConfig, QasperChunker
from qasper_rag.app import load_corpus
from qasper_rag.evaluate.evaluate import question_groups
from qasper_rag.evaluate.metrics import gold_from_corpus
from qasper_rag.evaluate.short_eval import asked_again, f1_by_type, plain_short_answers, retyped_short_answers, run_passages, short_variants

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--run", default=str(ROOT/"reports/offline-full"))
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
p.add_argument("--out", default="", help="replies file (default: RUN/plain_short.jsonl)")
p.add_argument("--threads", type=int, default=2)
p.add_argument("--typed-out", default="", help="second asks (default: RUN/typed_short.jsonl)")
a = p.parse_args()

run = Path(a.run)
groups = question_groups(a.data)
# the train papers' questions first: settings are chosen on them, so an interrupted replay has those (it resumes anyway)
lines = sorted((json.loads(l) for l in open(run/"records.jsonl")), key=lambda l: "train" not in groups.get(l["question_id"], ""))
corpus, _ = load_corpus(a.data)
passages_of = run_passages(corpus, QasperChunker(ChunkerConfig(**lines[0]["record"]["config"]["retrieval"]["chunker"])))
out = Path(a.out or run/"plain_short.jsonl")
have = {json.loads(l)["question_id"] for l in open(out)} if out.exists() else set()
gen = None
if any(l["question_id"] not in have for l in lines):
    from qasper_rag.core.generate import load_generator
    gen = load_generator("qwen-1.5b", n_threads=a.threads)
plain = plain_short_answers(lines, passages_of, gen, out)
typed_out = Path(a.typed_out or run/"typed_short.jsonl")
if staged := asked_again(lines):  # the run went through the stage: replaying it would apply it twice
    retyped = None
    print(f"the run was answered with the short-answer stage ({staged} records note a second ask): no typed replay, its `run` is the stage")
else:
    try: retyped = retyped_short_answers(lines, passages_of, None, typed_out)
    except ValueError:  # some second asks are not on file yet: the model is needed
        from qasper_rag.core.generate import load_generator
        retyped = retyped_short_answers(lines, passages_of, gen or load_generator("qwen-1.5b", n_threads=a.threads), typed_out)

variants = short_variants(lines, plain, passages_of, retyped)
gold = {q: r for q, r in gold_from_corpus(corpus).items() if q in plain}  # every variant on the same (replayed) questions
secs = [d["seconds"] for d in plain.values()]
print(f"plain baseline: {len(plain)} of {len(lines)} questions, {statistics.median(secs):.1f} s median per answer (the whole context's prefill)")
for row in f1_by_type(gold, variants, groups):
    cells = "  ".join(f"{v} {row[v]:.3f} [{row[v + ' 95% interval'][0]:.3f}, {row[v + ' 95% interval'][1]:.3f}]" for v in variants)
    print(f"{row['group']:26s} {row['type']:12s} n={row['n']:3d}  {cells}")
if retyped is not None: print(f"asked again in the question's form: {len(retyped)} questions, by problem",
                             dict(sorted(__import__("collections").Counter(d["problem"] for d in retyped.values()).items())))
for q, d in (retyped or {}).items():
    before, after = variants["before agreement"][q], variants["typed"][q]
    print(f"  {groups.get(q, '?')[:12]:12s} {d['problem']:24s} {before[:50]!r} -> reply {d['short'][:50]!r} -> shown {after[:50]!r}")
for v, ans in variants.items():
    ans = {q: x for q, x in ans.items() if q in gold}
    print(f"{v}: {sum(x.lower().startswith('unanswerable') for x in ans.values())} Unanswerable of {len(ans)}")
