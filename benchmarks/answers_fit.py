"""How the answers judge's prompt and threshold were chosen: kappa against the `answers` labels of the reference label
file (does a shown sentence help answer its question?), fitted on the train papers' items, the test papers' items
reported apart with the threshold fitted on train.

A plain script: it prints numbers and writes them to --out; it checks nothing. Run from the project root:

    .venv/bin/python benchmarks/answers_fit.py [--labels FILE] [--data FOLDER] [--cache FILE] [--out FILE]

For each prompt variant the embedded Qwen's P(Yes) is asked once per labelled sentence (cached in --cache), the form
check (`answering.form_problem`) answers 'no' without the model, and the threshold is the train items' best kappa.
"""
import argparse, json, subprocess
from datetime import date
from pathlib import Path
from qasper_rag.answer.answering import ANSWERS_PROMPT, TYPED_PROMPTS, AnswersJudge, fit_threshold, form_problem, read_answer_labels
from qasper_rag.evaluate.evaluate import question_groups
from qasper_rag.core.generate import load_generator
from qasper_rag.answer.labels import label_agreement, read_label_items

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--labels", default=str(ROOT.parent/"shared/data/labels/citation_support_answers_1203e.csv"))
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
p.add_argument("--cache", default=str(ROOT/"data/cache/answers_fit.jsonl"))
p.add_argument("--out", default=str(ROOT/"reports/judges/answers_fit.json"))
p.add_argument("--threads", type=int, default=2)
a = p.parse_args()
Path(a.cache).parent.mkdir(parents=True, exist_ok=True)
items, answers = read_label_items(a.labels), read_answer_labels(a.labels)
items = [i for i in items if i.item_id in answers]
where = question_groups(a.data)
group = {i.item_id: where.get(i.item_id.split("#")[0], "other") for i in items}
train = [i for i in items if "train" in group[i.item_id]]
test = [i for i in items if "test" in group[i.item_id]]
gen = load_generator("qwen-1.5b", n_threads=a.threads)

VARIANTS = {  # user templates ({premise}: the question, {hypothesis}: the sentence), or one per kind of question (`asks_for`)
    "shipped": ANSWERS_PROMPT,
    "plain": "Question: {premise}\nSentence: {hypothesis}\n\nDoes the sentence answer the question? Answer Yes or No.",
    "specific": ("Question: {premise}\nCandidate answer: {hypothesis}\n\nDoes the candidate give the specific information "
                 "the question asks for (for example the number, the names, or the method)? Answer Yes or No."),
    "typed": TYPED_PROMPTS,
}
form_only = lambda its: label_agreement([int(form_problem(i.question, i.claim) is None) for i in its], [answers[i.item_id] for i in its])
out = {"labels": Path(a.labels).name, "n_train": len(train), "n_test": len(test), "generator": gen.name,
       "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip(),
       "date": str(date.today()), "form_only": {"train": form_only(train), "test": form_only(test)}, "variants": {}}
print(f"{len(train)} train items, {len(test)} test items; form check alone: train kappa {out['form_only']['train']['kappa']}, "
      f"test {out['form_only']['test']['kappa']}")
for name, prompts in VARIANTS.items():
    judge = AnswersJudge(gen, cache=a.cache, prompts=prompts)
    ps = lambda its: [None if form_problem(i.question, i.claim) else judge._p(i.question, i.claim) for i in its]
    p_train, p_test = ps(train), ps(test)
    t, k = fit_threshold(p_train, [answers[i.item_id] for i in train])
    said = lambda pp: [int(x is not None and x >= t) for x in pp]
    row = {"threshold": t, "train": label_agreement(said(p_train), [answers[i.item_id] for i in train]),
           "test": label_agreement(said(p_test), [answers[i.item_id] for i in test]),
           "model_only_train_at_0.5": label_agreement([int(x is not None and x >= 0.5) for x in p_train], [answers[i.item_id] for i in train])}
    out["variants"][name] = row
    print(f"{name:9s} threshold {t}: train kappa {row['train']['kappa']} {row['train']['kappa_ci95']} (n={row['train']['n']}), "
          f"test kappa {row['test']['kappa']} {row['test']['kappa_ci95']} (n={row['test']['n']})", flush=True)
Path(a.out).parent.mkdir(parents=True, exist_ok=True)
Path(a.out).write_text(json.dumps(out, indent=1))
print(f"wrote {a.out}")
