"""Generators: llama.cpp in process with the real SmolLM2 GGUF, and the
OpenAI-compatible client against a real llama_cpp.server subprocess (plus a small local HTTP server for retries)."""
import json, math, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from qasper_rag.core import generate as gen, llama, llm, server as server_module
from qasper_rag.core.models import ModelPartsError
from qasper_rag.core.llm import Generation, GeneratorError, GeneratorUnavailable, yes_no_probability
from qasper_rag.core.llama import LlamaCppGenerator
from qasper_rag.core.server import LlamaServer, OpenAIGenerator, free_port, normalize_base_url
from qasper_rag.core.generate import load_generator
from qasper_rag.core.models import smollm2_gguf_path


# --- model files (moved to qasper_rag.core.models, tested in tests/test_models.py) ---------------------

def test_model_files_come_from_models_only():
    "One place names the model files (`qasper_rag.core.models`): generate does not offer them again, and every embedded name loads through its table."
    from qasper_rag.core import models
    names = ["ModelPartsError", "PartedFile", "QWEN_1_5B", "QWEN_0_5B", "SMOLLM2_DIST", "SMOLLM2_VERSION", "SMOLLM2_FILE",
             "SMOLLM2_SIZE", "concat_parts", "installed_parts", "pip_install", "gguf_path", "qwen_gguf_path",
             "qwen05_gguf_path", "smollm2_gguf_path"]
    assert set(names) <= set(models.__all__) and not set(names) & set(gen.__all__ + llama.__all__ + llm.__all__ + server_module.__all__)
    assert set(models.EMBEDDED_GENERATORS) == {"qwen-1.5b", "qwen-0.5b", "smollm2"}
    with pytest.raises(ValueError, match="'qwen-1.5b', 'qwen-0.5b', 'smollm2', a .gguf path"): gen.load_generator("qwen-7b")


# --- pure helpers --------------------------------------------------------------------------------

def test_yes_no_probability():
    assert math.isclose(yes_no_probability({"Yes": math.log(0.6), "No": math.log(0.2), "The": math.log(0.2)}), 0.75)
    assert math.isclose(yes_no_probability([("YES", math.log(0.1)), (" yes", math.log(0.2)), ("no", math.log(0.3))]), 0.5)
    assert yes_no_probability({"The": -0.1}) == 0.5
    assert yes_no_probability({"No": -0.01, "x": -9.0}) < 0.001


def test_base_url_and_specs(monkeypatch):
    assert normalize_base_url("localhost:8000") == "http://localhost:8000/v1"
    assert normalize_base_url("http://h/v1/") == "http://h/v1"
    with pytest.raises(ValueError, match="unknown generator"):
        load_generator("gpt-17")
    monkeypatch.delenv(server_module.ENV_BASE_URL, raising=False)
    with pytest.raises(ValueError, match="QASPER_LLM_BASE_URL"):
        load_generator("openai:some-model")
    monkeypatch.setenv(server_module.ENV_BASE_URL, "http://127.0.0.1:9")
    monkeypatch.setenv(server_module.ENV_MODEL, "env-model")
    g = load_generator("openai:")
    assert (g.base_url, g.model) == ("http://127.0.0.1:9/v1", "env-model")
    g = load_generator("openai:m@http://example.org:1/api/v1", timeout=5)
    assert (g.base_url, g.model, g.timeout) == ("http://example.org:1/api/v1", "m", 5)


# --- llama.cpp in process, real SmolLM2 --------------------------------------------------------------

@pytest.fixture(scope="module")
def smollm2_path():
    try:
        llama._llama_cpp()
        return smollm2_gguf_path()
    except (GeneratorUnavailable, ModelPartsError) as e:
        pytest.fail(f"{e}  (run `make setup`)")


@pytest.fixture(scope="module")
def small(smollm2_path):
    return LlamaCppGenerator(smollm2_path, n_ctx=1024)


MSG = [{"role": "system", "content": "Answer in one short sentence."},
       {"role": "user", "content": "The seed lexicon consists of 15 positive words and 15 negative words. How big is the seed lexicon?"}]


