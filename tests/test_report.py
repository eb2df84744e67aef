"""`qasper-rag report` executes a report notebook with papermill, renders HTML and PNG, and indexes the run."""
import base64
import json
import re
from qasper_rag.cli import main
from qasper_rag.report import write_index


def test_report_renders_a_notebook_and_indexes_runs(tmp_path, capsys):
    assert main(["report", "--smoke", "--only", "failures", "--reports", str(tmp_path), "--name", "smoke", "--quiet"]) == 0
    out = tmp_path / "smoke"
    html = (out / "failures.html").read_text()
    assert "Failure explorer" in html and "lost at" in html
    assert (out / "failures.png").stat().st_size > 1000
    missed = json.loads((out / "failures.json").read_text())
    assert missed["items"] > 0 and all(r["lost_at"] != "reached" for r in missed["missed"])
    assert missed["stages_run"] == ["bm25", "fused", "final"]  # bm25-only: no dense, rerank or LLM list
    nb = json.loads((out / "failures.ipynb").read_text())
    assert any("injected-parameters" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])  # papermill's parameters
    # the page: findings right after the title, the figure embedded, the explorer's table, no warning box
    assert "findings" in nb["cells"][1]["metadata"]["tags"] and "".join(nb["cells"][0]["source"]).startswith("# Failure explorer")
    assert "## Findings" in "".join(nb["cells"][1]["outputs"][0]["data"]["text/markdown"])
    assert 'class="jp-InputPrompt' not in html and "hl-ipython3" not in html  # no code on the page: it stays in failures.ipynb
    assert html.index('<h2 id="Findings">') < html.index('src="data:image/png')  # the findings, then the figure
    png = (out / "failures.png").read_bytes()
    assert base64.b64encode(png).decode()[:200] in html  # the saved PNG is the figure on the page
    assert re.search(r'<table[^>]* id="explorer"', html) and "question_id" in html
    assert "IProgress" not in html and 'data-mime-type="application/vnd.jupyter.stderr"' not in html
    assert not re.findall(r'<script[^>]+src="https?://', html)  # nothing loaded from the network
    assert "(none yet)" in (tmp_path / "README.md").read_text()  # no evaluation run in this report


def test_report_rejects_unknown_notebooks(tmp_path, capsys):
    assert main(["report", "--smoke", "--only", "nonsense", "--reports", str(tmp_path), "--quiet"]) == 2
    assert "unknown report notebook" in capsys.readouterr().err


def test_two_pages_of_one_run_agree(tmp_path):
    """One small run, three pages (eval_run, ablations, table_vs_text): each number they share is the same number.
    The table-vs-text lead is the run's own contexts and equals metrics.json; the ablations' default re-sends the run's
    passages (the page stops otherwise); Answer-F1 by type is one definition on metrics.json and the short-answer table."""
    assert main(["report", "--smoke", "--only", "eval_run,ablations,table_vs_text", "--reports", str(tmp_path), "--name", "one", "--quiet"]) == 0
    out = tmp_path / "one"
    m = json.loads((out / "metrics.json").read_text())
    tv = json.loads((out / "table_vs_text.json").read_text())
    er = m["evidence_recall"]
    text, table = tv["lead_rows"]
    assert (text["evidence"], table["evidence"]) == ("text", "table/figure")
    assert text["questions"] == er["n"]["text"] and abs(text["recall"] - er["text"]) < 1e-4
    assert table["questions"] == er["n"]["float"] and (table["recall"] is None) == (er["float"] is None)
    assert tv["lead"]["commit"] == json.loads((out / "run.json").read_text())["code"]["commit"]
    # the ablations' default variant is the run's retrieval, its budget counted with the run generator's tokenizer
    ab = json.loads((out / "ablations.json").read_text())
    default = ab["results"]["offline (project default)"]
    assert default["settings"]["budget_counted_with"].startswith("gguf:") and default["settings"]["name"] == m["run"]["config"]
    sent = {json.loads(l)["question_id"]: json.loads(l)["evidence_recall"] for l in (out / "records.jsonl").read_text().splitlines() if l.strip()}
    for x in default["records"]:
        if sent.get(x["question_id"]): assert (x["text"], x["float"]) == (sent[x["question_id"]]["text"], sent[x["question_id"]]["float"])
    # Answer-F1 by type: the question's own type on metrics.json and on the short-answer table alike
    short = json.loads((out / "short_answers.json").read_text())["rows"]
    groups = {r["group"] for r in short}
    rows = {r["type"]: r for r in short if r["group"] == ("all" if len(groups) > 1 else next(iter(groups)))}
    for t, v in m["answer_f1"]["by_type"].items():
        assert rows[t]["n"] == v["n"] and abs(rows[t]["run"] - v["value"]) < 1e-3
    html = (out / "table_vs_text.html").read_text()
    assert f"{text['recall']:.3f}" in html


def test_the_committed_report_scores_the_same_from_its_run(shared_dir, tmp_path):
    "The committed run's records, read through today's types and metrics, give the committed metrics.json (the run's own data)."
    import shutil
    from pathlib import Path
    from qasper_rag.app import load_corpus
    from qasper_rag.evaluate.evaluate import finish_run
    committed = Path(__file__).resolve().parents[1] / "reports" / "offline-full"
    for f in ("run.json", "records.jsonl", "reference_labels.json", "metrics.json"): shutil.copy(committed / f, tmp_path / f)
    again = finish_run(tmp_path, load_corpus(str(shared_dir / "original_format"))[0])
    old = json.loads((committed / "metrics.json").read_text())
    drop = lambda m: {**m, "run": {k: v for k, v in m["run"].items() if k != "peak_rss_mb"}}  # the memory of this process, not the run's
    assert drop(again) == drop(old)
    assert (tmp_path / "predictions.jsonl").read_text() == (committed / "predictions.jsonl").read_text()


def test_committed_runs_metrics_recompute_from_their_records(shared_dir):
    """The committed runs (the report's and the development file's) read through the typed evaluation line (`EvalLine`,
    `AlceVerdicts`) give back every number of their metrics.json: reading records changes no metric."""
    from pathlib import Path
    from qasper_rag.app import load_corpus
    from qasper_rag.evaluate.evaluate import eval_items, run_metrics
    from qasper_rag.evaluate.runs import RunDir
    root = Path(__file__).resolve().parents[1] / "reports"
    for name, data in (("offline-full", shared_dir / "original_format"), ("dev-bebbfe3", shared_dir / "dev")):
        run = RunDir(root / name)
        corpus, _ = load_corpus(str(data))
        stored = json.loads((run.path / "metrics.json").read_text())
        m = run_metrics(run.lines(), corpus, [q.id for _, q in eval_items(corpus, run.settings().get("limit"))])
        for key in ("run", "shown_labels"): stored.pop(key, None)  # the run's settings and the reference labels: added by finish_run
        stored["kappa"].pop("judge_vs_reference_labels", None)
        assert m == stored, name
