"""Chunker invariants and evidence mapping on the real shared papers."""
import pytest
from qasper_rag.papers.chunking import ABSTRACT, ChunkedPaper, ChunkerConfig, QasperChunker, evidence_report


@pytest.fixture(scope="module")
def chunker():
    return QasperChunker()


@pytest.fixture(scope="module")
def chunked(corpus, chunker):
    return [ChunkedPaper(p, chunker(p)) for p in corpus]


def test_sizes_are_real(chunked, chunker):
    flat = [c for cp in chunked for c in cp.chunks]
    assert max(c.n_tokens for c in flat) <= 500
    assert all(chunker.tok.count(c.text) == c.n_tokens for c in flat)


def test_overlap_is_ten_percent(chunked):
    ov = [a.token_span[1] - b.token_span[0] for cp in chunked for a, b in zip(cp.chunks, cp.chunks[1:])
          if a.spans and b.spans and a.spans[0].section == b.spans[0].section]
    assert len(ov) > 50
    # 50 tokens (10% of 500), a few more where the cut moves back to the start of a long word
    assert min(ov) >= 50 and max(ov) <= 75 and sum(ov) / len(ov) < 55


def test_structure_of_a_paper(chunked):
    cp = next(cp for cp in chunked if cp.paper.id == "1909.00694")
    kinds = [c.kind for c in cp.chunks]
    assert kinds[0] == "abstract" and kinds.count("abstract") == 1
    assert kinds.count("table") == 5 and kinds.count("figure") == 1
    prefix = "Title: Minimally Supervised Learning of Affective Events Using Discourse Relations. Section: "
    assert all(c.text.startswith(prefix) for c in cp.chunks)
    for c in cp.chunks:  # never crosses a section boundary
        assert len({s.section for s in c.spans}) <= 1
        for s in c.spans:  # provenance points at the real text
            src = cp.paper.abstract if s.section == ABSTRACT else cp.paper.sections[s.section].paragraphs[s.paragraph]
            assert src[s.start:s.end].strip() in c.text


def test_ids_are_stable_and_readable(corpus, chunker):
    p = corpus.paper("1909.00694")
    a, b = chunker(p), QasperChunker()(p)
    assert [c.id for c in a] == [c.id for c in b]
    assert a[0].id == "1909.00694:abstract" and a[1].id == "1909.00694:s0c0"
    assert "1909.00694:table1" in {c.id for c in a}


def test_every_paragraph_and_caption_evidence_maps(chunked):
    rep = evidence_report(chunked)
    assert rep.float_evidence == rep.float_evidence_mapped > 0
    assert rep.text_evidence == rep.text_evidence_mapped > 0
    assert all(e["kind"] == "heading" for e in rep.exceptions)


def test_full_vs_partial_coverage(chunked):
    for cp in chunked:
        for i, j, text in cp.paper.paragraphs:
            loc = cp.locate(text)
            if not loc.full and len(loc.partial) >= 2:
                assert cp.reached(loc, loc.partial)
                assert not cp.reached(loc, loc.partial[:1])
                return
    pytest.fail("no paragraph split across chunks in the shared papers")


def test_evidence_strings_of_chunks_are_exact_paragraphs(chunked):
    cp = chunked[0]
    ids = [c.id for c in cp.chunks[1:3]]
    strings = cp.evidence_strings(ids)
    paras = {p for _, _, p in cp.paper.paragraphs}
    assert strings and all(s in paras for s in strings)


def test_smaller_limit(corpus):
    ch = QasperChunker(ChunkerConfig(max_tokens=200))
    cs = ch(corpus.paper("1909.00694"))
    assert max(c.n_tokens for c in cs) <= 200
    assert len(cs) > len(QasperChunker()(corpus.paper("1909.00694")))
