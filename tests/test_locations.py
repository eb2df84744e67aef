"""Passages know where they are printed: a PDF the test typesets itself is read back, and the page and line boxes of
a passage's words are checked against where pdfminer finds those words' glyphs on the page."""
import pytest

from qasper_rag.papers.chunking import ChunkedPaper, QasperChunker
from qasper_rag.papers.data import Paper, Section
from qasper_rag.papers.pdf import load_pdf

FILLER = ("Researchers keep their drafts as PDFs, and a reader of such a paper wants answers with the passages they "
          "rest on. We read the columns, headings and captions of the paper back into sections. ")
MARKED = "The quokka corpus holds seventeen thousand annotated sentences."  # one sentence, found once in the paper


def typeset(path):
    "A two-page, two-column PDF whose second section holds the marked sentence (no hyphenation: words stay whole)."
    from qasper_rag.papers.typeset import typeset_pdf
    paper = Paper("x", "Where Words Are Printed", "We read a paper back from its PDF with the boxes of its lines.",
                  (Section("Introduction", (FILLER * 30, FILLER * 12)),
                   Section("Data", (FILLER * 2 + MARKED + " " + FILLER, "A short closing paragraph."))))
    return typeset_pdf(paper, path, hyphenate=False)


def glyph_boxes(path, word):
    "(page, x, y) of the centre of every character of each occurrence of `word` on the pages, as pdfminer places its glyphs."
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTChar, LTTextBox, LTTextLineHorizontal
    out = []
    for page, layout in enumerate(extract_pages(path), start=1):
        for box in layout:
            if not isinstance(box, LTTextBox): continue
            for line in box:
                if not isinstance(line, LTTextLineHorizontal): continue
                chars = [c for c in line if isinstance(c, LTChar)]
                text = "".join(c.get_text() for c in chars)
                k = text.find(word)
                while k >= 0:
                    out.append([(page, (c.x0 + c.x1) / 2, (c.y0 + c.y1) / 2) for c in chars[k:k + len(word)]])
                    k = text.find(word, k + 1)
    return out


def inside(pt, boxes):
    page, x, y = pt
    return any(p == page and x0 <= x <= x1 and y0 <= y <= y1 for p, x0, y0, x1, y1 in boxes)


@pytest.fixture(scope="module")
def placed(tmp_path_factory):
    pdf = typeset(tmp_path_factory.mktemp("pdf") / "where.pdf")
    paper = load_pdf(pdf)
    return pdf, ChunkedPaper(paper, QasperChunker()(paper))


def test_sentence_boxes_hold_its_glyphs(placed):
    pdf, cp = placed
    chunk = next(c for c in cp.chunks if MARKED in c.body)
    k = chunk.body.index(MARKED)
    loc = cp.location(chunk.id, k, k + len(MARKED))
    assert loc.section == "Data" and loc.paragraphs == (0,)
    occurrences = [g for w in ("quokka", "seventeen", "annotated") for g in glyph_boxes(pdf, w)]
    assert len(occurrences) == 3  # each word is printed once
    assert all(inside(pt, loc.boxes) for occ in occurrences for pt in occ)
    assert set(loc.pages) == {pt[0] for occ in occurrences for pt in occ}
    assert 1 <= len(loc.boxes) <= 3  # the sentence's lines, not its paragraph's
    whole = cp.location(chunk.id)  # the whole passage: every line of its paragraphs
    assert len(whole.boxes) > len(loc.boxes) and set(loc.boxes) <= set(whole.boxes)
    assert not any(inside(pt, loc.boxes) for pt in glyph_boxes(pdf, "closing")[0])  # the next paragraph is not highlighted


def test_pages_of_passages(placed):
    pdf, cp = placed
    pages = {c.id: cp.location(c.id).pages for c in cp.chunks}
    assert pages[f"{cp.paper.id}:abstract"] == (1,)
    last = cp.chunks[-1]
    assert last.section == "Data" and "closing" in last.body
    closing = glyph_boxes(pdf, "closing")[0][0][0]
    assert closing in pages[last.id] and max(p for ps in pages.values() for p in ps) >= 2  # the paper runs to page 2
    for c in cp.chunks:  # every body passage has boxes on the pages it names, in the page's bounds (US letter, points)
        loc = cp.location(c.id)
        assert loc.boxes and {b[0] for b in loc.boxes} == set(loc.pages)
        assert all(0 <= x0 < x1 <= 612 and 0 <= y0 < y1 <= 792 for _, x0, y0, x1, y1 in loc.boxes)


def test_tex_passages_name_their_file_and_line(tmp_path):
    "A passage of a LaTeX e-print names the file and line where its first paragraph starts (an \\input file included)."
    from test_cli import _my_paper_tex
    from qasper_rag.papers.tex import load_tex
    paper = load_tex(_my_paper_tex(tmp_path))
    cp = ChunkedPaper(paper, QasperChunker()(paper))
    at = {c.id: (cp.location(c.id).file, cp.location(c.id).line, cp.location(c.id).paragraphs) for c in cp.chunks}
    src = (tmp_path / "src" / "sections" / "method.tex").read_text().splitlines()
    assert at[f"{paper.id}:s0c0"] == ("sections/method.tex", src.index("Researchers keep their drafts as LaTeX~\\cite{doe}.") + 1, (0, 1))
    assert at[f"{paper.id}:s1c0"] == ("sections/method.tex", src.index("We use twelve papers (Table~\\ref{t}).") + 1, (0,))
    assert at[f"{paper.id}:abstract"][0] == "main.tex"
