"""PDF round trip on the shared QASPER papers: each paper typeset as a two-column PDF, read back with load_pdf, and
compared with its JSON: how much gold evidence comes back as a paragraph, and the evidence recall of retrieval on
PDF-derived chunks against JSON-derived chunks for the same questions.

A plain script: it prints numbers and checks nothing. Run from the project root:

    .venv/bin/python benchmarks/pdf_roundtrip.py [--typesetter latex|reportlab] [--out FILE.json] [--config offline-2k]
                                                [--cache DIR] [--font FILE] [--limit N] [--no-recall]

Two typesetters: `latex` (qasper_rag.papers.typeset.typeset_latex: pdflatex, as real papers are made: TeX's hyphenation,
floats at the tops of columns, headers on the page number's line; `make tex-deps`) and `reportlab`
(typeset_pdf: hyphenates far more often, keeps floats beside the paragraph citing them). --out adds this
typesetter's numbers to a JSON file (one key per typesetter), which the README's sentence is generated from.
The PDFs go to a temporary folder (the shared data is never copied into the repository). reportlab's font defaults
to Debian's DejaVu Serif when it is installed, else Times (Latin-1 only); LaTeX sets Latin Modern (T1) and prints
`?` for what it cannot set (CJK, Greek, mathematical symbols). Text a typesetter cannot draw is lost in the
typesetting, not in the reading, and is counted apart. Evidence maps onto chunks as for JSON papers (ChunkedPaper:
an evidence string must equal a paragraph after white-space normalisation), so (a) says how often that holds; (b) is
also reported with each gold string re-anchored to the PDF paragraph or caption it matches with token F1 >= 0.9, which
separates retrieval on PDF-derived chunks from the exact-string mapping of the evaluation.
By default the vector cache is a fresh temporary folder; pass `--cache` a copy of data/cache to reuse vectors.
"""
from __future__ import annotations
import argparse, json, platform, statistics, tempfile, time
from dataclasses import replace
from pathlib import Path
from qasper_rag.papers.chunking import norm_ws
from qasper_rag.app import load_corpus
from qasper_rag.papers.data import FLOAT_PREFIX, Paper, QasperCorpus
from qasper_rag.core.env import shared_data_dir
from qasper_rag.evaluate.metrics import token_f1
from qasper_rag.papers.pdf import parse_pdf
from qasper_rag.papers.typeset import latex_settable, typeset_latex, typeset_pdf
from qasper_rag.evaluate.recall import measure_recall
from qasper_rag.retrieve.retrieval import Retriever

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf")
REFERENCES = [f"Author{i}, A. and Writer, B. 20{10 + i}. A referenced paper, number {i}, on a related topic of the field. "
              f"In Proceedings of the Conference, pages {10 * i}-{10 * i + 9}." for i in range(8)]


def drawable(font: Path | None):
    "A test: can the typesetting font draw every character of a text?"
    if font is None: return lambda t: all(ord(c) < 256 for c in t)
    from reportlab.pdfbase.ttfonts import TTFontFile
    cmap = set(TTFontFile(str(font)).charToGlyph)
    return lambda t: all(c.isspace() or ord(c) in cmap for c in t)


def round_trip(corpus: QasperCorpus, folder: Path, font: Path | None, typesetter: str = "reportlab") -> tuple[list[Paper], dict]:
    "Every paper typeset and read back (with the JSON paper's questions attached), and timings."
    out, t_set, t_read, pages = [], [], [], []
    for p in corpus:
        t = time.perf_counter()
        if typesetter == "latex": pdf = typeset_latex(p, folder/f"{p.id}.pdf", references=REFERENCES)
        else: pdf = typeset_pdf(p, folder/f"{p.id}.pdf", references=REFERENCES, font=font)
        t_set.append(time.perf_counter() - t)
        t = time.perf_counter(); r = parse_pdf(pdf, p.id); t_read.append(time.perf_counter() - t)
        pages.append(len(r.columns))
        out.append(replace(r.paper, questions=p.questions, split=p.split))
    return out, {"typeset_s": round(statistics.median(t_set), 3), "read_s": round(statistics.median(t_read), 3), "pages": sum(pages)}


