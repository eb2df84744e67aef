"""Asking a bare Yes/No again for the fact that decides it, measured on a run's bare replies and not kept (issue 12).

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/bare_yes_no.py [--run reports/offline-full] [--data FOLDER] [--words 4] [--threads 2]

A reply whose answer is only "Yes [Doc N]." (or No), against the prompt's "never a bare Yes or No", gives the verifier
nothing to check. Each such reply of the run is answered again by the full pipeline (`app.make_answerer`, the default
grounded judge verifying) with one change: after the bare reply, the same conversation asks for the fact that decides it,
and that retry is decoded under the answer grammar with at least `--words` words per sentence (1: the reminder alone).
Printed per question: the run's short answer and the new one with their Answer-F1 (best over the annotators), and the
shown answer; then Answer-F1 over these questions by data file. About 90 s a question on two cores. The answerer itself
is not changed: the retry lives in this script (it wraps `answer._ask_again` and the generator's `generate`).
"""
import argparse, json, re
from pathlib import Path
import qasper_rag.answer.answer as A
from qasper_rag.app import load_corpus, make_answerer
from qasper_rag.evaluate.evaluate import question_groups
from qasper_rag.evaluate.metrics import gold_from_corpus, token_f1
from qasper_rag.answer.prompts import INSTRUCTIONS, parse_output, split_sentences, strip_citations
from qasper_rag.settings import AnswerSettings

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--run", default=str(ROOT/"reports/offline-full"))
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
p.add_argument("--words", type=int, default=4, help="fewest words per sentence in the retry's grammar (1: the reminder alone)")
p.add_argument("--threads", type=int, default=2)
a = p.parse_args()

ASK_FACT = ("Your answer was only \"{word}\", with nothing a reader can check. Reply again, in exactly this format; in the Answer, "
            "start with Yes or No and go on with the fact from the passages that decides it, citing them as [Doc N]:\n" + INSTRUCTIONS)

def bare(answer: str) -> str | None:
    "'Yes' or 'No' when every sentence of `answer` is only that word with its citations."
    words = {re.sub(r"[^\w]", "", strip_citations(s)).lower() for s in split_sentences(answer)}
    return words.pop().capitalize() if len(words) == 1 and words <= {"yes", "no"} else None

answer_part = lambda raw: parse_output(raw).answer  # the reply's Answer, as the answerer reads it

_ask_again = A._ask_again
def ask_again(parsed, messages, reply):
    "The answerer's retry, and one more: a bare Yes/No is asked for its fact."
    probs, again = _ask_again(parsed, messages, reply)
    if again is None and not probs and (word := bare(parsed.answer)):
        return ["the answer is a bare Yes or No"], messages + [{"role": "assistant", "content": reply},
                                                               {"role": "user", "content": ASK_FACT.format(word=word)}]
    return probs, again
A._ask_again = ask_again

lines = [json.loads(l) for l in open(Path(a.run)/"records.jsonl") if l.strip()]
todo = [l for l in lines if bare(answer_part(l["record"].get("raw_output", "")))]
print(f"{len(todo)} of {len(lines)} replies of {a.run} are a bare Yes or No")
corpus, _ = load_corpus(a.data)
gold, groups = gold_from_corpus(corpus), question_groups(a.data)
f1 = lambda q, s: max(token_f1(s, r.answer) for r in gold[q])
answerer = make_answerer(AnswerSettings(threads=a.threads), corpus)
gen, generate = answerer.gen, answerer.gen.generate
def generate_fact(messages, max_tokens, temperature=0.0, stop=None, grammar=None):
    "The retry after a bare reply decoded with at least `--words` words per sentence."
    if grammar and a.words > 1 and messages[-1]["content"].startswith("Your answer was only"):
        grammar = re.sub(r'(sent ::= word \(" " word\))\{0,', rf"\1{{{a.words - 1},", grammar)
    return generate(messages, max_tokens=max_tokens, temperature=temperature, stop=stop, grammar=grammar)
gen.generate = generate_fact

scores = {}
for l in todo:
    q, r = l["question_id"], l["record"]
    new = answerer.ask(corpus.paper(l["paper_id"]), r["question"], q)
    was, now = f1(q, r["short_answer"]), f1(q, new.short_answer)
    scores.setdefault(groups.get(q, "?"), []).append((was, now))
    print(f"\n{groups.get(q, '?')}: {r['question']}\n  run:   {r['short_answer']!r} (F1 {was:.2f})\n  again: {new.short_answer!r} "
          f"(F1 {now:.2f}); shown: {new.answer[:160]!r}\n  reply: {answer_part(new.raw_output)[:160]!r}", flush=True)
print()
for g, xs in sorted(scores.items()):
    print(f"{g}: Answer-F1 over its bare replies, run {sum(x for x, _ in xs) / len(xs):.3f} -> asked again "
          f"{sum(y for _, y in xs) / len(xs):.3f} (n={len(xs)}; better {sum(y > x for x, y in xs)}, worse {sum(y < x for x, y in xs)})")
