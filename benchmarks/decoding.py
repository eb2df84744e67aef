"""Decoding settings of the embedded generator measured on whole answers (issue 41): llama.cpp's threads, prompt batch size and
prompt-lookup decoding (draft tokens copied from the prompt, since answers often copy passage text), each against the
default on the same questions, the same passages and the same grammar, one variant after the other in one process.

Every model call is timed by the record's call log (`llm.calls_recorded`): the seconds of the answer call, its prompt
tokens (read again after the KV cache's shared prefix) and its completion tokens. Greedy decoding with a draft accepts
only the tokens the model would have chosen, so the replies must be the same text: the script says when they are not.
Verification is off (it does not depend on these settings). Train papers only.

    .venv/bin/python benchmarks/decoding.py --n 6 --threads 2 --out reports/bench/decoding.json
"""
import argparse, json, statistics, time
from pathlib import Path
from qasper_rag.answer.answer import Answerer
from qasper_rag.app import load_corpus
from qasper_rag.core.llama import LlamaCppGenerator
from qasper_rag.core.models import qwen_gguf_path
from qasper_rag.retrieve.retrieval import Retriever

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
p.add_argument("--n", type=int, default=6, help="train questions (the first N)")
p.add_argument("--threads", type=int, default=2)
p.add_argument("--config", default="offline-2k", help="retrieval preset")
p.add_argument("--out", default=str(ROOT/"reports/bench/decoding.json"))
a = p.parse_args()

corpus, _ = load_corpus(a.data, "train")
qs = [(paper, q) for paper in corpus for q in paper.questions][:a.n]
variants = {f"default ({a.threads} threads, n_batch 512)": {},
            "n_batch 2048": {"n_batch": 2048},
            f"{max(1, a.threads // 2)} thread{'s' if a.threads // 2 > 1 else ''}": {"n_threads": max(1, a.threads // 2)},
            # llama-cpp-python's draft path needs logits for every prompt token, all in one batch (a prompt longer than n_batch fails)
            "prompt lookup 10 (n_batch 4096)": {"prompt_lookup": 10, "n_batch": 4096, "n_ctx": 4096}}
rows, texts, retriever = {}, {}, None
for name, kw in variants.items():
    t0 = time.perf_counter()
    gen = LlamaCppGenerator(qwen_gguf_path(), **{"n_threads": a.threads, **kw})
    retriever = retriever or Retriever(a.config, budget_tokenizer=gen.tokenizer())
    ans = Answerer(retriever, gen, max_tokens=200, verifier=None)
    ans.answer(qs[0][0], "What is this paper about?")  # warm-up: the model's first call pays for its buffers
    out = []
    for paper, q in qs:
        rec = ans.answer(paper, q.text, q.id)[0]
        if rec.failed and not rec.calls: raise SystemExit(f"{name}: the answer failed: {rec.problems}")
        call = next(c for c in rec.calls if c["purpose"] == "answer")
        out.append({"question_id": q.id, "answer_seconds": call["seconds"], "prompt_tokens": call["prompt_tokens"],
                    "read_tokens": call["prompt_tokens"] - (call["reused_tokens"] or 0), "completion_tokens": call["completion_tokens"],
                    "generation_seconds": rec.timings["generation"]})
        texts.setdefault(q.id, {})[name] = rec.raw_output
    med = lambda k: round(statistics.median(r[k] for r in out), 2)
    rows[name] = {"settings": kw, "n": len(out), "answer_call_seconds_median": med("answer_seconds"),
                  "generation_seconds_median": med("generation_seconds"), "prompt_tokens_median": med("prompt_tokens"),
                  "completion_tokens_median": med("completion_tokens"), "load_and_run_seconds": round(time.perf_counter() - t0, 1),
                  "per_question": out}
    print(f"{name:<24} n={len(out)}  answer call {rows[name]['answer_call_seconds_median']:6.2f} s (median)  generation "
          f"{rows[name]['generation_seconds_median']:6.2f} s  prompt {rows[name]['prompt_tokens_median']:.0f} tok  "
          f"completion {rows[name]['completion_tokens_median']:.0f} tok", flush=True)
    del ans, gen
base = next(iter(variants))
for name in variants:
    same = sum(t[name] == t[base] for t in texts.values())
    rows[name]["same_reply_as_default"] = same
    print(f"{name:<24} same reply as the default for {same} of {len(texts)} questions")
Path(a.out).write_text(json.dumps({"script": "benchmarks/decoding.py", "threads": a.threads, "config": a.config,
                                   "questions": len(qs), "variants": rows}, indent=1) + "\n")
print("wrote", a.out)
