"""README's numbers and reports/RESULTS.md come from the committed run and benchmark files, never typed by hand."""
import subprocess, sys
from pathlib import Path
from qasper_rag.papers.data import shared_path

ROOT = Path(__file__).resolve().parents[1]

def test_readme_results_match_the_run_files():
    data = shared_path("original_format")
    assert data is not None, "the shared QASPER sample is missing: set QASPER_SHARED"
    r = subprocess.run([sys.executable, "scripts/readme_results.py", "reports/offline-full", str(data), "--check"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "agree with the run and benchmark files" in r.stdout

def test_readme_opens_with_the_two_commands():
    head = (ROOT / "README.md").read_text().splitlines()[:6]
    assert any(l.startswith("make demo") for l in head) and any(l.startswith("make test") for l in head), head
