"""The `fast` run preset against the default on the train papers (issue 41's decision rule): train-paper runs of candidate
settings, each paired with the report's run on the same questions (`evaluate.compare_runs`: Answer-F1 and Evidence-F1 with
paired bootstrap 95% intervals, Unanswerable short answers, median seconds and tokens), its evidence recall, and whether
its settings are the preset's. A setting becomes the default only if its train Answer-F1 is within 0.02 of the default's;
otherwise it ships as the `fast` preset with these numbers. A plain script: it prints and writes numbers, checks nothing.

    .venv/bin/python benchmarks/fast_preset.py --runs reports/fast/c150-b500 reports/fast/fast-check reports/fast/fast-short \
        reports/fast/c150-b1000 reports/fast/qwen05-c150-b1000 reports/fast/s500-p4000 reports/fast/s750-p4000 \
        --contended reports/fast/fast-check reports/fast/s500-p4000 reports/fast/s750-p4000 \
        --pairs reports/fast/fast-check:reports/fast/fast-short reports/fast/c150-b500:reports/fast/fast-check
"""
import argparse, collections, json, statistics
from pathlib import Path
from qasper_rag.app import load_corpus
from qasper_rag.evaluate.evaluate import compare_runs, question_groups
from qasper_rag.retrieve.config import RetrievalConfig
from qasper_rag.settings import RUN_PRESETS

ROOT = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--baseline", default=str(ROOT/"reports/offline-full"), help="the default's run (its train questions are compared)")
p.add_argument("--runs", nargs="+", required=True, help="run folders of candidate settings on the train papers")
p.add_argument("--preset", default="fast")
p.add_argument("--data", default=str(ROOT.parent/"shared/data/qasper/original_format"))
p.add_argument("--contended", nargs="*", default=[], help="runs answered while other work shared the two cores: their seconds are not comparable and are left out")
p.add_argument("--pairs", nargs="*", default=[], metavar="BEFORE:AFTER", help="two candidate runs compared question by question (paired intervals), e.g. a setting against the preset's own run")
p.add_argument("--out", default=str(ROOT/"reports/bench/fast_preset.json"))
a = p.parse_args()

lines = lambda d: [json.loads(l) for l in open(Path(d)/"records.jsonl") if l.strip()]
run_json = lambda d: json.loads((Path(d)/"run.json").read_text())
corpus, _ = load_corpus(a.data)
groups = question_groups(a.data)
preset = RUN_PRESETS[a.preset].answer
want = {k: v for k, v in preset.retrieval_config().to_dict().items() if k != "name"}
base = lines(a.baseline)
out = {"script": "benchmarks/fast_preset.py", "preset": a.preset, "preset_settings": {"retrieval": preset.retrieval, "generator": preset.resolved().generator},
       "baseline": {"run": str(Path(a.baseline).relative_to(ROOT)) if Path(a.baseline).resolve().is_relative_to(ROOT) else a.baseline,
                    "commit": run_json(a.baseline).get("code", {}).get("commit")}, "candidates": []}
