"""Every rendered report page opened in headless Chromium, as a reader opens it: offline, from disk, with no kernel.

Each page must show every image (loaded, non-zero natural size), open with its findings, log no console error,
load nothing from the network, show no stderr box and no truncated table; on the failures page the explorer's
search box must filter its rows. The pages are those of the committed report (`reports/offline-full`), or of
`$QASPER_REPORT_DIR`. Needs Debian's `chromium` and `chromium-driver` and the `selenium` package (dev extra);
a machine without them fails here, saying what to install (`make test` installs them first: its `browser-deps` target).
"""
import os
import shutil
from pathlib import Path

import pytest
from qasper_rag.report import NOTEBOOKS

ROOT = Path(__file__).resolve().parents[1]
PAGES = Path(os.environ.get("QASPER_REPORT_DIR") or ROOT / "reports" / "offline-full")
BENCH = Path(os.environ.get("QASPER_BENCH_DIR") or ROOT / "reports" / "bench")  # `make bench`
LIBRARY = ROOT / "reports" / "library"  # `make library`
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
INSTALL = "install them with `apt-get install -y chromium chromium-driver` (Debian; run as root) and `pip install -e '.[dev]'` (selenium)"
WAIT_S = 30  # upper bound on waiting for a page's scripts; the checks poll and never assert on time


def _tool(path: str) -> str | None:
    return path if Path(path).is_file() else shutil.which(path)


@pytest.fixture(scope="module")
def browser():
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not _tool(p)]
    if missing:
        pytest.fail(f"the browser test needs headless Chromium and its driver; missing {', '.join(missing)}: {INSTALL}")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail(f"the browser test needs selenium: {INSTALL}")
    opts = webdriver.ChromeOptions()
    opts.binary_location = _tool(CHROMIUM)
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # the driver's path is explicit, so Selenium Manager never looks for one on the network
    d = webdriver.Chrome(service=Service(executable_path=_tool(CHROMEDRIVER)), options=opts)
    yield d
    d.quit()


def _open(d, page: Path):
    from selenium.webdriver.support.ui import WebDriverWait
    d.get_log("browser")  # drain what an earlier page logged
    d.get(page.as_uri())
    WebDriverWait(d, WAIT_S).until(lambda d: d.execute_script("return document.readyState") == "complete")
    # the images (embedded as data: URIs) have decoded
    WebDriverWait(d, WAIT_S).until(lambda d: d.execute_script("return [...document.images].every(i => i.complete)"))


def test_every_report_page_is_rendered():
    assert PAGES.is_dir(), f"no rendered report at {PAGES} (make report, or set QASPER_REPORT_DIR)"
    missing = [n for n in NOTEBOOKS if not (PAGES / f"{n}.html").exists()]
    assert not missing, f"pages missing from {PAGES}: {missing}"


@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_page_reads_well_offline(browser, name):
    _check_page(browser, PAGES / f"{name}.html", name)


def test_bench_page_reads_well_offline(browser):
    "The committed benchmark page (`make bench`) reads as the report pages do, with a figure per measured section."
    _check_page(browser, BENCH / "bench.html", "bench")
    n = browser.execute_script("return document.images.length")
    assert n >= 5, f"bench: {n} figures, expected one each for index, retrieval, memory, formats, answers and scaling"


def test_library_page_reads_well_offline(browser):
    "The committed library page (`make library`) reads as the report pages do: its routing table and figure, and the PDF round trip."
    _check_page(browser, LIBRARY / "library.html", "library")
    text = browser.execute_script("return document.body.innerText")
    for want in ("Papers read from PDFs", "pdflatex, Latin Modern (T1)", "recall ratio", "table bodies"):
        assert want in text, f"library: {want!r} is not shown (benchmarks/pdf_roundtrip.py --out reports/library/pdf_roundtrip.json, then re-render)"
    assert browser.execute_script("return document.images.length") >= 1
    text = browser.find_element("tag name", "body").text
    assert "routed first" in text and "open-domain: in context" in text and "Findings" in text
    for want in ("Retrieval inside the routed papers", "evidence recall, as asked", "Answers across the library", "wrong-paper citation rate"):
        assert want in text, f"library: {want!r} is not shown (make library, make library-answers, then re-render)"


