"""`qasper-rag ask` shows where an answer rests: asked about a PDF the test typesets itself, with its output piped, it
prints the supporting sentence between » and « with its page (no colour codes), and `--html` writes one self-contained
page whose highlight boxes lie on the words' glyphs. The answer comes from the tests' tiny model (SmolLM2-135M), shown
unverified (`--verify none`) so that its citation, not the judge, decides what is shown."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_locations import MARKED, glyph_boxes, typeset

EXE = shutil.which("qasper-rag", path=str(Path(sys.executable).parent))
QUESTION = "How many sentences does the quokka corpus hold?"


@pytest.fixture(scope="module")
def asked(tmp_path_factory):
    assert EXE, "qasper-rag is not installed in this environment (make setup)"
    d = tmp_path_factory.mktemp("ask")
    pdf = typeset(d / "where.pdf")
    r = subprocess.run([EXE, "ask", "--pdf", str(pdf), "--config", "bm25-only", "--generator", "smollm2", "--verify", "none",
                        "--html", str(d / "answer.html"), QUESTION], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return pdf, r.stdout, (d / "answer.html").read_text(encoding="utf-8")


def test_piped_output_marks_the_supporting_sentence_with_its_page(asked):
    pdf, out, _ = asked
    page = glyph_boxes(pdf, "quokka")[0][0][0]
    assert "\x1b[" not in out  # piped: no colour codes
    assert f"\u00bb{MARKED}\u00ab (p. {page})" in out, out
    head = re.search(r"^\[Doc (\d+)\] where:s1c\d+ \u00a7 Data, (pp?\. [\d-]+)$", out, re.M)
    assert head and str(page) in head.group(2), out
    # without --full-passages the rest of the passage is not printed: the filler around the marked sentence is left out
    block = out[head.end():].split("\n[Doc ")[0]
    assert "captions of the paper" not in block, block


def test_html_answer_is_self_contained_and_boxes_cover_the_words(asked):
    pdf, _, page_html = asked
    assert "<mark" in page_html and MARKED in re.sub(r"<[^>]+>", "", page_html)
    assert re.search(r'<a class="cite" href="#(qa[0-9a-f]+-doc\d+)">\[Doc \d+\]</a>', page_html)
    assert not re.search(r'(src|href)="(https?:|//)', page_html)  # nothing from the network
    page = glyph_boxes(pdf, "quokka")[0][0][0]
    passage = next(p for p in page_html.split('<section class="passage"') if "<mark" in p and MARKED in p)
    sheet = re.search(rf'<div class="sheet" data-page="{page}">(.*?)</figure>', passage, re.S)
    assert sheet and "data:image/png;base64," in sheet.group(1)
    hl = [tuple(float(v) for v in m) for m in
          re.findall(r'class="hl" style="left:([\d.]+)%;top:([\d.]+)%;width:([\d.]+)%;height:([\d.]+)%', sheet.group(1))]
    assert hl
    for word in ("quokka", "seventeen", "annotated"):  # every glyph of the sentence's words lies in a highlight box
        for p, x, y in glyph_boxes(pdf, word)[0]:
            gx, gy = 100 * x / 612, 100 * (792 - y) / 792  # US letter, in percent from the top left, as the boxes are placed
            assert p == page and any(l <= gx <= l + w and t <= gy <= t + h for l, t, w, h in hl), (word, gx, gy, hl)
