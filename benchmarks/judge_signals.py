"""Two more signals for the grounded judge's model stage, measured against the reference labels of citation support and
not kept: kappa on the train papers' items (where a choice would be made) and the test papers' items apart.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/judge_signals.py [--labels FILE] [--data FOLDER] [--cache FILE] [--quotes FILE]

Only items that pass the judge's lexical grounding reach its model, so only those can change. For each:
- **contextual calibration** (Zhao et al. 2021, "Calibrate before use"): the model's P(Yes) for the same claim with no
  passage ("(no passage)"), the prior it gives a claim that merely sounds right; the judge says supported when
  logit P(Yes) - a * logit P(Yes | no passage) >= t (a = 0, t = 0 is the shipped judge);
- **the supporting sentence**: the model is asked to copy the one sentence of the best window that states the claim (or
  write None), and the copy is checked to occur in the window (case, punctuation and spacing aside); kept as an extra
  condition (supported and a sentence found) or as a second way in (supported, or a sentence found with P(Yes) >= 0.2);
- **grounding alone**: every item that passes grounding is supported (the model's reading taken out).
P(Yes) values are cached in `--cache` and the copied sentences in `--quotes`, so a rerun asks the model nothing (cold: about
four minutes on two cores).
"""
import argparse, hashlib, json, math, re
from pathlib import Path
from qasper_rag.evaluate.evaluate import question_groups
from qasper_rag.core.generate import load_generator
from qasper_rag.answer.judges import JUDGE_PROMPT, JUDGE_SYSTEM, GroundedJudge, LLMJudge

from qasper_rag.answer.labels import label_agreement, read_label_items
ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--labels", default=str(ROOT.parent/"shared/data/labels/citation_support_offline_full.csv"))
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
p.add_argument("--cache", default=str(ROOT/"data/cache/judge_fit.jsonl"), help="P(Yes) cache (shared with judge_fit.py)")
p.add_argument("--quotes", default=str(ROOT/"data/cache/judge_quotes.jsonl"), help="copied sentences, appended")
a = p.parse_args()
Path(a.cache).parent.mkdir(parents=True, exist_ok=True)
items = read_label_items(a.labels)
where = question_groups(a.data)
group = {i.item_id: ("train" if "train" in where.get(i.item_id.split("#")[0], "") else "test") for i in items}
gen = load_generator("qwen-1.5b")
judge = GroundedJudge(gen, cache=a.cache)
prior = LLMJudge(gen, cache=judge.cache)  # the same Yes/No question, read with no passage
QUOTE = ("Passage:\n{premise}\n\nClaim: {hypothesis}\n\nCopy, word for word, the one sentence of the passage that states what the "
         "claim says. If no sentence of the passage states it, write None.")
quotes = {}
if Path(a.quotes).exists():
    for l in open(a.quotes): d = json.loads(l); quotes[d["key"]] = d["text"]

def copied(window: str, hypothesis: str) -> str:
    key = hashlib.sha256(f"{gen.name}\n{window}\n{hypothesis}".encode()).hexdigest()
    if key not in quotes:
        g = gen.generate([{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": QUOTE.format(premise=window, hypothesis=hypothesis)}], max_tokens=120)
        quotes[key] = g.text.strip()
        with open(a.quotes, "a") as f: f.write(json.dumps({"key": key, "text": quotes[key]}) + "\n")
    return quotes[key]

norm = lambda s: re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", s.lower())).strip()
rows = []
for i in items:
    v = judge.verdict(i.premise, i.hypothesis, i.question)
    r = {"group": group[i.item_id], "label": i.label, "supported": int(v.supported), "p": v.p}
    if v.p is not None:
        r["prior"] = prior.probability("(no passage)", i.hypothesis)
        q = copied(v.grounding.span, i.hypothesis).strip().strip('"')
        r["none"] = not q or q.lower().startswith("none")
        r["found"] = not r["none"] and norm(q) in norm(v.grounding.span)
    rows.append(r)

logit = lambda x: math.log(max(x, 1e-6) / max(1 - x, 1e-6))
def show(name, decide):
    cells = []
    for g in ("train", "test"):
        sub = [r for r in rows if r["group"] == g]
        k = label_agreement([int(decide(r)) for r in sub], [r["label"] for r in sub])
        cells.append(f"{g} {k['kappa']:.3f} (false 'supported' {k['false_supported_rate']}, n={k['n']})")
    print(f"{name:58s} " + "  ".join(cells))

read = [r for r in rows if r["p"] is not None]
print(f"{len(items)} labelled items, {len(read)} reach the model; of those, the model wrote None for {sum(r['none'] for r in read)} "
      f"and a sentence found in the window for {sum(r['found'] for r in read)}")
print(f"P(Yes | no passage): median {sorted(r['prior'] for r in read)[len(read) // 2]:.3f}, "
      f"below the item's P(Yes) for {sum(r['prior'] < r['p'] for r in read)} of {len(read)}")
show("shipped (P(Yes) >= 0.5)", lambda r: r["supported"])
show("grounding alone", lambda r: r["p"] is not None)
for c in (0.25, 0.5, 1.0):
    for t in (-0.5, 0.0, 0.5, 1.0):
        show(f"calibrated: logit P - {c} logit P(no passage) >= {t}", lambda r: r["p"] is not None and logit(r["p"]) - c * logit(r["prior"]) >= t)
show("supported and a sentence found", lambda r: r["supported"] and r["found"])
show("supported, or a sentence found with P(Yes) >= 0.2", lambda r: r["supported"] or (r["p"] is not None and r["found"] and r["p"] >= 0.2))
