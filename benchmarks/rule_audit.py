"""Rules read off the shared test questions, each turned off and replayed on a run's records: does it also help on the
train papers and the development file?

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/rule_audit.py [--run reports/offline-full --data ../shared/data/qasper/original_format]
        [--run /work/runs/dev-XXXX --data ../shared/data/qasper/dev] ...   (pairs of --run/--data, pooled)

The short-answer stage after generation is deterministic given the model's replies, and a run's record keeps them: the
reply (`raw_output`), each second ask and its reply in `problems` ("short answer 'A' <problem>: asked again -> 'B'"). So
each rule can be replayed off without asking the model again: the model's own short answer goes through the stage as
the answerer runs it (form check with acronyms written out, the second ask's recorded reply, number rebinding, acronyms,
`answer._as_written`, agreement with the verified answer) with the rule left out. A replay that would need a second
ask the run never made keeps the run's answer and is counted as "needs a model call". With no rule off the replay must
give the run's own short answers; the script prints how many it reproduces.

The rules audited were read off shared test questions (commit messages name them). The decision rule (issue 38): a rule
stays only if, pooled over the train papers and the development file, its mean Answer-F1 difference is above zero and
more questions are better than worse with it; the test papers are printed to report, never to decide.

At caecbab (`git show caecbab:benchmarks/rule_audit.py`, output in reports/judges/rule_audit.txt) five were audited and
four removed: the prompt's example copied and asked again without it (7bed062/f35519d), the example's short answer
refused (7bed062), "counts instead of naming" asked again (a4bef8e) and acronyms written out (e1ddc36): none changed a
train answer, and on the dev questions answered then only the acronyms rule changed one, for the worse. The one left is
audited here: citation placeholders removed from short answers (2a216d7, 'GloVe, BIBREF19', a test question).
"""
import argparse, json, re
from pathlib import Path
from qasper_rag.answer.answer import UNANSWERABLE
from qasper_rag.app import load_corpus
from qasper_rag.papers.chunking import ChunkerConfig, QasperChunker
from qasper_rag.evaluate.evaluate import question_groups
from qasper_rag.evaluate.metrics import gold_from_corpus, token_f1
from qasper_rag.core.stats import bootstrap_ci
from qasper_rag.answer.prompts import parse_output, usable_short_answer
from qasper_rag.answer.short import first_line, method_clause, passage_span, rebind_number, short_answer_problem, without_citations
from qasper_rag.evaluate.short_eval import agreed_with_record

RULES = {"citations": "citation placeholders removed from the short answer"}
_ASKED = re.compile(r"^(?:short answer asked separately; )?short answer '(.*)' ([a-z ]+): asked again(?: -> '(.*)'|, no better \('(.*)'\))$", re.S)


def second_asks(record: dict) -> dict[str, str]:
    "The recorded second asks: problem -> the reply's first line."
    out = {}
    for p in record.get("problems", []):
        if (m := _ASKED.match(p)): out[m.group(2)] = m.group(3) if m.group(3) is not None else m.group(4)
    return out


def first_short(record: dict) -> str | None:
    "The model's own short answer, as the stage received it (None: it was asked separately and the record lost the reply)."
    own = parse_output(record.get("raw_output") or "").short_answer
    if usable_short_answer(record["question"], own): return own
    for p in record.get("problems", []):  # asked separately and then asked again in the question's form: the note names it
        if p.startswith("short answer asked separately; ") and (m := _ASKED.match(p)): return m.group(1)
    return None


def as_written(question: str, short: str, record: dict, texts: list[str], off: set) -> str:
    "`answer._as_written` with the citation rule optionally off."
    if "citations" not in off: short = without_citations(short)
    short = method_clause(question, short)
    cited = list(dict.fromkeys(i for s in record.get("sentences", []) for i in s.get("citations", [])))
    docs = [d for d in cited if 1 <= d <= len(texts)] + [k for k in range(1, len(texts) + 1) if k not in cited]
    return passage_span(question, short, [texts[d - 1] for d in docs])[0]