def test_adapt_page_reads_well_offline(browser):
    "The committed adaptation page (`make adapt-page`) reads as the report pages do: the recall table and curves."
    _check_page(browser, ROOT / "reports" / "adapt" / "adapt.html", "adapt")
    assert browser.execute_script("return document.images.length") >= 1
    text = browser.find_element("tag name", "body").text
    assert "offline-adapted" in text and "offline-cross" in text
    assert "Document expansion on the train papers" in text, "adapt: the doc2query table is not shown (benchmarks/expansion_recall.py --out, then re-render)"


def _check_page(browser, page: Path, name: str):
    assert page.exists(), f"{page} is missing"
    _open(browser, page)
    imgs = browser.execute_script("return [...document.images].map(i => [i.naturalWidth, i.naturalHeight, i.src.slice(0, 40)])")
    assert imgs, f"{name}: no figure on the page"
    assert all(w > 0 and h > 0 for w, h, _ in imgs), f"{name}: images that did not load: {[s for w, h, s in imgs if not (w and h)]}"
    assert all(s.startswith("data:image/") for _, _, s in imgs), f"{name}: images not embedded in the page: {[s for *_, s in imgs]}"
    # the findings open the page: a "Findings" heading with a list, before the first code shown
    f = browser.execute_script("""
        const h = document.getElementById('Findings');
        if (!h) return null;
        const code = document.querySelector('.jp-CodeCell .jp-InputArea');
        const list = h.parentElement.querySelector('ul');
        return {items: list ? list.querySelectorAll('li').length : 0,
                first: !code || Boolean(h.compareDocumentPosition(code) & Node.DOCUMENT_POSITION_FOLLOWING),
                before: [...document.querySelectorAll('h2')].indexOf(h)};""")
    assert f is not None, f"{name}: no Findings section"
    assert f["items"] > 0, f"{name}: the Findings section lists nothing"
    assert f["first"] and f["before"] == 0, f"{name}: the findings are not the first thing on the page: {f}"
    # a report, not a notebook dump: the first screen (1,400 px) holds the title, the findings list and a figure; no code; a way back
    top = browser.execute_script("""
        const within = e => Boolean(e) && e.getBoundingClientRect().top + window.scrollY < 1400;
        const h = document.getElementById('Findings');
        return {title: within(document.querySelector('h1')), findings: within(h) && within(h.parentElement.querySelector('li')),
                figure: [...document.images].some(within), code: document.querySelectorAll('.jp-CodeCell .jp-InputArea').length,
                back: [...document.querySelectorAll('a')].some(a => a.getAttribute('href').endsWith('index.html')),
                source: /Numbers (from the run in this folder|computed when the page was rendered)/.test(document.body.innerText)};""")
    assert top["title"] and top["findings"] and top["figure"], f"{name}: the first 1,400 px lack a heading, the findings or a figure: {top}"
    assert top["code"] == 0, f"{name}: {top['code']} code cells shown (re-render: qasper-rag report --rerender)"
    assert top["back"] and top["source"], f"{name}: no link back to the index, or no line saying where its numbers come from: {top}"
    stderr = browser.execute_script("return [...document.querySelectorAll('[data-mime-type=\"application/vnd.jupyter.stderr\"]')].map(e => e.innerText.slice(0, 200))")
    assert not stderr, f"{name}: warning/stderr boxes on the page: {stderr}"
    errors = browser.execute_script("return [...document.querySelectorAll('.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.error\"]')].length")
    assert errors == 0, f"{name}: {errors} traceback(s) on the page"
    truncated = browser.execute_script("return [...document.querySelectorAll('table.dataframe tr')].filter(tr => [...tr.children].some(c => c.innerText.trim() === '...')).length")
    assert truncated == 0, f"{name}: a pandas table is truncated ('...' rows or columns)"
    remote = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name).filter(n => /^https?:/.test(n))")
    assert not remote, f"{name}: the page loads from the network: {remote}"
    severe = [l["message"] for l in browser.get_log("browser") if l["level"] == "SEVERE"]
    assert not severe, f"{name}: console errors: {severe}"


def test_index_links_every_page(browser):
    "reports/index.html links every rendered page under reports/ (and nothing that is missing); each linked page links back."
    index = ROOT / "reports" / "index.html"
    assert index.exists(), "no reports/index.html (qasper_rag.report.write_index writes it; make report does)"
    _open(browser, index)
    hrefs = browser.execute_script("return [...document.querySelectorAll('a')].map(a => a.getAttribute('href'))")
    pages = {p.relative_to(ROOT / "reports").as_posix() for p in (ROOT / "reports").glob("*/*.html")}
    assert pages <= set(hrefs), f"pages the index does not link: {sorted(pages - set(hrefs))}"
    broken = [h for h in hrefs if not (ROOT / "reports" / h).exists()]
    assert not broken, f"the index links files that do not exist: {broken}"
    assert "Evaluation runs" in browser.find_element("tag name", "body").text


