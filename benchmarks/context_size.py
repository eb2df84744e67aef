"""Evidence recall against the tokens the prompt really carries, for passage sizes, context budgets and sentence-level
context (issue 41: fewer prompt tokens at the same quality). The default sends whole 500-token passages up to 2,000
tokens; prefill of those tokens is most of an answer's time on two cores. Smaller passages, or only the sentences of the
packed passages that bear on the question (`RetrievalConfig.sentence_budget`), carry the evidence of more places in the
same tokens.

For each chunker setting, every question with evidence is ranked once (the offline-2k retrieval: BM25 + MiniLM, RRF),
then packed again at each budget, counted with the generator's tokenizer as a run counts it. Sentence rows pool the
passages packed at `--pool` tokens and keep their best sentences up to each sentence budget (`--sentence-rank`: dense
cosine alone, or fused by RRF with the passage's rank). Printed per data file:
- strict: a gold paragraph counts when all of it is sent in whole passages (the project's measure; sentence rows: all of
  its sentences sent);
- lenient: when any part of it is sent (a passage that cuts a paragraph still carries its sentences);
- sentence: when at least one of its sentences is sent whole (tables and figures: when their passage is sent), the
  measure that compares whole passages with excerpts;
and the mean tokens of the passages as the prompt shows them (`prompts.context_block` of `Retrieval.prompt_passages`).
No answer is generated. Train papers and the dev file only: settings are chosen there, never on the shared test papers.

    .venv/bin/python benchmarks/context_size.py --out reports/bench/context_size.json
"""
import argparse, dataclasses, json, statistics, time
from pathlib import Path
from qasper_rag.app import load_corpus
from qasper_rag.papers.chunking import ChunkerConfig
from qasper_rag.core.generate import load_generator
from qasper_rag.core.stats import bootstrap_ci
from qasper_rag.retrieve.packing import passage_sentences
from qasper_rag.answer.prompts import context_block
from qasper_rag.retrieve.retrieval import Retriever

