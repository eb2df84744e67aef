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
