"""Shared fixtures: the real QASPER sample beside the checkout (../shared/data/qasper)."""
import pytest
from qasper_rag.data import load_path
from qasper_rag.env import shared_data_dir


@pytest.fixture(scope="session")
def shared_dir():
    d = shared_data_dir()
    if not d.is_dir():
        pytest.fail(f"shared QASPER data not found at {d}: set QASPER_SHARED to the folder holding original_format/")
    return d


@pytest.fixture(scope="session")
def corpus(shared_dir):
    return load_path(shared_dir / "original_format")


@pytest.fixture(scope="session")
def train10(shared_dir):
    return load_path(shared_dir / "original_format" / "qasper-train-sample10.json")
