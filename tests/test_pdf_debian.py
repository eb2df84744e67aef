"""The PDF reader on born-digital PDFs the project did not make (issue 44): LaTeX manuals that Debian's documentation packages
ship, installed by `make pdf-deps` (libsuitesparse-doc, nauty-doc, glpk-doc: under 6 MB together, no dependencies). Every other
PDF test reads PDFs the project typesets itself, whose fonts, layout and text layer it chose.

Missing files fail under CI (CI=true) and are skipped elsewhere, with the command that installs them."""
import re
from pathlib import Path

import pytest

from qasper_rag.papers.data import under_ci
from qasper_rag.papers.pdf import parse_pdf

DOC = Path("/usr/share/doc")
# pdfTeX 1.40.24 (Debian bookworm's SuiteSparse 5.12 build): a short paper-like guide with an abstract, numbered sections,
# four captioned figures of code and a numbered reference list
LDL = DOC/"libsuitesparse-dev"/"ldl_userguide.pdf"
# pdfTeX 1.40.20, 100 pages: Computer Modern fonts WITH a text map, whose ligature glyphs (ﬁ ﬂ ﬀ ﬃ) pdfminer reports as such
NAUTY = DOC/"nauty"/"nug28.pdf"
# GLPK 5.0's LaTeX chapter, Computer Modern Type 1 fonts WITHOUT a text map: pdfminer gives glyph codes, `(cid:12)` for "fi"
CNFSAT = DOC/"glpk-doc"/"cnfsat.pdf"
_LIGATURE_CHARS = re.compile("[\ufb00-\ufb06]")
_CODE = re.compile(r"\(cid:\d+\)")


def read(path: Path):
    if not path.is_file():
        what = f"{path} is missing: install the Debian documentation packages with `make pdf-deps`"
        if under_ci(): pytest.fail(f"{what} (CI=true: these checks must run, never be skipped)")
        pytest.skip(what)
    return parse_pdf(path)


def text_of(paper) -> str:
    return "\n".join([paper.title, paper.abstract, *(s.name for s in paper.sections), *(p for s in paper.sections for p in s.paragraphs)])


def test_ldl_user_guide():
    "Title, abstract, every section heading in order (numbers dropped), the figures' captions and the reference list apart."
    r = read(LDL)
    p = r.paper
    assert p.title == "User Guide for LDL, a concise sparse Cholesky package"
    assert p.abstract.startswith("The LDL software package is a set of short, concise routines for factorizing symmetric positive-definite")
    assert p.abstract.endswith("The package is written in C, and includes a MATLAB interface.")
    assert [s.name for s in p.sections] == ["Overview", "Algorithm", "Implementation", "Using LDL in MATLAB", "Using LDL in a C program",
                                            "Acknowledgments"]
    # reading order: a section's paragraphs start where its text starts, not at a running header or a page number
    assert p.sections[0].paragraphs[0].startswith("LDL is a set of short, concise routines that compute the")
    assert p.sections[1].paragraphs[0].startswith("The underlying numerical algorithm is described below.")
    assert [(f.kind, f.number) for f in p.floats] == [("figure", 1), ("figure", 2), ("figure", 3), ("figure", 4)]
    assert p.floats[1].caption == "Figure 2: ldl numeric: numeric factorization"
    assert len(r.references) == 14 and r.references[0].startswith("[1] P. R. Amestoy, T. A. Davis, and I. S. Duff.")
    assert r.references[-1].startswith("[14] G. W. Stewart. Building an old-fashioned sparse solver.")
    assert not any("[1] P. R. Amestoy" in x for s in p.sections for x in s.paragraphs)  # the references are not body text
    assert not _LIGATURE_CHARS.search(text_of(p))


def test_nauty_guide_ligatures_become_letters():
    "A 100-page manual: no ligature glyph survives (words typeset with ﬁ read with fi), and its chapters come in order."
    r = read(NAUTY)
    p, text = r.paper, text_of(r.paper)
    assert p.title == "nauty and Traces User’s Guide (Version 2.8.6)"
    assert not _LIGATURE_CHARS.search(text)
    assert not re.search(r"\(cid:1[1-5]\)", text)  # nor a ligature's code
    assert len(re.findall(r"\w*fi\w*", text)) > 300 and "finite set of vertices" in text
    names = [s.name for s in p.sections]
    chapters = ["Introduction", "Sample dreadnaut sessions", "Data Structures", "Size limits", "Options and statistics",
                "Calling nauty and Traces", "Vertex-invariants", "Utilities", "Installing nauty and Traces", "Acknowledgements"]
    assert [n for n in names if n in chapters] == chapters
    assert p.sections[names.index("Introduction")].paragraphs[0].startswith("nauty and Traces come with a primitive interactive interface")
    assert p.sections[names.index("Sample dreadnaut sessions")].paragraphs[0] == (
        "Several sample dreadnaut sessions are shown below. The underlined characters are those typed by the user.")
    assert len(r.references) >= 10 and r.references[0].startswith("[1] J. M. Boyer and W. J. Myrvold")


def test_glpk_chapter_glyph_codes_read_by_their_tex_encoding():
    "Computer Modern without a text map: `Satis(cid:12)ability` reads `Satisfiability`, cmsy's minus and ≥ come back as symbols."
    r = read(CNFSAT)
    p, text = r.paper, text_of(r.paper)
    assert p.title == "CNF Satisfiability Problem"
    assert not re.search(r"\(cid:1[1-5]\)", text) and not _LIGATURE_CHARS.search(text)
    assert "(cid:0)" not in text and "(cid:21)" not in text
    assert "t = 1 − x" in text and "≥" in text  # cmsy's codes 0 and 21
    assert [s.name for s in p.sections][:2] == ["Introduction", "GLPK API Routines"]
    assert p.sections[0].paragraphs[0].startswith("The Satisfiability Problem (SAT) is a classic combinatorial problem.")
    assert "find such values of the variables" in p.sections[0].paragraphs[2]
    # the only codes left are math symbols and accents outside the text encodings read (e.g. cmsy 18, ⊆)
    assert len(_CODE.findall(text)) <= 4, _CODE.findall(text)
