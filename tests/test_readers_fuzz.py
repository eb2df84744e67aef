"""The readers of a user's files (PDF, LaTeX source, QASPER JSON) on random and damaged inputs (issue 43): each either
reads the file or raises its own error with a message (`PdfError`, `TexError`, `QasperDataError`), never anything else.

The valid inputs are small ones the test builds itself; Hypothesis damages them (bytes flipped, cut short, inserted or
deleted; in the JSON, a value of the tree replaced by another of any type) and also draws inputs from nothing."""
import copy, io, json, tarfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from qasper_rag.papers.data import Paper, QasperDataError, Section, load_path
from qasper_rag.papers.pdf_lines import PdfError
from qasper_rag.papers.pdf import load_pdf
from qasper_rag.papers.tex import TexError, load_tex

FUZZ = settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                                        HealthCheck.too_slow])

TEX = r"""\documentclass{article}
\newcommand{\data}{satellite images}
\title{Counting Penguins}
\begin{document}\maketitle
\begin{abstract}We count emperor penguins in \data.\end{abstract}
\section{Data}We annotate 1,204 \data{} \cite{fretwell2012}.
\begin{table}\caption{Counts.}\begin{tabular}{lr}Colony & Birds\\ A & 31\\\end{tabular}\end{table}
\subsection{Labels}Two annotators label each image.
\end{document}
"""

QASPER = {"1909.00694": {
    "title": "Minimally Supervised Learning of Affective Events", "abstract": "We propose a method.",
    "full_text": [{"section_name": "Introduction", "paragraphs": ["Affective events are events.", "We use a seed lexicon."]}],
    "figures_and_tables": [{"caption": "Table 1: Results.", "file": "4-Table1-1.png"}],
    "qas": [{"question": "What is the seed lexicon?", "question_id": "q1", "nlp_background": "two",
             "answers": [{"annotation_id": "a1", "worker_id": "w1", "answer": {
                 "unanswerable": False, "extractive_spans": ["a vocabulary of positive and negative predicates"], "yes_no": None,
                 "free_form_answer": "", "evidence": ["We use a seed lexicon."], "highlighted_evidence": ["seed lexicon"]}}]}]}}


@pytest.fixture(scope="module")
def pdf_bytes(tmp_path_factory):
    from qasper_rag.papers.typeset import typeset_pdf
    paper = Paper("mine", "Counting Penguins from Space", "We count emperor penguins in satellite images.",
                  (Section("Introduction", ("Penguins live in colonies that can be seen from space.",)),
                   Section("Results", ("The network counts colonies with a mean absolute error of 3.1 birds.",))))
    path = tmp_path_factory.mktemp("pdf") / "mine.pdf"
    typeset_pdf(paper, path)
    return path.read_bytes()


@pytest.fixture(scope="module")
def tar_bytes():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = TEX.encode()
        info = tarfile.TarInfo("main.tex"); info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@st.composite
def damaged(draw, data: bytes) -> bytes:
    "`data` with one to three changes: bytes flipped, cut short, bytes inserted or deleted."
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
        at = draw(st.integers(0, max(0, len(out) - 1)))
        if kind == "flip" and out: out[at] ^= draw(st.integers(1, 255))
        elif kind == "cut": del out[at:]
        elif kind == "insert": out[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "delete": del out[at:at + draw(st.integers(1, 64))]
    return bytes(out)


def _read(reader, path, error):
    "Read `path`; the reader's own error (with a message) is a fine outcome, any other exception fails the test."
    try: return reader(path)
    except error as e: assert str(e).strip(), f"{error.__name__} without a message"


@FUZZ
@given(data=st.data())
def test_pdf_reader_on_damaged_pdfs(tmp_path, pdf_bytes, data):
    path = tmp_path / "paper.pdf"
    path.write_bytes(data.draw(damaged(pdf_bytes)))
    paper = _read(load_pdf, path, PdfError)
    assert paper is None or isinstance(paper, Paper)


@FUZZ
@given(body=st.binary(max_size=400))
def test_pdf_reader_on_random_bytes(tmp_path, body):
    path = tmp_path / "paper.pdf"
    path.write_bytes(b"%PDF-1.4\n" + body)
    _read(load_pdf, path, PdfError)


@FUZZ
@given(data=st.data())
def test_tex_reader_on_damaged_sources(tmp_path, tar_bytes, data):
    tex, tgz = tmp_path / "paper.tex", tmp_path / "paper.tar.gz"
    tex.write_bytes(data.draw(damaged(TEX.encode())))
    tgz.write_bytes(data.draw(damaged(tar_bytes)))
    for p in (tex, tgz):
        paper = _read(load_tex, p, TexError)
        assert paper is None or isinstance(paper, Paper)


@FUZZ
@given(text=st.text(max_size=300))
def test_tex_reader_on_random_text(tmp_path, text):
    path = tmp_path / "paper.tex"
    path.write_text(r"\begin{document}" + text, encoding="utf-8", errors="surrogatepass")
    _read(load_tex, path, TexError)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                           lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids, max_size=3), max_leaves=6)


def _paths(x, at=()):
    "Every place in a JSON tree: the tuple of keys and indexes that leads to it."
    yield at
    items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
    for k, v in items: yield from _paths(v, at + (k,))


@FUZZ
@given(data=st.data())
def test_qasper_reader_on_damaged_json(tmp_path, data):
    tree = copy.deepcopy(QASPER)
    for _ in range(data.draw(st.integers(1, 3))):  # a value anywhere in the tree replaced by another of any type
        at = data.draw(st.sampled_from(list(_paths(tree))))
        if not at: tree = data.draw(JSON_VALUES); continue
        parent = tree
        for k in at[:-1]: parent = parent[k]
        parent[at[-1]] = data.draw(JSON_VALUES)
    path = tmp_path / "papers.json"
    path.write_bytes(data.draw(st.one_of(st.just(json.dumps(tree).encode()), damaged(json.dumps(tree).encode()))))
    corpus = _read(load_path, path, QasperDataError)
    if corpus is not None:  # what was read can be used: every question of every paper
        assert all(isinstance(q.text, str) for q in corpus.questions()), corpus


def test_the_valid_inputs_are_read(tmp_path, pdf_bytes, tar_bytes):
    "The inputs the fuzzing damages are read as they are (else every damaged one would fail for the same dull reason)."
    (tmp_path / "p.pdf").write_bytes(pdf_bytes); (tmp_path / "p.tar.gz").write_bytes(tar_bytes)
    (tmp_path / "q.json").write_text(json.dumps(QASPER))
    assert load_pdf(tmp_path / "p.pdf").title == "Counting Penguins from Space"
    t = load_tex(tmp_path / "p.tar.gz")
    assert t.title == "Counting Penguins" and "1,204 satellite images" in t.sections[0].paragraphs[0]
    assert load_path(tmp_path / "q.json").paper("1909.00694").questions[0].text == "What is the seed lexicon?"