def test_llamacpp_generate_is_deterministic(small):
    a = small.generate(MSG, max_tokens=24)
    b = small.generate(MSG, max_tokens=24)
    assert isinstance(a, Generation) and a.model == "llama.cpp:SmolLM2-135M-Instruct.Q4_1.gguf"
    assert (a.text, a.prompt_tokens, a.completion_tokens) == (b.text, b.prompt_tokens, b.completion_tokens)
    assert a.text and a.prompt_tokens > 0 and a.completion_tokens > 0 and a.seconds > 0
    assert a.prompt_tokens == len(small.prompt_ids(MSG))
    t = small.last_timings()
    assert t["gen_tokens"] >= 1 and t["gen_tok_s"] > 0


def test_llamacpp_length_stop_and_overflow(small):
    g = small.generate(MSG, max_tokens=2)
    assert (g.completion_tokens, g.finish_reason) == (2, "length")
    full = small.generate(MSG, max_tokens=24).text
    word = full.split()[1] if len(full.split()) > 1 else full[:2]
    cut = small.generate(MSG, max_tokens=24, stop=[word])
    assert word not in cut.text and full.startswith(cut.text)
    huge = [{"role": "user", "content": "word " * 3000}]
    with pytest.raises(GeneratorError, match="exceed context window"):
        small.generate(huge, max_tokens=8)
    with pytest.raises(GeneratorError, match="the context 1024"):
        small.yes_probability(huge)


def test_llamacpp_yes_probability_and_tokenizer(small, smollm2_path):
    yes = [{"role": "user", "content": "Is Paris in France? Answer Yes or No."}]
    p = small.yes_probability(yes)
    assert 0.0 <= p <= 1.0
    assert small.yes_probability(yes) == p
    tok = small.tokenizer()
    assert tok.name == "gguf:SmolLM2-135M-Instruct.Q4_1.gguf"
    text = "Affective events BIBREF0 are events that typically affect people; “ので” (because)."
    n = tok.count(text)
    assert n > 10 and tok.counts([text, ""]) == [n, 0]
    offs = tok.offsets(text)
    assert len(offs) == n and offs[0][0] == 0 and offs[-1][1] == len(text)
    assert all(a <= b for a, b in offs) and all(offs[i][0] <= offs[i + 1][0] for i in range(n - 1))
    vocab_only = llama.GGUFTokenizer(smollm2_path)  # vocabulary only, no weights
    assert vocab_only.count(text) == n and vocab_only.name == tok.name


def _same(g: Generation):
    "All of a generation but its wall time."
    return (g.text, g.prompt_tokens, g.completion_tokens, g.model, g.finish_reason)


def _cite_messages():
    from qasper_rag.papers.chunking import Chunk
    from qasper_rag.answer.prompts import build_messages
    chunk = lambda i, sec, body: Chunk(i, "p", "text", sec, f"Title: T. Section: {sec}. {body}", 10, 0, prefix_chars=len(f"Title: T. Section: {sec}. "))
    return build_messages("Which dataset do they use?", [chunk("p:s0c0", "Data", "We use SQuAD."), chunk("p:s1c0", "Data", "It has 100k questions.")], "T")


@pytest.mark.parametrize("case", ["end of turn", "max_tokens", "stop string", "grammar", "multibyte"])
def test_llamacpp_streaming_gives_the_same_generation(small, case):
    """`on_text` gets the reply in pieces while the model writes it; the Generation is the one returned without streaming
    (greedy: text, prompt and completion tokens, finish reason), and the pieces join to its text."""
    from qasper_rag.answer.prompts import answer_grammar
    kw = {"end of turn": dict(messages=MSG, max_tokens=24), "max_tokens": dict(messages=MSG, max_tokens=3),
          "stop string": dict(messages=MSG, max_tokens=40, stop=["."]),
          "grammar": dict(messages=_cite_messages(), max_tokens=400, grammar=answer_grammar(2)),
          "multibyte": dict(messages=[{"role": "user", "content": "Write “ので” and é ñ three times."}], max_tokens=40)}[case]
    small.generate(**kw)  # both calls below on the same (warm) cache: a cold one may differ at a near tie (see the prefix-reuse test)
    plain = small.generate(**kw)
    pieces, inside = [], []
    streamed = small.generate(**kw, on_text=lambda t: (pieces.append(t), inside.append(small._lock.locked())))
    assert _same(streamed) == _same(plain)
    assert "".join(pieces) == streamed.text and all(inside)  # every piece came during the call
    assert len(pieces) > 1 and all(pieces)
    if case == "max_tokens": assert (streamed.finish_reason, streamed.completion_tokens) == ("length", 3)


