"""`Answerer.stream`: the answer as it happens (passages, the reply as written, each sentence checked, the short answer, the record),
with the tests' SmolLM2 model on a train paper; the record is the one `Answerer.answer` returns."""
import re, threading

import pytest

from qasper_rag.answer.answer import Answerer, Done, Passages, Short, Text, Verified
from qasper_rag.core.llama import LlamaCppGenerator
from qasper_rag.core.models import smollm2_gguf_path
from qasper_rag.answer.judges import load_judge
from qasper_rag.retrieve.retrieval import Retriever
from qasper_rag.retrieve.config import get_config
from qasper_rag.answer.verify import Verifier

Q = "What is the seed lexicon?"


@pytest.fixture(scope="module")
def paper(train10):
    return train10.paper("1909.00694")


def answerer(tmp_path, gen=None) -> Answerer:
    "A tiny answerer with a model fresh from its file (llama.cpp's reuse of a cached prompt can tip a near tie in the tiny model's words)."
    gen = gen or LlamaCppGenerator(smollm2_gguf_path(), n_ctx=2048)
    cfg = get_config("smoke")
    return Answerer(Retriever(cfg, cache_dir=tmp_path / "cache"), gen, max_tokens=120, verifier=Verifier(load_judge("lexical"), gen))


def untimed(rec) -> dict:
    "A record without its wall times (nothing else may differ between two runs of the same question)."
    return {**rec.to_dict(), "timings": None, "verification": {k: v for k, v in rec.verification.items() if k != "seconds"},
            "calls": [{k: v for k, v in c.items() if k != "seconds"} for c in rec.calls]}


def test_stream_events_in_order_and_the_record_answer_returns(paper, tmp_path):
    events = list(answerer(tmp_path).stream(paper, Q, "q1"))
    kinds = "".join(type(e).__name__[0] for e in events)
    assert re.fullmatch(r"PT+V*SD", kinds), kinds  # Passages, Text..., Verified..., Short, Done
    first, done = events[0], events[-1]
    rec, again = done.record, answerer(tmp_path).answer(paper, Q, "q1")
    assert untimed(rec) == untimed(again[0]) and done.retrieval.context.chunk_ids == again[1].context.chunk_ids
    assert isinstance(first, Passages) and first.title == paper.title and first.context == rec.context and first.retrieval is done.retrieval
    assert [c.chunk_id for c in first.context] == [c.id for c in done.retrieval.passages] and first.context[0].doc == 1
    texts = [e for e in events if isinstance(e, Text)]
    assert len(texts) > 1 and {e.attempt for e in texts} <= set(range(1, rec.attempts + 1))
    assert "".join(e.text for e in texts if e.attempt == rec.attempts) == rec.raw_output  # the last reply, as it was written
    checked = [e for e in events if isinstance(e, Verified)]
    assert [(e.index, e.text, e.original, e.status, list(e.citations)) for e in checked] == [
        (k, s.text, s.original, s.status, list(s.citations)) for k, s in enumerate(rec.sentences)]
    assert events[-2] == Short(rec.short_answer, rec.short_answer_type)


class Watched:
    "The real generator, noting what the reader had received when each `generate` call began."
    def __init__(self, gen, received: list):
        self.gen, self.received, self.at_start = gen, received, []
    def __getattr__(self, name): return getattr(self.gen, name)
    def generate(self, messages, max_tokens, temperature=0.0, stop=None, grammar=None, on_text=None):
        self.at_start.append([type(e).__name__ for e in self.received])
        return self.gen.generate(messages, max_tokens, temperature, stop, grammar, on_text)


def test_passages_come_before_the_model_is_asked(paper, tmp_path):
    received = []
    gen = Watched(LlamaCppGenerator(smollm2_gguf_path(), n_ctx=2048), received)
    for e in answerer(tmp_path, gen).stream(paper, Q): received.append(e)
    assert gen.at_start and gen.at_start[0] == ["Passages"]  # retrieved and handed on before the first call began
    assert isinstance(received[-1], Done)


class OwnGenerator:
    "A generator of one's own whose `generate` knows nothing of `on_text` (the real model behind it)."
    def __init__(self, gen): self.gen, self.name, self.supports_grammar = gen, gen.name, True
    def generate(self, messages, max_tokens, temperature=0.0, stop=None, grammar=None): return self.gen.generate(messages, max_tokens, temperature, stop, grammar)
    def yes_probability(self, m): return self.gen.yes_probability(m)
    def tokenizer(self): return self.gen.tokenizer()


def test_a_generator_that_cannot_stream_gives_its_reply_in_one_piece(paper, tmp_path):
    events = list(answerer(tmp_path, OwnGenerator(LlamaCppGenerator(smollm2_gguf_path(), n_ctx=2048))).stream(paper, Q))
    rec = events[-1].record
    texts = [e for e in events if isinstance(e, Text)]
    assert [e.attempt for e in texts] == list(range(1, rec.attempts + 1)) and texts[-1].text == rec.raw_output
    assert untimed(rec) == untimed(answerer(tmp_path).answer(paper, Q)[0])


def test_a_question_that_cannot_be_asked_is_refused_before_any_event(paper, tmp_path):
    with pytest.raises(ValueError, match="the question is empty"):
        answerer(tmp_path).stream(paper, "  ")


def test_a_reader_that_stops_stops_the_model(paper, tmp_path):
    gen = LlamaCppGenerator(smollm2_gguf_path(), n_ctx=2048)
    ans = answerer(tmp_path, gen)
    it = ans.stream(paper, Q)
    assert isinstance(next(it), Passages) and isinstance(next(it), Text)
    it.close()
    for t in [t for t in threading.enumerate() if t.name == "answer-generation"]: t.join(120)
    assert not any(t.name == "answer-generation" for t in threading.enumerate()) and not gen._lock.locked()
    rec = ans.ask(paper, Q)  # the model answers the next question as usual
    assert rec.raw_output and not any(p.startswith("generator error") for p in rec.problems), rec.problems