def replay(record: dict, texts: list[str], off: set) -> tuple[str | None, str]:
    "The record's short answer with the rules in `off` left out, and how (`same`, `replayed`, `model call`, `no reply`)."
    q, asks = record["question"], second_asks(record)
    s0 = first_short(record)
    if s0 is None: return None, "no reply"
    short, problem = s0, short_answer_problem(q, s0)
    if problem:
        if problem not in asks: return None, "model call"
        again = first_line(asks[problem])
        short = again if usable_short_answer(q, again) and not short_answer_problem(q, again) else s0
    if not short.lower().startswith("unanswerable"):
        short = as_written(q, rebind_number(q, short, texts), record, texts, off)
    else: short = UNANSWERABLE
    return agreed_with_record(short, record, texts), "replayed"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", action="append", help="a run folder (records.jsonl); repeat with --data")
    p.add_argument("--data", action="append", help="the QASPER file or folder the run answered; one per --run")
    a = p.parse_args()
    root = Path(__file__).resolve().parents[1]
    runs = a.run or [str(root/"reports/offline-full")]
    datas = a.data or [str(root.parent/"shared/data/qasper/original_format")]
    if len(runs) != len(datas): p.error("give one --data per --run")
    rows = []  # (group, question id, {variant: f1})
    for run, data in zip(runs, datas):
        lines = [json.loads(l) for l in open(Path(run)/"records.jsonl") if l.strip()]
        corpus, _ = load_corpus(data)
        gold, groups = gold_from_corpus(corpus), question_groups(data)
        chunked = {}
        how = {v: {} for v in ["run", *RULES]}
        for l in lines:
            r, qid = l["record"], l["question_id"]
            if qid not in gold or r.get("failed") or not r.get("raw_output"): continue
            pid = l["paper_id"]
            if pid not in chunked:
                paper = corpus.paper(pid); chunker = QasperChunker(ChunkerConfig(**r["config"]["retrieval"]["chunker"]))
                chunked[pid] = {c.id: c.body for c in chunker(paper)}
            texts = [chunked[pid].get(c["chunk_id"], "") for c in r.get("context", [])]
            f1 = lambda s: max(token_f1(s, ref.answer) for ref in gold[qid])
            shown = r.get("short_answer") or ""
            row = {"shown": f1(shown)}
            for v in ["run", *RULES]:
                s, kind = replay(r, texts, set() if v == "run" else {v})
                how[v][kind] = how[v].get(kind, 0) + 1
                row[v] = f1(shown if s is None else s)
                if v == "run": row["reproduced"] = s is not None and s == shown
            rows.append((Path(groups.get(qid, "?")).name, qid, row))
        print(f"{run}: {len(lines)} records; replay with no rule off reproduces {sum(r['reproduced'] for _, _, r in rows if r)} "
              f"of {len(rows)} short answers so far; outcomes per variant: {how}")

    def report(name: str, sel: list):
        if not sel: return
        print(f"\n{name} (n={len(sel)}): mean Answer-F1 of the run as shown {sum(r['shown'] for _, _, r in sel) / len(sel):.3f}")
        print(f"  {'rule turned off':<16} {'changed':>7} {'better':>6} {'worse':>5} {'mean diff (with - without)':>27} {'95% CI':>18}")
        for v in RULES:
            d = [r["run"] - r[v] for _, _, r in sel]
            lo, hi = bootstrap_ci(d)
            print(f"  {v:<16} {sum(x != 0 for x in d):>7} {sum(x > 0 for x in d):>6} {sum(x < 0 for x in d):>5} "
                  f"{sum(d) / len(d):>+27.4f} {f'[{lo:+.3f}, {hi:+.3f}]':>18}")

    for g in sorted({g for g, _, _ in rows}): report(g, [x for x in rows if x[0] == g])
    fit = [x for x in rows if "test" not in x[0]]
    report("train + development (pooled; decides)", fit)
    print("\nDecision (train + development): a rule stays if its mean difference is above 0 and more questions are better than worse")
    for v, what in RULES.items():
        d = [r["run"] - r[v] for _, _, r in fit]
        keep = bool(d) and sum(d) / len(d) > 0 and sum(x > 0 for x in d) > sum(x < 0 for x in d)
        print(f"  {v:<16} {'keep' if keep else 'remove'}: {what}")


if __name__ == "__main__":
    main()