def test_failure_explorer_search_filters_rows(browser):
    "Typing a question's id in the explorer's search box leaves only its rows; a search matching nothing leaves none."
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    _open(browser, PAGES / "failures.html")
    rows = lambda d: d.execute_script("return [...document.querySelectorAll('#explorer tbody tr')].map(r => r.innerText)")
    # DataTables (embedded by itables) has turned the table into the explorer: a search box beside it
    box = WebDriverWait(browser, WAIT_S).until(lambda d: d.execute_script(
        "const t = document.getElementById('explorer'); const c = t && t.closest('.dt-container');"
        "return c && c.querySelector('input[type=search]');"))
    before = rows(browser)
    assert len(before) > 1, f"the explorer shows {len(before)} row(s)"
    headers = browser.execute_script("return [...document.getElementById('explorer').closest('.dt-container').querySelectorAll('thead th')].map(h => h.innerText.trim())")
    for col in ("question_id", "paper", "question", "evidence recall", "lost at"):
        assert col in headers, f"the explorer has no {col!r} column: {headers}"
    qid = browser.execute_script("return document.querySelector('#explorer tbody tr td').innerText.trim()")
    box.send_keys(qid)
    WebDriverWait(browser, WAIT_S).until(lambda d: len(rows(d)) < len(before))
    after = rows(browser)
    assert after and all(qid in r for r in after), f"searching {qid!r} left rows without it: {after}"
    box.clear(); box.send_keys("no question contains this zqxj")
    WebDriverWait(browser, WAIT_S).until(lambda d: d.execute_script("return document.querySelector('#explorer tbody td.dt-empty') !== null"))
    assert browser.find_elements(By.CSS_SELECTOR, "#explorer tbody td.dt-empty"), "a search matching nothing still shows rows"


def test_failure_explorer_opens_a_question_in_detail(browser):
    "A question's id in the explorer links to its detail view, which opens and lists the passages sent, marked cited / gold."
    from selenium.webdriver.support.ui import WebDriverWait
    _open(browser, PAGES / "failures.html")
    link = WebDriverWait(browser, WAIT_S).until(lambda d: d.execute_script("return document.querySelector('#explorer tbody a[href^=\\'#q-\\']')"))
    target = link.get_attribute("href").split("#", 1)[1]
    closed = browser.execute_script("const d = document.getElementById(arguments[0]); return d && d.tagName === 'DETAILS' && !d.open", target)
    assert closed, f"no closed detail view {target!r} for the explorer's first link"
    link.click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.execute_script("return document.getElementById(arguments[0]).open", target))
    detail = browser.execute_script("""const d = document.getElementById(arguments[0]);
        return {visible: d.querySelector('table').getBoundingClientRect().height > 0, rows: d.querySelectorAll('tbody tr').length,
                text: d.innerText};""", target)
    assert detail["visible"] and detail["rows"] > 0, f"the detail view of {target} shows no passage: {detail}"
    assert "Short answer" in detail["text"] and "Answer as delivered" in detail["text"]


def test_failure_explorer_sorts_on_a_header_click(browser):
    "A click on a column header's text (not only its 12 px icon) sorts the explorer by that column; a second click reverses it."
    from selenium.webdriver.support.ui import WebDriverWait
    _open(browser, PAGES / "failures.html")
    WebDriverWait(browser, WAIT_S).until(lambda d: d.execute_script(
        "const t = document.getElementById('explorer'); return t && t.closest('.dt-container') !== null"))
    col = browser.execute_script("""const hs = [...document.getElementById('explorer').closest('.dt-container').querySelectorAll('thead tr:first-child th')];
        return hs.findIndex(h => h.innerText.trim() === 'question_id');""")
    assert col >= 0, "the explorer has no question_id column"
    ids = lambda d: d.execute_script("return [...document.querySelectorAll('#explorer tbody tr')].map(r => r.cells[arguments[0]].innerText.trim())", col)
    before = ids(browser)
    assert len(set(before)) > 1, f"the explorer's first page holds {len(set(before))} distinct question id(s): nothing to sort"
    # the header's title text, where a reader clicks
    title = browser.execute_script("""const h = document.getElementById('explorer').closest('.dt-container').querySelectorAll('thead tr:first-child th')[arguments[0]];
        return h.querySelector('.dt-column-title') || h;""", col)
    title.click()
    WebDriverWait(browser, WAIT_S).until(lambda d: ids(d) == sorted(ids(d)))  # if it was sorted already, the second click tells
    first = ids(browser)
    assert first == sorted(first), f"a click on the header did not sort the column ascending: {first[:5]}"
    title.click()
    WebDriverWait(browser, WAIT_S).until(lambda d: ids(d) == sorted(ids(d), reverse=True))
    assert ids(browser)[0] >= first[-1]


