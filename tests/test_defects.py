"""Defects found in review (issue 14), each pinned by a test that failed before its fix."""
import dataclasses, inspect, re, subprocess
from pathlib import Path

import numpy as np
import pytest

from qasper_rag.papers.data import QasperDataError, load_path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "llama_cmake_args.sh"


# --- CRAG refine: strip scores are never the packed chunks' cached scores ----------------------------

class WordOverlap:
    "A deterministic relevance scorer: the share of the question's words found in the text."
    name = "overlap"
    def score(self, question, texts):
        q = set(re.findall(r"\w+", question.lower()))
        return np.array([len(q & set(re.findall(r"\w+", t.lower()))) / len(q) for t in texts])


def test_refine_scores_the_strips_of_a_chunk_with_as_many_sentences_as_chunks():
    from qasper_rag.retrieve.crag import CragConfig, apply_crag
    from qasper_rag.retrieve.retrieval import _VectorRelevance
    question = "which seed lexicon"
    ids, texts = ["a", "b"], ["The seed lexicon has 30 words. Training took two days.", "Another passage about a lexicon."]
    cached = np.array([0.9, 0.5])  # the two packed chunks' cosine scores, both kept
    scorer = _VectorRelevance(texts, cached, lambda: WordOverlap())
    np.testing.assert_array_equal(scorer.score(question, texts), cached)  # the packed chunks: their cached scores
    strips = ["The seed lexicon has 30 words.", "Training took two days."]  # as many texts as packed chunks
    np.testing.assert_array_equal(scorer.score(question, strips), WordOverlap().score(question, strips))
    kept, removed = apply_crag(question, ids, texts, scorer, CragConfig(mode="refine"))
    assert removed == [] and kept[0].refined == "The seed lexicon has 30 words."  # the off-topic sentence is cut


# --- an empty question, a data file with no papers ----------------------------------------------------

@pytest.fixture(scope="module")
def smollm2():
    from qasper_rag.core.llama import LlamaCppGenerator
    from qasper_rag.core.models import smollm2_gguf_path
    return LlamaCppGenerator(smollm2_gguf_path(), n_ctx=2048)


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_answerer_refuses_an_empty_question(train10, smollm2, tmp_path, question):
    from qasper_rag.answer.answer import Answerer
    from qasper_rag.retrieve.retrieval import Retriever
    from qasper_rag.retrieve.config import get_config
    cfg = dataclasses.replace(get_config("bm25-only"), budget=300)
    ans = Answerer(Retriever(cfg, cache_dir=tmp_path), smollm2, max_tokens=8)
    with pytest.raises(ValueError, match=r"the question is empty: .*ask\(paper, \"What"):
        ans.ask(train10.paper("1909.00694"), question)


@pytest.mark.parametrize("content", ["{}", "[]", "", "{}\n[]\n"])
def test_a_file_without_papers_is_an_error(tmp_path, content):
    f = tmp_path / "qasper-empty.json"
    f.write_text(content)
    with pytest.raises(QasperDataError, match=r"qasper-empty\.json: no QASPER papers"):
        load_path(f)
    with pytest.raises(QasperDataError, match="no QASPER papers"):
        load_path(tmp_path)  # a folder whose only file holds none


def test_chunks_of_an_empty_file_is_an_error_not_empty_statistics(tmp_path):
    from test_cli import run
    (tmp_path / "qasper-empty.json").write_text("{}")
    r = run("chunks", "--data", str(tmp_path / "qasper-empty.json"), "--json")
    assert r.returncode == 2 and r.stdout == "" and "no QASPER papers" in r.stderr and "Traceback" not in r.stderr


# --- llama.cpp build flags from this CPU, one rule for threads -------------------------------------------

CPUS = {"avx512, no avx-vnni (AMD EPYC)": "fpu avx avx2 fma f16c bmi2 avx512f avx512vbmi avx512_vnni",
        "avx-vnni, no avx512": "fpu avx avx2 fma f16c bmi2 avx_vnni",
        "sse only": "fpu sse sse2 sse4_2"}