def structure(gold: list[Paper], read: list[Paper]) -> dict:
    "Title, abstract, section names, paragraphs and captions recovered exactly (after white-space normalisation)."
    n = len(gold)
    title = sum(norm_ws(g.title) == r.title for g, r in zip(gold, read))
    abstract = sum(norm_ws(g.abstract) == r.abstract for g, r in zip(gold, read))
    names = sum([norm_ws(s.name) for s in g.sections if any(x.strip() for x in s.paragraphs)] == [s.name for s in r.sections] for g, r in zip(gold, read))
    paras = [(norm_ws(x), {norm_ws(y) for _, _, y in r.paragraphs}) for g, r in zip(gold, read) for _, _, x in g.paragraphs if x.strip()]
    caps = [(norm_ws(f.caption), {norm_ws(c.caption) for c in r.floats}) for g, r in zip(gold, read) for f in g.floats]
    bodies = [(f.body, {c.caption: c.body for c in r.floats}.get(f.caption)) for g, r in zip(gold, read) for f in g.floats if f.body]
    print(f"papers {n}: title exact {title}/{n}, abstract exact {abstract}/{n}, section names in order {names}/{n}; "
          f"table bodies (Markdown) exact {sum(b == x for b, x in bodies)}/{len(bodies)}, found {sum(x is not None for _, x in bodies)}")
    print(f"all paragraphs exact {sum(x in s for x, s in paras)}/{len(paras)} ({sum(x in s for x, s in paras) / len(paras):.3f}); "
          f"captions exact {sum(c in s for c, s in caps)}/{len(caps)}")
    return {"papers": n, "title_exact": title, "abstract_exact": abstract, "section_names_in_order": names,
            "paragraphs": len(paras), "paragraphs_exact": sum(x in s for x, s in paras), "captions": len(caps), "captions_exact": sum(c in s for c, s in caps),
            "table_bodies": len(bodies), "table_bodies_exact": sum(b == x for b, x in bodies), "table_bodies_found": sum(x is not None for _, x in bodies),
            "tables_found_without_body": sum(1 for G, R in zip(gold, read) for c in R.floats if c.body and not any(g.caption == c.caption and g.body for g in G.floats))}


def evidence(gold: list[Paper], read: list[Paper], can_draw) -> dict:
    "(a): gold text evidence found as a paragraph (or the abstract) of the PDF-derived paper, exactly and with token F1 >= 0.9."
    from qasper_rag.papers.chunking import ChunkedPaper
    rows = []
    for g, r in zip(gold, read):
        located = ChunkedPaper(g, [])  # the JSON paper's own mapping: which evidence strings are paragraphs at all
        paras = [norm_ws(x) for _, _, x in r.paragraphs] + ([r.abstract] if r.abstract else [])
        for q in g.questions:
            for ev in q.evidence:
                if ev.startswith(FLOAT_PREFIX): continue
                kind = located.locate(ev).kind
                e = norm_ws(ev)
                rows.append((kind, e in paras, max((token_f1(x, e) for x in paras), default=0.0), can_draw(ev),
                             e.replace("-", "") in {x.replace("-", "") for x in paras}))
    text = [r for r in rows if r[0] == "text"]
    n = len(text)
    exact, f1 = sum(r[1] for r in text), sum(r[2] >= 0.9 for r in text)
    print(f"(a) text evidence items (question x evidence string, not FLOAT SELECTED): {len(rows)}; "
          f"{n} are paragraphs of the JSON paper ({len(rows) - n} are headings or match no JSON paragraph)")
    print(f"    recovered as a PDF paragraph: exact {exact}/{n} = {exact / n:.3f}; token F1 >= 0.9: {f1}/{n} = {f1 / n:.3f}; "
          f"exact once hyphens are ignored: {sum(r[4] for r in text)}/{n}")
    drawn = [r for r in text if r[3]]
    print(f"    of the {len(drawn)} the font can draw entirely: exact {sum(r[1] for r in drawn)}/{len(drawn)} = "
          f"{sum(r[1] for r in drawn) / max(1, len(drawn)):.3f}; F1 >= 0.9 {sum(r[2] >= 0.9 for r in drawn)}/{len(drawn)}")
    return {"evidence_paragraphs": n, "exact": exact, "f1_09": f1, "exact_ignoring_hyphens": sum(r[4] for r in text),
            "drawable": len(drawn), "drawable_exact": sum(r[1] for r in drawn)}


