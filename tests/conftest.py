"""Shared fixtures: the real QASPER sample beside the checkout (../shared/data/qasper). Tests take their examples from the 10
train papers and the dev file (L-Eval's 18 papers), never from the shared test papers, which are kept for measuring."""
import pytest
from qasper_rag.papers.data import load_path
from qasper_rag.core.env import shared_data_dir


@pytest.fixture(scope="session")
def shared_dir():
    d = shared_data_dir()
    if not d.is_dir():
        pytest.fail(f"shared QASPER data not found at {d}: set QASPER_SHARED to the folder holding original_format/")
    return d


@pytest.fixture(scope="session")
def dev_data(shared_dir, tmp_path_factory):
    "A folder holding the train papers' file and the dev file (as links), with the shared table bodies beside them."
    d = tmp_path_factory.mktemp("dev-data")
    for f in (shared_dir / "original_format" / "qasper-train-sample10.json", shared_dir / "dev" / "qasper-traindev-leval.json",
              shared_dir / "tables"):
        if not f.exists(): pytest.fail(f"{f} is missing from the shared data")
        (d / f.name).symlink_to(f)
    return d


@pytest.fixture(scope="session")
def corpus(dev_data):
    "The 28 papers examples come from: 10 train papers (51 questions), 18 of the dev file (134 questions)."
    return load_path(dev_data)


@pytest.fixture(scope="session")
def train10(shared_dir):
    return load_path(shared_dir / "original_format" / "qasper-train-sample10.json")