@pytest.fixture(scope="module")
def answer_page(tmp_path_factory):
    """An answer page (`show.answer_html`) about a PDF the test typesets itself, its record built by the answer path's
    functions from the paper's real chunks: [Doc 1] an introduction passage, [Doc 2] the passage holding the marked sentence."""
    from test_locations import MARKED, typeset
    from qasper_rag.answer.answer import located, with_support
    from qasper_rag.papers.chunking import ChunkedPaper, QasperChunker
    from qasper_rag.papers.pdf import load_pdf
    from qasper_rag.answer.record import AnswerRecord, AnswerSentence, CitedPassage
    from qasper_rag.answer.show import answer_html
    d = tmp_path_factory.mktemp("answer-page")
    paper = load_pdf(typeset(d / "where.pdf"))
    cp = ChunkedPaper(paper, QasperChunker()(paper))
    sent = [next(c for c in cp.chunks if c.section == "Introduction"), next(c for c in cp.chunks if MARKED in c.body)]
    q = "How many sentences does the quokka corpus hold?"
    rows = [AnswerSentence("Papers are read back from PDFs [Doc 1].", "Papers are read back from PDFs", (1,)),
            AnswerSentence("The quokka corpus holds seventeen thousand sentences [Doc 2].", "The quokka corpus holds seventeen thousand sentences", (2,))]
    passages = located(cp, [CitedPassage(i, c.id, c.section, c.body) for i, c in enumerate(sent, 1)])
    rec = AnswerRecord(question=q, paper_id=paper.id, answer=" ".join(r.text for r in rows), sentences=with_support(cp, q, rows, sent),
                       short_answer="seventeen thousand", passages=passages, predicted_evidence=[], context=[])
    page = d / "answer.html"
    page.write_text(answer_html(rec), encoding="utf-8")
    return page


def test_answer_page_citation_brings_the_highlighted_sentence_into_view(browser, answer_page):
    "Clicking [Doc 2] in the answer scrolls to its passage, whose marked sentence is then in the viewport, uncovered, with its boxes on the page image."
    from selenium.webdriver.support.ui import WebDriverWait
    from test_locations import MARKED
    _open(browser, answer_page)
    visible = """const m = [...document.querySelectorAll('mark')].find(m => m.innerText.includes(arguments[0]));
        const r = m.getBoundingClientRect();
        if (!(r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight)) return false;
        const at = document.elementFromPoint(r.left + 2, r.top + r.height / 2);
        return at === m || m.contains(at);"""
    assert not browser.execute_script(visible, MARKED), "the marked sentence is in view before any click: the test proves nothing"
    links = [a for a in browser.find_elements("css selector", "a.cite") if a.text == "[Doc 2]"]
    assert len(links) == 1
    links[0].click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.execute_script(visible, MARKED))
    target = links[0].get_attribute("href").split("#", 1)[1]
    assert browser.execute_script("return location.hash") == f"#{target}"
    boxes = browser.execute_script("""const s = document.getElementById(arguments[0]);
        const img = s.querySelector('.sheet img').getBoundingClientRect();
        return [...s.querySelectorAll('.sheet .hl')].map(b => b.getBoundingClientRect()).map(r =>
            [r.width > 0 && r.height > 0, r.left >= img.left - 1 && r.right <= img.right + 1 && r.top >= img.top - 1 && r.bottom <= img.bottom + 1]);""", target)
    assert boxes and all(a and b for a, b in boxes), boxes  # the sentence's lines are boxed on the drawn page
    remote = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name).filter(n => /^https?:/.test(n))")
    assert not remote and not [l for l in browser.get_log("browser") if l["level"] == "SEVERE"]