def reanchor(pdf: Paper) -> Paper:
    "The PDF-derived paper with each gold evidence string replaced by the PDF paragraph (or caption) it matches best, when token F1 >= 0.9."
    paras = [norm_ws(x) for _, _, x in pdf.paragraphs] + ([pdf.abstract] if pdf.abstract else [])
    caps = [f.caption for f in pdf.floats]
    def anchor(ev: str) -> str:
        fl = ev.startswith(FLOAT_PREFIX)
        e, pool = (ev[len(FLOAT_PREFIX):], caps) if fl else (ev, paras)
        best = max(pool, key=lambda x: token_f1(x, e), default=None)
        return (FLOAT_PREFIX if fl else "") + best if best is not None and token_f1(best, e) >= 0.9 else ev
    qs = tuple(replace(q, answers=tuple(replace(a, evidence=tuple(map(anchor, a.evidence))) for a in q.answers)) for q in pdf.questions)
    return replace(pdf, questions=qs)


def recall(gold: list[Paper], read: list[Paper], config: str, cache: str) -> dict:
    "(b): evidence recall of the same retrieval on JSON-derived and on PDF-derived chunks (gold evidence mapped exactly, then re-anchored)."
    res = {}
    for name, papers in (("json", gold), ("pdf", read), ("pdf re-anchored", [reanchor(p) for p in read])):
        t = time.perf_counter()
        res[name] = measure_recall(QasperCorpus(papers, name), Retriever(config, cache_dir=cache), progress=False)
        r = res[name]
        print(f"(b) {name:15s} {r['config']} budget {r['budget']}: evidence recall all {r['evidence_recall']['all']} (n={r['n']['all']}), "
              f"text {r['evidence_recall']['text']} (n={r['n']['text']}), float {r['evidence_recall']['float']} (n={r['n']['float']}); "
              f"{r['n_questions']} questions, {time.perf_counter() - t:.0f} s")
    j, p, q = (res[k]["evidence_recall"]["all"] for k in ("json", "pdf", "pdf re-anchored"))
    print(f"    PDF / JSON evidence recall: {p / j:.3f} with exact evidence mapping, {q / j:.3f} re-anchored (goal >= 0.95)")
    for b in res["json"]["curve"]: print(f"    at {b} tokens: " + ", ".join(f"{k} {r['curve'][b]['all']}" for k, r in res.items()))
    return {"config": config, "n": res["json"]["n"]["all"], "json": j, "pdf": p, "pdf_reanchored": q,
            "ratio": round(p / j, 3), "ratio_reanchored": round(q / j, 3)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--typesetter", choices=("latex", "reportlab"), default="latex", help="pdflatex (default) or reportlab")
    ap.add_argument("--out", help="add this typesetter's numbers to this JSON file")
    ap.add_argument("--config", default="offline-2k", help="retrieval preset (default: offline-2k)")
    ap.add_argument("--cache", help="vector cache folder (default: a fresh temporary folder)")
    ap.add_argument("--font", help=f"reportlab's TrueType font (default: {DEJAVU} when present, else Times)")
    ap.add_argument("--limit", type=int, help="only the first N papers")
    ap.add_argument("--no-recall", action="store_true", help="structure and evidence paragraphs only (no retrieval)")
    a = ap.parse_args()
    font = Path(a.font) if a.font else DEJAVU if DEJAVU.exists() else None
    corpus, _ = load_corpus(str(shared_data_dir()/"original_format"))  # with the table bodies the shared data has, as the CLI loads it
    corpus = QasperCorpus(list(corpus)[:a.limit], corpus.source)
    what = "pdflatex, Latin Modern (T1)" if a.typesetter == "latex" else f"reportlab, font {font or 'Times (Latin-1)'}"
    print(f"python {platform.python_version()} | {len(corpus)} papers, {len(corpus.questions())} questions | {what}")
    with tempfile.TemporaryDirectory() as tmp:
        gold = list(corpus)
        read, t = round_trip(corpus, Path(tmp), font, a.typesetter)
        print(f"{t['pages']} pages; per paper median typeset {t['typeset_s']:.2f} s, read {t['read_s']:.2f} s")
        res = {"typesetter": what, **t, "structure": structure(gold, read),
               "evidence": evidence(gold, read, latex_settable if a.typesetter == "latex" else drawable(font))}
        if not a.no_recall: res["recall"] = recall(gold, read, a.config, a.cache or str(Path(tmp)/"cache"))
    if a.out:
        out = Path(a.out); done = json.loads(out.read_text()) if out.exists() else {}
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({**done, a.typesetter: res}, indent=1) + "\n")
        print(f"written: {out} ({a.typesetter})")


if __name__ == "__main__":
    main()