@pytest.mark.parametrize("cpu", list(CPUS))
def test_llama_cmake_args_follow_the_cpu_like_the_makefile(tmp_path, cpu):
    from qasper_rag.core.llama import llama_cmake_args
    info = tmp_path / "cpuinfo"
    info.write_text(f"processor\t: 0\nflags\t\t: {CPUS[cpu]}\n\nprocessor\t: 1\nflags\t\t: {CPUS[cpu]}\n")
    sh = subprocess.run([str(SCRIPT), str(info)], capture_output=True, text=True, check=True).stdout.strip()
    assert llama_cmake_args(info) == sh
    assert ("-DGGML_AVX512=ON" in sh) == ("avx512f" in CPUS[cpu]) and ("-DGGML_AVX_VNNI=ON" in sh) == ("avx_vnni" in CPUS[cpu])
    assert llama_cmake_args(tmp_path / "no-cpuinfo") == ""  # elsewhere (macOS): llama.cpp chooses


def test_llama_cpp_pip_hint_uses_this_cpus_flags():
    from qasper_rag.core import llama
    here = subprocess.run([str(SCRIPT)], capture_output=True, text=True, check=True).stdout.strip()
    assert llama.LLAMA_CPP_CMAKE_ARGS == here and f'CMAKE_ARGS="{here}"' in llama.LLAMA_CPP_PIP


def test_scripts_name_only_files_that_exist():
    for script in (ROOT / "scripts").glob("*.sh"):
        for name in re.findall(r"[\w./-]+\.md\b", script.read_text()):
            assert (ROOT / name).is_file(), f"{script.name} names {name}, which is not at {ROOT / name}"


def test_every_command_uses_the_generators_thread_rule(smollm2, monkeypatch):
    from qasper_rag.cli import build_parser
    from qasper_rag.core.llama import default_threads
    monkeypatch.delenv("QASPER_LLM_THREADS", raising=False)
    p = build_parser()
    for argv in (["ask", "--paper", "x", "q?"], ["eval", "--out", "o"], ["labels", "--check", "l.csv"], ["report"]):
        a = p.parse_args(argv)
        assert a.threads is None, (argv[0], a.threads)  # left to the generator's rule
    assert smollm2.llm.n_threads == default_threads()
    monkeypatch.setenv("QASPER_LLM_THREADS", "3")
    assert default_threads() == 3 and p.parse_args(["ask", "--paper", "x", "q?"]).threads is None


# --- parameters that were accepted and ignored ---------------------------------------------------------

def test_chunk_stats_reports_the_table_bodies_it_was_given(train10, dev_data):
    from qasper_rag.app import chunk_stats, load_corpus
    from qasper_rag.papers.chunking import ChunkerConfig, QasperChunker
    from test_cli import run
    data = str(dev_data / "qasper-traindev-leval.json")  # the dev file, tables/ beside it
    corpus, trep = load_corpus(data)
    assert trep is not None and trep.candidates > 0
    chunker = QasperChunker(ChunkerConfig())
    s = chunk_stats(corpus, chunker, trep)
    assert (s["table_bodies_read"], s["table_bodies_unused"]) == (trep.candidates, trep.unused)
    r = run("chunks", "--data", data)  # the same statistics as the command prints them
    assert r.returncode == 0 and f"{trep.candidates} table bodies read for these papers, {trep.unused} matched no caption" in r.stdout, r.stderr
    bare = chunk_stats(train10, chunker)  # no table folder read: nothing to report
    assert (bare["table_bodies_read"], bare["table_bodies_unused"]) == (None, None)


def test_needs_retry_reads_only_the_parsed_reply():
    from qasper_rag.answer.answer import _needs_retry
    from qasper_rag.answer.prompts import parse_output
    assert list(inspect.signature(_needs_retry).parameters) == ["parsed"]
    assert _needs_retry(parse_output("BERT.")) == ["no 'Answer:' in the output"]
    assert _needs_retry(parse_output("Reasoning: r\nAnswer: BERT [Doc 1].")) == []  # only the short answer missing: a cheap call