for d in a.runs:
    run, recs = run_json(d), lines(d)
    m = json.loads((Path(d)/"metrics.json").read_text())
    row = next(r for r in compare_runs(base, recs, corpus, groups) if r["group"] == "qasper-train-sample10")
    secs = sorted(l["seconds"] for l in recs)
    contended = Path(d).resolve() in {Path(x).resolve() for x in a.contended}
    if contended: row["seconds_median_after"] = None
    got = RetrievalConfig.from_dict(run["retrieval"]).to_dict()  # settings added since the run was made take their defaults
    prompt = run["settings"]["answer"].get("prompt", "full")  # runs made before the setting used the full instruction
    is_preset = ({k: v for k, v in got.items() if k != "name"} == want and run["settings"]["answer"]["generator"] == preset.resolved().generator
                 and prompt == preset.prompt)
    c = {"run": str(Path(d).resolve().relative_to(ROOT)) if Path(d).resolve().is_relative_to(ROOT) else d,
         "commit": run.get("code", {}).get("commit"), "generator": run["settings"]["answer"]["generator"], "threads": run["settings"]["answer"]["threads"],
         "chunk_tokens": run["retrieval"]["chunker"]["max_tokens"], "budget": run["retrieval"]["budget"], "is_preset": is_preset,
         "sentence_budget": run["retrieval"].get("sentence_budget"), "prompt": prompt, "seconds_comparable": not contended,
         **({"evidence_recall_counts": "whole passages whose sentences were sent (an upper bound for excerpts)"} if run["retrieval"].get("sentence_budget") else {}),
         "evidence_recall": m["evidence_recall"]["all"], "evidence_recall_n": m["evidence_recall"]["n"]["all"],
         "seconds_p90": None if contended else round(secs[int(0.9 * (len(secs) - 1))], 1), **row,
         "default_rule": "default" if row["answer_f1_difference_ci95"][0] >= -0.02 and row["answer_f1_after"] >= row["answer_f1_before"] - 0.02 else "preset only"}
    timed = [l["record"] for l in recs if l["record"].get("calls")]  # answers made since records keep their model calls
    if timed:  # what the model was asked, whatever the cores did: calls by purpose, the answer call's own prompt
        c["calls_by_purpose"] = dict(sorted(collections.Counter(x["purpose"] for r in timed for x in r["calls"]).items()))
        c["answer_call_prompt_tokens_median"] = statistics.median(next(x["prompt_tokens"] for x in r["calls"] if x["purpose"] == "answer")
                                                                  for r in timed if any(x["purpose"] == "answer" for x in r["calls"]))
    if timed and not contended:
        total = sum(r["timings"]["total"] for r in timed)
        by = {}
        for r in timed:
            for call in r["calls"]: by.setdefault(call["purpose"], []).append(call)
        c["time_by_purpose"] = {"questions": len(timed), "seconds": round(total, 1),
                                **{k: {"calls": len(v), "seconds": round(sum(x["seconds"] for x in v), 1), "share": round(sum(x["seconds"] for x in v) / total, 3),
                                       "reused_share_median": round(statistics.median((x["reused_tokens"] or 0) / max(1, x["prompt_tokens"]) for x in v), 2)}
                                   for k, v in by.items()},
                                "outside_calls": {"seconds": round(sum(r["timings"]["outside_calls"] for r in timed), 1),
                                                  "share": round(sum(r["timings"]["outside_calls"] for r in timed) / total, 3)}}
    out["candidates"].append(c)
    sent = (f" sentences {c['sentence_budget']}" if c["sentence_budget"] else "") + (f" prompt {prompt}" if prompt != "full" else "")
    print(f"{c['generator']:<10} chunks {c['chunk_tokens']:>3} budget {c['budget']:>4}{sent}{' (the preset)' if is_preset else '':<13} n={row['n']}  "
          f"Answer-F1 {row['answer_f1_before']:.3f} -> {row['answer_f1_after']:.3f} [{row['answer_f1_difference_ci95'][0]:+.3f}, {row['answer_f1_difference_ci95'][1]:+.3f}]  "
          f"Evidence-F1 {row['evidence_f1_before']:.3f} -> {row['evidence_f1_after']:.3f}  Unanswerable {row['unanswerable_before']} -> {row['unanswerable_after']}  "
          f"evidence recall {c['evidence_recall']:.3f} (n={c['evidence_recall_n']})  s/question {row['seconds_median_before']} -> {row['seconds_median_after']} "
          f"(p90 {c['seconds_p90']}{'' if c['seconds_comparable'] else ', cores shared: not comparable'})  prompt tokens {row['prompt_tokens_median_before']} -> {row['prompt_tokens_median_after']}  {c['default_rule']}")
rel = lambda d: str(Path(d).resolve().relative_to(ROOT)) if Path(d).resolve().is_relative_to(ROOT) else d
for pair in a.pairs:
    before, after = pair.split(":")
    row = next(r for r in compare_runs(lines(before), lines(after), corpus, groups) if r["group"] == "qasper-train-sample10")
    shared = {Path(x).resolve() for x in a.contended} & {Path(before).resolve(), Path(after).resolve()}
    if shared: row["seconds_median_before"] = row["seconds_median_after"] = None  # a run timed on shared cores: no comparable time
    out.setdefault("pairs", []).append({"before": rel(before), "after": rel(after), "before_commit": run_json(before).get("code", {}).get("commit"),
                                        "after_commit": run_json(after).get("code", {}).get("commit"), **row})
    print(f"{rel(before)} -> {rel(after)}: n={row['n']} Answer-F1 {row['answer_f1_before']:.3f} -> {row['answer_f1_after']:.3f} "
          f"[{row['answer_f1_difference_ci95'][0]:+.3f}, {row['answer_f1_difference_ci95'][1]:+.3f}]  Evidence-F1 {row['evidence_f1_before']:.3f} -> "
          f"{row['evidence_f1_after']:.3f}  prompt tokens {row['prompt_tokens_median_before']} -> {row['prompt_tokens_median_after']}  "
          f"s/question {row['seconds_median_before']} -> {row['seconds_median_after']}")
Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
print("wrote", a.out)