def test_llamacpp_streaming_stopped_by_its_reader_and_overflow(small):
    "A reader that raises stops the generation there; the model then answers the next call as before. An overlong prompt is refused as without streaming."
    before = small.generate(MSG, max_tokens=24)
    seen = []
    def stop_after_two(t):
        seen.append(t)
        if len(seen) == 2: raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        small.generate(MSG, max_tokens=24, on_text=stop_after_two)
    assert len(seen) == 2 and not small._lock.locked()
    assert "generate" not in small.llm.__dict__  # llama.cpp's own sampling loop again, not the counting one
    assert _same(small.generate(MSG, max_tokens=24)) == _same(before)
    with pytest.raises(GeneratorError, match="exceed context window"):
        small.generate([{"role": "user", "content": "word " * 3000}], max_tokens=8, on_text=seen.append)


def test_llamacpp_missing_file():
    with pytest.raises(GeneratorUnavailable, match="no GGUF model file at /nowhere/m.gguf.*fetch it here"):
        LlamaCppGenerator("/nowhere/m.gguf", hint="fetch it here")


# --- OpenAI-compatible client against a real llama_cpp.server ------------------------------------

@pytest.fixture(scope="module")
def server(smollm2_path):
    with LlamaServer(smollm2_path, n_ctx=2048, startup_timeout=90) as srv:
        assert srv.proc.poll() is None
        yield srv
    assert srv.proc.poll() is not None  # stopped


def test_server_generate_matches_in_process(server, small):
    http = server.generator(extra_body={"repeat_penalty": 1.0})
    assert http.models() == ["SmolLM2-135M-Instruct.Q4_1"]
    h = http.generate(MSG, max_tokens=24)
    g = small.generate(MSG, max_tokens=24)
    assert h.model == "SmolLM2-135M-Instruct.Q4_1" and h.completion_tokens > 0
    assert (h.text, h.prompt_tokens, h.completion_tokens) == (g.text, g.prompt_tokens, g.completion_tokens)
    assert http.tokenizer().count(MSG[1]["content"]) == small.tokenizer().count(MSG[1]["content"])
    assert http.tokenizer().counts(["a b c", "", "seed lexicon"]) == small.tokenizer().counts(["a b c", "", "seed lexicon"])
    p = http.yes_probability([{"role": "user", "content": "Is Paris in France? Answer Yes or No."}])
    assert 0.0 <= p <= 1.0


def test_grammar_constrains_both_backends(server, small):
    from qasper_rag.papers.chunking import Chunk
    from qasper_rag.answer.prompts import answer_grammar, build_messages, check_citations, parse_output
    chunk = lambda i, sec, body: Chunk(i, "p", "text", sec, f"Title: T. Section: {sec}. {body}", 10, 0, prefix_chars=len(f"Title: T. Section: {sec}. "))
    cite = build_messages("Which dataset do they use?", [chunk("p:s0c0", "Data", "We use SQuAD."), chunk("p:s1c0", "Data", "It has 100k questions.")], "T")
    for gen in (small, server.generator(grammar_field="grammar")):
        assert gen.supports_grammar
        out = gen.generate(cite, max_tokens=400, grammar=answer_grammar(2))
        assert out.finish_reason == "stop", out.text  # the reply is complete, so the whole grammar was followed
        parsed = parse_output(out.text)
        sents = check_citations(parsed.answer, 2)
        assert parsed.answer and sents and all(s.citations and not s.rejected for s in sents), out.text
    assert not server.generator(grammar_field=None).supports_grammar
    with pytest.raises(GeneratorError, match="grammar"):
        server.generator(grammar_field=None).generate(cite, max_tokens=5, grammar='root ::= "Yes"')
    with pytest.raises(GeneratorError, match="invalid GBNF"):
        small.generate(cite, max_tokens=5, grammar="root ::= (")


