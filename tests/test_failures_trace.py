"""The failures page traces retrieval again at render time; it must describe the run it shows (issue 39).

It used to build its retriever from the preset alone (`Retriever(cfg, corpus=corpus)`), which counts the 2,000-token budget
with the chunker's tokenizer, while the run counted it with its generator's (Qwen's) tokens: the trace packed other
passages than the run sent, and the page disagreed with records.jsonl on 10 of 89 questions (25 of the first 30 train
questions of the committed run send a different context that way). `app.run_retriever` builds the run's own retriever,
and `failures.explore(..., lines=records)` stops at the first question whose trace differs from its record.
Examples from the train papers. Needs the shipped Qwen model (its tokenizer), as `make test` installs it.
"""
import pytest
from qasper_rag.app import load_corpus, run_retriever
from qasper_rag.core.env import project_root
from qasper_rag.evaluate.runs import RunDir
from qasper_rag.evaluate.failures import TraceMismatch, explore
from qasper_rag.retrieve.config import RetrievalConfig

from qasper_rag.retrieve.retrieval import Retriever
RUN = project_root() / "reports" / "offline-full"


@pytest.fixture(scope="module")
def train(shared_dir):
    return load_corpus(str(shared_dir / "original_format" / "qasper-train-sample10.json"))[0]


@pytest.fixture(scope="module")
def records():
    return RunDir(RUN).records()


def test_preset_retriever_is_not_the_run(train, records):
    "The page's old retriever: the first train questions' traces differ from what the run sent, and explore says so."
    cfg = RetrievalConfig.from_dict(RunDir(RUN).settings()["retrieval"])
    with pytest.raises(TraceMismatch, match="the run sent"):
        explore(train, Retriever(cfg, corpus=train), limit=3, missed_only=False, progress=False, lines=records)


def test_run_retriever_sends_what_the_run_sent(train, records):
    "The run's own retriever sends each traced train question exactly the passages its record holds."
    rows = explore(train, run_retriever(RUN, train), limit=6, missed_only=False, progress=False, lines=records)
    traced = {r["question_id"] for r in rows}
    assert len(traced) == 6 and traced <= {l["question_id"] for l in records}
    sent = {l["question_id"]: len(l["record"]["context"]) for l in records}
    assert all(r["passages_sent"] == sent[r["question_id"]] for r in rows)
