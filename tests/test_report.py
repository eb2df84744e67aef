"""`qasper-rag report` executes a report notebook with papermill, renders HTML and PNG, and indexes the run."""
import json
from qasper_rag.cli import main
from qasper_rag.report import write_index


def test_report_renders_a_notebook_and_indexes_runs(tmp_path, capsys):
    assert main(["report", "--smoke", "--only", "failures", "--reports", str(tmp_path), "--name", "smoke", "--quiet"]) == 0
    out = tmp_path / "smoke"
    html = (out / "failures.html").read_text()
    assert "Failure explorer" in html and "lost_at" in html
    assert (out / "failures.png").stat().st_size > 1000
    missed = json.loads((out / "failures.json").read_text())
    assert missed["items"] > 0 and all(r["lost_at"] != "reached" for r in missed["missed"])
    nb = json.loads((out / "failures.ipynb").read_text())
    assert any("injected-parameters" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])  # papermill's parameters
    assert "(none yet)" in (tmp_path / "README.md").read_text()  # no evaluation run in this report


def test_report_rejects_unknown_notebooks(tmp_path, capsys):
    assert main(["report", "--smoke", "--only", "nonsense", "--reports", str(tmp_path), "--quiet"]) == 2
    assert "unknown report notebook" in capsys.readouterr().err