PROMPT_WHEN_FOUND = """Reply in exactly this format, with the three labels:
Reasoning: <at most two sentences: which passages answer the question>
Answer: <one or two short sentences (at most 50 words) in your own words, never copied passages; end EVERY sentence with the passages it rests on, like [Doc 2]; at most 3 per sentence, ideally 1>
Short answer: <for a yes/no question: Yes or No; otherwise the shortest phrase (a few words) from the passages that answers it>
If the passages do not answer the question, write "Answer: The passages do not answer this question." and "Short answer: Unanswerable".

Example (about another paper):
Passages:
[Doc 1] (Introduction)
We study sentiment analysis of product reviews.
[Doc 2] (Experiments ::: Data)
We train on 50,000 Amazon reviews and test on the Yelp dataset.
Question: Which datasets do they use?
Reasoning: Doc 2 names the training and test data.
Answer: They train on 50,000 Amazon reviews and test on Yelp [Doc 2].
Short answer: Amazon reviews and Yelp"""


@pytest.mark.parametrize("question, bodies", [
    ("How many words are in the seed lexicon?", ["The seed lexicon consists of 15 positive words and 15 negative words.", "We train for 3 epochs."]),
    ("What is the margin on MCTest-500?", ["The margin between our best system and NR is 15.6/16.5 on MCTest-150 and 7.3/4.6 on MCTest-500.",
                                           "Results are in Table 2."])])
def test_grammar_lets_a_sentence_that_ends_on_a_number_end(small, question, bodies):
    """SmolLM2 ends these sentences on a number ("... is 15." / "... on MCTest-500."). When the grammar read that period only as
    a decimal point, it went on "15.15.15.15..." / "MCTest-500.25% of ..." to the 200-token cut, uncited and with no short answer."""
    from qasper_rag.papers.chunking import Chunk
    from qasper_rag.answer.prompts import SYSTEM_PROMPT, answer_grammar, check_citations, context_block, parse_output
    ps = [Chunk(f"p:s{k}c0", "p", "text", "Results", f"Title: T. Section: Results. {b}", 10, 0, prefix_chars=len("Title: T. Section: Results. "))
          for k, b in enumerate(bodies)]
    # the prompt as it was when the defect was found (frozen here: the tiny model's reply to a reworded prompt is another test)
    user = f"{context_block(ps, 'T')}{PROMPT_WHEN_FOUND}\n\nNow the real task, about the passages above.\nQuestion: {question}"
    out = small.generate([{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}], max_tokens=200, grammar=answer_grammar(2))
    assert out.finish_reason == "stop", out.text
    parsed = parse_output(out.text)
    sents = check_citations(parsed.answer, 2)
    assert parsed.short_answer and sents and all(s.citations and not s.rejected for s in sents), out.text


def test_server_streaming_gives_the_same_text(server, small):
    """`on_text` streams the reply as server-sent events (`"stream": true`): the same text as without streaming, in pieces. The
    token counts come from the stream's last chunk when the server sends usage there (vLLM); llama_cpp.server does not: 0."""
    http = server.generator(extra_body={"repeat_penalty": 1.0}, grammar_field="grammar")
    from qasper_rag.answer.prompts import answer_grammar
    for kw in (dict(messages=MSG, max_tokens=24), dict(messages=MSG, max_tokens=3), dict(messages=_cite_messages(), max_tokens=400, grammar=answer_grammar(2))):
        plain, pieces = http.generate(**kw), []
        streamed = http.generate(**kw, on_text=pieces.append)
        assert (streamed.text, streamed.finish_reason, streamed.model) == (plain.text, plain.finish_reason, plain.model)
        assert "".join(pieces) == streamed.text and len(pieces) > 1
        assert streamed.text == small.generate(**kw).text
        assert (streamed.prompt_tokens, streamed.completion_tokens) == (0, 0)  # none in llama_cpp.server's stream
    with pytest.raises(GeneratorError, match="HTTP 404"):
        OpenAIGenerator(server.base_url.replace("/v1", "/nope"), "m", retries=0).generate(MSG, 4, on_text=pieces.append)


def test_server_sent_events_are_read_up_to_done():
    "The `data:` lines of a stream as vLLM writes it with `stream_options.include_usage`: the last chunk holds the usage, no choices."
    lines = [b": ping", b"", b'data: {"model": "m", "choices": [{"delta": {"role": "assistant"}, "finish_reason": null}]}',
             b'data: {"model": "m", "choices": [{"delta": {"content": "Yes"}, "finish_reason": "stop"}]}',
             b'data: {"model": "m", "choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 1}}', b"data: [DONE]", b'data: {"late": 1}']
    got = list(server_module._sse_data(lines))
    assert [d.get("usage") for d in got] == [None, None, {"prompt_tokens": 7, "completion_tokens": 1}] and len(got) == 3


