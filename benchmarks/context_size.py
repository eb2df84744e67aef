"""Evidence recall against the tokens the prompt really carries, for passage sizes and context budgets (issue 41: fewer
prompt tokens at the same quality). The default sends whole 500-token passages up to 2,000 tokens; prefill of those
tokens is most of an answer's time on two cores. Smaller passages carry the evidence of more places in the same tokens.

For each chunker setting, every question with evidence is ranked once (the offline-2k retrieval: BM25 + MiniLM, RRF),
then packed again at each budget, counted with the generator's tokenizer as a run counts it. Printed per data file:
strict recall (a gold paragraph counts when all of it is sent), lenient recall (when any part of it is sent: a
passage that cuts a paragraph still carries its sentences), and the mean tokens of the passages as the prompt shows
them (`prompts.context_block`: section heading, no title prefix). No answer is generated. Train papers and the dev file
only: settings are chosen there, never on the shared test papers.

    .venv/bin/python benchmarks/context_size.py --out reports/bench/context_size.json
"""
import argparse, json, statistics, time
from pathlib import Path
from qasper_rag.app import load_corpus
from qasper_rag.chunking import ChunkerConfig
from qasper_rag.generate import load_generator
from qasper_rag.metrics import bootstrap_ci
from qasper_rag.prompts import context_block
from qasper_rag.retrieval import Retriever, get_config

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent/"shared/data/qasper"
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--chunks", default="500,250,150", help="passage sizes in tokens (the chunker's max_tokens)")
p.add_argument("--budgets", default="500,750,1000,1250,1500,2000")
p.add_argument("--generator", default="qwen-1.5b", help="whose tokenizer counts the budget and the prompt")
p.add_argument("--out", default=str(ROOT/"reports/bench/context_size.json"))
a = p.parse_args()

data = {"train": (str(SHARED/"original_format"), "train"), "dev": (str(SHARED/"dev"), None)}
corpora = {k: load_corpus(d, split)[0] for k, (d, split) in data.items()}
tok = load_generator(a.generator, n_threads=1).tokenizer()
budgets = [int(b) for b in a.budgets.split(",")]

def reached(cp, ev, ids, lenient):
    "Did gold evidence `ev` reach a context of `ids`: all of it (strict, the project's measure) or any part (lenient)."
    if not lenient: return cp.reached(ev, ids)
    loc = cp.locate(ev)
    return bool(set(ids) & (set(loc.full) | set(loc.partial)))

def question_row(cp, q, ids):
    flags = {m: [reached(cp, e, ids, m == "lenient") for e in q.evidence] for m in ("strict", "lenient")}
    prompt_tokens = tok.count(context_block([cp.by_id[i] for i in ids])) if ids else 0
    return {m: sum(f) / len(f) for m, f in flags.items()} | {"tokens": prompt_tokens, "passages": len(ids)}

results, t0 = [], time.time()
for size in [int(s) for s in a.chunks.split(",")]:
    base = get_config("offline-2k")
    cfg = base.replace(name=f"offline-c{size}", chunker=ChunkerConfig(**{**base.chunker.__dict__, "max_tokens": size}))
    r = Retriever(cfg, budget_tokenizer=tok)
    for split, corpus in corpora.items():
        rows = {b: [] for b in budgets}
        for paper in corpus:
            for q in paper.questions:
                if not q.evidence: continue
                res = r.retrieve(paper, q.text)
                for b in budgets:
                    rows[b].append(question_row(res.chunked, q, r.repack(res, b).chunk_ids))
        for b in budgets:
            xs = rows[b]
            out = {"chunk_tokens": size, "budget": b, "split": split, "n": len(xs),
                   "prompt_tokens": round(statistics.mean(x["tokens"] for x in xs), 1),
                   "passages": round(statistics.mean(x["passages"] for x in xs), 2)}
            for m in ("strict", "lenient"):
                v = [x[m] for x in xs]
                out[m] = round(statistics.mean(v), 4); out[m + "_ci95"] = [round(c, 4) for c in bootstrap_ci(v)]
            out["per_question"] = [{k: x[k] for k in ("strict", "lenient", "tokens")} for x in xs]
            results.append(out)
            print(f"chunks {size:>3}  budget {b:>4}  {split:<5}  n={len(xs):>2}  prompt tokens {out['prompt_tokens']:>6.0f}  "
                  f"passages {out['passages']:>5.2f}  strict {out['strict']:.3f} [{out['strict_ci95'][0]:.3f}, {out['strict_ci95'][1]:.3f}]  "
                  f"lenient {out['lenient']:.3f} [{out['lenient_ci95'][0]:.3f}, {out['lenient_ci95'][1]:.3f}]", flush=True)

Path(a.out).write_text(json.dumps({"script": "benchmarks/context_size.py", "generator_tokenizer": a.generator,
                                   "retrieval": "offline-2k with the chunker's max_tokens varied", "seconds": round(time.time() - t0, 1),
                                   "results": results}, indent=1) + "\n")
print(f"wrote {a.out} ({time.time() - t0:.0f} s)")