from qasper_rag.retrieve.config import get_config
ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent/"shared/data/qasper"
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--chunks", default="500,250,150", help="passage sizes in tokens (the chunker's max_tokens)")
p.add_argument("--budgets", default="500,750,1000,1250,1500,2000")
p.add_argument("--sentence-chunks", default="500", help="passage sizes whose sentences are selected ('': no sentence rows)")
p.add_argument("--pool", type=int, default=4000, help="tokens of whole passages the sentences are chosen from")
p.add_argument("--sentence-budgets", default="500,750,1000,1250")
p.add_argument("--sentence-rank", default="fused,dense")
p.add_argument("--generator", default="qwen-1.5b", help="whose tokenizer counts the budget and the prompt")
p.add_argument("--out", default=str(ROOT/"reports/bench/context_size.json"))
a = p.parse_args()

data = {"train": (str(SHARED/"original_format"), "train"), "dev": (str(SHARED/"dev"), None)}
corpora = {k: load_corpus(d, split)[0] for k, (d, split) in data.items()}
tok = load_generator(a.generator, n_threads=1).tokenizer()
ints = lambda s: [int(x) for x in s.split(",") if x]
norm = lambda s: " ".join(s.split())

def sentence_reached(cp, ev, ctx, strict):
    "Did at least one sentence (strict: every sentence) of gold evidence `ev` reach the context, whole passages or excerpts."
    loc, ids, shown = cp.locate(ev), set(ctx.chunk_ids), dict(ctx.shown)
    if loc.kind in ("float", "heading"): return bool(ids & set(loc.full))  # one unit, sent whole or not at all
    if loc.kind != "text": return False
    here = [c for c in cp.chunks if c.id in ids and c.id in set(loc.full) | set(loc.partial)]  # paper order
    text = " ".join(norm(shown.get(c.id, c.body)) for c in here)
    hits = [norm(s) in text for s in passage_sentences(cp.paragraph_text(loc.section, loc.paragraph))]
    return bool(hits) and (all(hits) if strict else any(hits))

def passage_reached(cp, ev, ids, lenient):
    "Did gold evidence `ev` reach a context of whole passages `ids`: all of it (strict) or any part (lenient)."
    if not lenient: return cp.reached(ev, ids)
    loc = cp.locate(ev)
    return bool(set(ids) & (set(loc.full) | set(loc.partial)))

def question_row(res, ctx, q):
    cp, unit = res.chunked, "sentence" if ctx.shown else "passage"
    flags = {"strict": [sentence_reached(cp, e, ctx, True) if unit == "sentence" else passage_reached(cp, e, ctx.chunk_ids, False) for e in q.evidence],
             "lenient": [sentence_reached(cp, e, ctx, False) if unit == "sentence" else passage_reached(cp, e, ctx.chunk_ids, True) for e in q.evidence],
             "sentence": [sentence_reached(cp, e, ctx, False) for e in q.evidence]}
    prompt_tokens = tok.count(context_block(dataclasses.replace(res, context=ctx).prompt_passages)) if ctx.chunk_ids else 0
    return {m: sum(f) / len(f) for m, f in flags.items()} | {"tokens": prompt_tokens, "passages": len(ctx.chunk_ids)}

def summary(xs, **key):
    out = key | {"n": len(xs), "prompt_tokens": round(statistics.mean(x["tokens"] for x in xs), 1),
                 "passages": round(statistics.mean(x["passages"] for x in xs), 2)}
    for m in ("strict", "lenient", "sentence"):
        v = [x[m] for x in xs]
        out[m] = round(statistics.mean(v), 4); out[m + "_ci95"] = [round(c, 4) for c in bootstrap_ci(v)]
    out["per_question"] = [{k: x[k] for k in ("strict", "lenient", "sentence", "tokens")} for x in xs]
    print(f"{key.get('unit'):<8} chunks {key['chunk_tokens']:>3}  budget {key['budget']:>4}  sentences {str(key.get('sentence_budget') or '-'):>4} "
          f"{key.get('sentence_rank') or '':<5}  {key['split']:<5}  n={len(xs):>2}  prompt tokens {out['prompt_tokens']:>6.0f}  "
          f"passages {out['passages']:>5.2f}  strict {out['strict']:.3f}  lenient {out['lenient']:.3f}  "
          f"sentence {out['sentence']:.3f} [{out['sentence_ci95'][0]:.3f}, {out['sentence_ci95'][1]:.3f}]", flush=True)
    return out

def chunked_config(size, **kw):
    base = get_config("offline-2k")
    return base.replace(name=f"offline-c{size}", chunker=ChunkerConfig(**{**base.chunker.__dict__, "max_tokens": size}), **kw)

results, t0 = [], time.time()
settings = [(size, None) for size in ints(a.chunks)] + [(size, rank) for size in ints(a.sentence_chunks) for rank in a.sentence_rank.split(",")]
for size, rank in settings:
    r = Retriever(chunked_config(size, **({"sentence_rank": rank} if rank else {})), budget_tokenizer=tok)
    for split, corpus in corpora.items():
        rows = {}
        for paper in corpus:
            for q in paper.questions:
                if not q.evidence: continue
                res = r.retrieve(paper, q.text)
                for b in ints(a.budgets) if rank is None else ints(a.sentence_budgets):
                    ctx = r.repack(res, b) if rank is None else r.repack(res, a.pool, b)
                    rows.setdefault(b, []).append(question_row(res, ctx, q))
        for b, xs in rows.items():
            key = ({"unit": "passage", "chunk_tokens": size, "budget": b} if rank is None else
                   {"unit": "sentence", "chunk_tokens": size, "budget": a.pool, "sentence_budget": b, "sentence_rank": rank})
            results.append(summary(xs, **key, split=split))

Path(a.out).write_text(json.dumps({"script": "benchmarks/context_size.py", "generator_tokenizer": a.generator,
                                   "retrieval": "offline-2k with the chunker's max_tokens varied; sentence rows: its passages packed to "
                                                f"{a.pool} tokens, their best sentences up to each sentence budget",
                                   "seconds": round(time.time() - t0, 1), "results": results}, indent=1) + "\n")
print(f"wrote {a.out} ({time.time() - t0:.0f} s)")