def test_server_generate_many_keeps_order(server):
    http = OpenAIGenerator(server.base_url, max_concurrency=3)  # model id asked from /v1/models
    asks = [[{"role": "user", "content": "Say hello. " * k}] for k in (5, 1, 9, 3, 7)]
    many = http.generate_many(asks, max_tokens=3)
    one_by_one = [http.generate(a, max_tokens=3) for a in asks]
    assert [m.prompt_tokens for m in many] == [o.prompt_tokens for o in one_by_one]
    assert [m.text for m in many] == [o.text for o in one_by_one]
    assert len({m.prompt_tokens for m in many}) == 5 and http.generate_many([], 3) == []


def test_server_down_and_http_errors(server, monkeypatch):
    waits = []  # the backoff the client asks for, recorded instead of timed
    monkeypatch.setattr(server_module.time, "sleep", waits.append)
    port = free_port()  # nothing listens there
    down = OpenAIGenerator(f"http://127.0.0.1:{port}/v1", "m", retries=2, backoff=0.1)
    with pytest.raises(GeneratorUnavailable, match=rf"cannot reach the LLM server at http://127.0.0.1:{port}/v1/chat/completions.*3 tries.*llama_cpp.server"):
        down.generate(MSG, 4)
    assert waits == [0.1, 0.2]  # exponential backoff between the 3 tries, none after the last
    with pytest.raises(GeneratorUnavailable, match="vllm serve"):
        OpenAIGenerator(f"127.0.0.1:{port}", retries=0).models()
    waits.clear()
    wrong = OpenAIGenerator(server.base_url.replace("/v1", "/nope"), "m", retries=3, backoff=5)
    with pytest.raises(GeneratorError, match="HTTP 404"):  # a 4xx is not retried
        wrong.generate(MSG, 4)
    assert waits == []


# --- retries on 429/5xx, against a small local HTTP server ------------------------------------------

class Flaky(BaseHTTPRequestHandler):
    failures, calls, status = 2, 0, 503

    def do_POST(self):
        cls = type(self)
        cls.calls += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if cls.calls <= cls.failures:
            self.send_response(cls.status); self.send_header("Retry-After", "0"); self.end_headers()
            self.wfile.write(b"busy"); return
        body = json.dumps({"model": "m", "choices": [{"message": {"content": "ok"}, "finish_reason": "stop",
                                                      "logprobs": None}],
                           "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)

    def log_message(self, *a): pass


@pytest.fixture
def flaky():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    Flaky.calls, Flaky.failures, Flaky.status = 0, 2, 503
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown(); srv.server_close()


def test_retries_on_5xx_and_429(flaky):
    g = OpenAIGenerator(flaky, "m", retries=2, backoff=0.01).generate(MSG, 4)
    assert (g.text, g.prompt_tokens, g.completion_tokens, Flaky.calls) == ("ok", 3, 1, 3)
    Flaky.calls, Flaky.status = 0, 429
    with pytest.raises(GeneratorError, match=r"kept failing \(HTTP 429: busy; 2 tries\)"):
        OpenAIGenerator(flaky, "m", retries=1, backoff=0.01).generate(MSG, 4)
    Flaky.calls, Flaky.failures = 0, 0
    with pytest.raises(NotImplementedError, match="no log-probabilities"):
        OpenAIGenerator(flaky, "m").yes_probability(MSG)


def test_llamacpp_prefix_reuse_gives_the_cold_cache_output(small, smollm2_path):
    other = [MSG[0], {"role": "user", "content": MSG[-1]["content"] + " Answer in one word."}]
    warm_a, warm_b = small.generate(MSG, max_tokens=16), small.generate(other, max_tokens=16)
    assert small.last_timings()["prompt_tokens"] < len(small.prompt_ids(other))  # only the new suffix was read
    p_warm = small.yes_probability(other)
    cold = LlamaCppGenerator(smollm2_path, n_ctx=1024)
    assert cold.generate(other, max_tokens=16).text == warm_b.text
    assert abs(cold.yes_probability(other) - p_warm) < 1e-3
    assert cold.generate(MSG, max_tokens=16).text == warm_a.text
