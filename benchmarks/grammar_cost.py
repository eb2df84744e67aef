"""What grammar-constrained sampling costs the embedded generator (issue 41): the answer prompt of each train question
decoded three times on the same loaded model (without a grammar first, then the two grammar paths in turn): under the answer grammar
(`prompts.answer_grammar`) through llama.cpp's own sampler chain (`chain`: every token filters the whole vocabulary), under the
same grammar as `LlamaCppGenerator.generate` decodes it (`check`: the first choice checked alone, `GreedyUnderGrammar`),
and without a grammar (`free`).

llama.cpp's own counters (`LlamaCppGenerator.last_timings`) split each call into prompt evaluation and token evaluation
(the model's forward passes); what is left of the call's seconds is sampling (the grammar's work is here), detokenising
and Python. The grammar's cost is the difference of that remainder per completion token, with and without the grammar.
The free replies differ (the grammar changes what the model may write), so costs are compared per token, not per reply;
`chain` and `check` must give the same reply (the script counts where they do).
Train papers only; verification plays no part. A plain script: it prints and writes numbers, checks nothing.

    .venv/bin/python benchmarks/grammar_cost.py --n 8 --threads 2 --out reports/bench/grammar_cost.json
"""
import argparse, json, statistics, time
from qasper_rag.core.llama import _llama_cpp
from pathlib import Path
from qasper_rag.answer.prompts import answer_grammar, build_messages
from qasper_rag.app import load_corpus
from qasper_rag.core.llama import LlamaCppGenerator
from qasper_rag.core.models import qwen_gguf_path
from qasper_rag.retrieve.retrieval import Retriever

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
p.add_argument("--n", type=int, default=8, help="train questions (the first N)")
p.add_argument("--threads", type=int, default=2)
p.add_argument("--config", default="offline-2k", help="retrieval preset")
p.add_argument("--max-tokens", type=int, default=200)
p.add_argument("--out", default=str(ROOT/"reports/bench/grammar_cost.json"))
a = p.parse_args()

corpus, _ = load_corpus(a.data, "train")
qs = [(paper, q) for paper in corpus for q in paper.questions][:a.n]
gen = LlamaCppGenerator(qwen_gguf_path(), n_threads=a.threads)
retriever = Retriever(a.config, budget_tokenizer=gen.tokenizer())
gen.generate([{"role": "user", "content": "Say hello."}], max_tokens=8)  # warm-up: the first call pays for its buffers

def chain(msgs, grammar):
    "llama.cpp's chain: the compiled grammar handed to llama-cpp-python, which filters every token's whole vocabulary."
    _llama_cpp().llama_perf_context_reset(gen.llm.ctx)
    r = gen.llm.create_chat_completion(messages=msgs, max_tokens=a.max_tokens, temperature=0.0, seed=gen.seed, grammar=gen.grammar(grammar))
    return r["choices"][0]["message"]["content"], r["usage"]["completion_tokens"]

def timed(msgs, grammar, through_chain=False):
    t0 = time.perf_counter()
    if through_chain: text, tokens = chain(msgs, grammar)
    else: g = gen.generate(msgs, max_tokens=a.max_tokens, temperature=0.0, grammar=grammar); text, tokens = g.text, g.completion_tokens
    sec, lt = time.perf_counter() - t0, gen.last_timings()
    rest = sec - lt["prompt_seconds"] - lt["gen_seconds"]
    return text, {"seconds": round(sec, 3), "prompt_eval_seconds": round(lt["prompt_seconds"], 3), "prompt_eval_tokens": lt["prompt_tokens"],
            "token_eval_seconds": round(lt["gen_seconds"], 3), "completion_tokens": tokens,
            "rest_seconds": round(rest, 3), "rest_ms_per_token": round(1e3 * rest / max(1, tokens), 2),
            "eval_ms_per_token": round(1e3 * lt["gen_seconds"] / max(1, lt["gen_tokens"]), 2)}

rows = []
for i, (paper, q) in enumerate(qs):
    res = retriever.retrieve(paper, q.text)
    msgs = build_messages(q.text, res.prompt_passages, paper.title)
    grammar = answer_grammar(len(res.passages))
    gen.grammar(grammar)  # compiled before timing (cached per grammar text, as in a run)
    # free first: it reads the prompt into the KV cache, so chain and check (in turn first) both start from the same cached
    # prompt (a prompt read in batches and one read from the cache give slightly different logits, and greedy may follow them)
    order = [("free", None, False)] + [("chain", grammar, True), ("check", grammar, False)][:: 1 if i % 2 == 0 else -1]
    row, texts = {"question_id": q.id, "first": order[0][0]}, {}
    for name, gr, through in order: texts[name], row[name] = timed(msgs, gr, through)
    row["same_reply"] = texts["chain"] == texts["check"]
    rows.append(row)
    print(f"{i + 1}/{len(qs)} " + "; ".join(f"{k}: {row[k]['completion_tokens']} tok, {row[k]['seconds']} s, rest {row[k]['rest_ms_per_token']} ms/tok"
                                          for k in ("chain", "check", "free")) + f"; same reply: {row['same_reply']}", flush=True)

med = lambda k, f: round(statistics.median(r[k][f] for r in rows), 2)
summary = {k: {f: med(k, f) for f in ("seconds", "completion_tokens", "rest_ms_per_token", "eval_ms_per_token", "rest_seconds")}
           for k in ("chain", "check", "free")}
for k in ("chain", "check"):
    diffs = sorted(r[k]["rest_ms_per_token"] - r["free"]["rest_ms_per_token"] for r in rows)
    summary[f"{k}_grammar_ms_per_token_median"] = round(statistics.median(diffs), 2)
    summary[f"{k}_grammar_ms_per_token_range"] = [round(diffs[0], 2), round(diffs[-1], 2)]
    summary[f"{k}_grammar_seconds_per_answer_median"] = round(statistics.median(
        (r[k]["rest_ms_per_token"] - r["free"]["rest_ms_per_token"]) * r[k]["completion_tokens"] / 1e3 for r in rows), 2)
summary["same_reply_chain_and_check"] = sum(r["same_reply"] for r in rows)
print(json.dumps(summary, indent=1))
Path(a.out).write_text(json.dumps({"script": "benchmarks/grammar_cost.py", "threads": a.threads, "config": a.config, "n": len(rows),
                                   "summary": summary, "per_question": rows}, indent=1) + "\n")
print("wrote", a.out)
