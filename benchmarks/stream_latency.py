"""How soon `qasper-rag ask` shows something (issue 41): time to the first passage and to the first answer token, cold (the
model loaded first, as `ask` does) and warm (a second question to the same answerer), on a train paper.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/stream_latency.py [--threads 2] [--generator qwen-1.5b] [--config offline-2k]
                                                  [--paper 1909.00694] [--question "What is the seed lexicon?"]
                                                  [--warm-question "How big is seed lexicon used for training?"]

The answerer is the one `ask` builds (`app.make_answerer` from `AnswerSettings`: the default generator, retrieval preset and
verifying judge unless given), and the question is answered through `Answerer.stream`, as `ask` prints it. Cold times count from
just before `make_answerer` (the corpus is loaded before, as in `ask`): model load, retrieval (an index or vector cache missing
from data/cache is built then, and counted), then the model's first piece of text. Warm times count from the second
`stream` call. `--generator smollm2 --config bm25-only --verify lexical` runs it in seconds with the tests' tiny model.
"""
from __future__ import annotations
import argparse, time
from qasper_rag.core.env import shared_data_dir


def timed_answer(answerer, paper, question: str, t0: float) -> dict:
    "Seconds from `t0` to the first `Passages`, the first `Text` and `Done` of one streamed answer, with the record's own timings."
    from qasper_rag.answer.answer import Done, Passages, Text
    seen = {}
    for e in answerer.stream(paper, question):
        kind = {Passages: "first_passage", Text: "first_token", Done: "done"}.get(type(e))
        if kind and kind not in seen: seen[kind] = time.perf_counter() - t0
        if isinstance(e, Done): rec = e.record
    return {**seen, "passages": len(rec.context), "prompt_tokens": rec.usage.get("prompt_tokens", 0), "failed": rec.failed,
            "retrieval": rec.timings.get("retrieval", 0.0), "generation": rec.timings.get("generation", 0.0)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(shared_data_dir() / "original_format" / "qasper-train-sample10.json"), help="QASPER file (a train paper's)")
    ap.add_argument("--paper", default="1909.00694", help="the paper asked about")
    ap.add_argument("--question", default="What is the seed lexicon?", help="the first (cold) question")
    ap.add_argument("--warm-question", default="How big is seed lexicon used for training?", help="the second (warm) question")
    ap.add_argument("--generator", help="generator spec (default: $QASPER_GENERATOR, else qwen-1.5b)")
    ap.add_argument("--config", help="retrieval preset (default: AnswerSettings' offline-2k)")
    ap.add_argument("--verify", help="verifying judge (default: AnswerSettings' grounded)")
    ap.add_argument("--threads", type=int, help="llama.cpp threads (default: llama.default_threads())")
    a = ap.parse_args()
    import dataclasses
    from qasper_rag.app import load_corpus, make_answerer
    from qasper_rag.settings import AnswerSettings
    given = {k: v for k, v in (("generator", a.generator), ("retrieval", a.config), ("verify", a.verify), ("threads", a.threads)) if v is not None}
    settings = dataclasses.replace(AnswerSettings(), **given).resolved()
    t = time.perf_counter()
    corpus, _ = load_corpus(a.data)
    paper = corpus.paper(a.paper)
    print(f"corpus loaded in {time.perf_counter() - t:.2f} s; {settings}")
    t0 = time.perf_counter()
    answerer = make_answerer(settings, corpus)
    loaded = time.perf_counter() - t0
    rows = [("cold", a.question, timed_answer(answerer, paper, a.question, t0))]
    rows.append(("warm", a.warm_question, timed_answer(answerer, paper, a.warm_question, time.perf_counter())))
    print(f"model and answerer loaded in {loaded:.2f} s ({answerer.gen.name}; load_seconds {getattr(answerer.gen, 'load_seconds', float('nan')):.2f})")
    print(f"{'':5} {'first passage':>14} {'first token':>12} {'done':>8} {'retrieval':>10} {'generation':>11} {'prompt tok':>10}  question")
    for name, q, r in rows:
        print(f"{name:5} {r.get('first_passage', float('nan')):12.2f} s {r.get('first_token', float('nan')):10.2f} s {r['done']:6.1f} s "
              f"{r['retrieval']:8.2f} s {r['generation']:9.1f} s {r['prompt_tokens']:10d}  {q}" + ("  (failed)" if r["failed"] else ""))


if __name__ == "__main__":
    main()
