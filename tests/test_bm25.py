"""BM25: number-preserving tokens, backend parity, save/load, and the number problem on a real paper."""
import json
import numpy as np
import pytest
from qasper_rag.retrieve.bm25 import STOPWORDS, BM25Index, bm25_tokenize
from qasper_rag.papers.chunking import ChunkedPaper, QasperChunker

BACKENDS, METHODS = ("bm25s", "rank_bm25"), ("lucene", "robertson")
DOCS = ["BLEU-4 of 27.3 on WMT 2014", "ROUGE-L and BLEU scores", "We tune the learning rate 1e-5 for 3 epochs",
        "macro F1 of 0.83 on the test set", "the test set has 2019 tweets, BLEU not reported"]
IDS = ["a", "b", "c", "d", "e"]
QUERIES = ["BLEU-4", "BLEU", "27.3", "1e-5 learning rate", "F1 0.83", "2019", "macro F1 macro", "test set"]


def test_stopwords_are_nltk_english():
    from bm25s.stopwords import STOPWORDS_EN_PLUS  # bm25s ships NLTK's English list
    assert isinstance(STOPWORDS, frozenset) and len(STOPWORDS) == 179
    assert STOPWORDS == frozenset(STOPWORDS_EN_PLUS)


@pytest.mark.parametrize("text,tokens", [
    ("We reach 87.3 accuracy.", ["reach", "87.3", "accuraci"]),
    ("a 4.5% gain", ["4.5", "gain"]),
    ("BLEU-4", ["bleu-4", "bleu", "4"]),
    ("published in 2019", ["publish", "2019"]),
    ("lr 1e-5 and 2.5E-3", ["lr", "1e-5", "2.5e-3"]),
    ("macro F1 of 0.83", ["macro", "f1", "0.83"]),
    ("DBMDZ (.520) on 1,000 reviews", ["dbmdz", "0.520", "1000", "review"]),
    ("GPT-2 and word2vec, v1.2", ["gpt-2", "gpt", "2", "word2vec", "v1.2"]),
    ("It doesn't, the model's state-of-the-art.", ["model", "state-of-the-art", "state", "art"]),
    ("", []),
    ("the of and", []),
])
def test_tokens(text, tokens):
    assert bm25_tokenize(text) == tokens


def test_bleu4_query_and_bleu_query_match_a_bleu4_passage():
    passage = set(bm25_tokenize("We report BLEU-4 on the test set."))
    assert set(bm25_tokenize("BLEU-4")) <= passage and set(bm25_tokenize("BLEU")) <= passage


@pytest.fixture(scope="module")
def small():
    return {(be, m): BM25Index(backend=be, method=m).index(DOCS, IDS) for be in BACKENDS for m in METHODS}


@pytest.mark.parametrize("method", METHODS)
def test_backends_agree_on_a_small_corpus(small, method):
    for q in QUERIES:
        np.testing.assert_allclose(small["bm25s", method].scores(q), small["rank_bm25", method].scores(q), atol=1e-5)
        assert [i for i, _ in small["bm25s", method].search(q, 3)] == [i for i, _ in small["rank_bm25", method].search(q, 3)]


def test_scores_follow_the_formula(small):
    n_docs, df, tf, dl = 5, 1, 1, len(bm25_tokenize(DOCS[2]))
    avgdl = np.mean([len(bm25_tokenize(d)) for d in DOCS])
    tfc = tf * 2.5 / (tf + 1.5 * (1 - 0.75 + 0.75 * dl / avgdl))
    idf = {"lucene": np.log(1 + (n_docs - df + 0.5) / (df + 0.5)), "robertson": np.log((n_docs - df + 0.5) / (df + 0.5))}
    for (_, m), idx in small.items():
        assert idx.scores("1e-5")[2] == pytest.approx(idf[m] * tfc, abs=1e-5)


def test_search_order_numbers_and_idf(small):
    for be in BACKENDS:
        assert small[be, "lucene"].search("BLEU-4", 1)[0][0] == "a"
        assert sorted(i for i, _ in small[be, "lucene"].search("BLEU", 5)) == ["a", "b", "e"]
        assert small[be, "robertson"].search("BLEU", 5) == []  # in 3 of 5 docs: Robertson IDF 0
        assert small[be, "lucene"].search("0.83", 5)[0][0] == "d"
        assert small[be, "lucene"].search("1e-5", 5)[0][0] == "c"
    res = small["bm25s", "lucene"].search("BLEU test", 5)
    assert [s for _, s in res] == sorted((s for _, s in res), reverse=True)


def test_ties_keep_corpus_order():
    idx = BM25Index().index(["alpha beta", "gamma", "alpha beta", "delta", "epsilon"], ["x", "y", "z", "u", "v"])
    assert [i for i, _ in idx.search("alpha", 5)] == ["x", "z"]


def test_unknown_terms_and_bad_input(small):
    for idx in small.values():
        assert idx.search("zebra quokka") == [] and idx.search("the of and") == [] and idx.search("BLEU", 0) == []
        assert np.array_equal(idx.scores("zebra quokka"), np.zeros(5))
    for be in BACKENDS:
        with pytest.raises(ValueError, match="empty corpus"): BM25Index(backend=be).index([], [])
    with pytest.raises(ValueError, match="no text of the corpus"): BM25Index().index(["the", "of"], ["a", "b"])
    with pytest.raises(ValueError, match="1 texts but 2 ids"): BM25Index().index(["a b"], ["a", "b"])
    with pytest.raises(ValueError, match="unique"): BM25Index().index(["x", "y"], ["a", "a"])
    with pytest.raises(ValueError, match="unknown backend"): BM25Index(backend="lucene")
    with pytest.raises(ValueError, match="unknown method"): BM25Index(method="atire")
    with pytest.raises(ValueError, match="call .index"): BM25Index().search("x")


@pytest.mark.parametrize("method", METHODS)
def test_save_and_load(small, method, tmp_path):
    small["bm25s", method].save(tmp_path)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["ids.json", "offsets.npy", "params.json", "tokens.npy", "vocab.json"]
    cfg = json.loads((tmp_path/"params.json").read_text())
    assert (cfg["backend"], cfg["method"], cfg["k1"], cfg["b"]) == ("bm25s", method, 1.5, 0.75) and "version" in " ".join(cfg)
    back, other = BM25Index.load(tmp_path), BM25Index.load(tmp_path, backend="rank_bm25")
    assert back.ids == IDS and (back.backend, other.backend, other.method) == ("bm25s", "rank_bm25", method)
    for q in QUERIES:
        assert np.array_equal(back.scores(q), small["bm25s", method].scores(q))
        np.testing.assert_allclose(other.scores(q), small["rank_bm25", method].scores(q), atol=1e-12)
    (tmp_path/"params.json").write_text(json.dumps({**cfg, "tokenizer_version": 0}))
    with pytest.raises(ValueError, match="rebuild the index"): BM25Index.load(tmp_path)
    with pytest.raises(FileNotFoundError): BM25Index.load(tmp_path/"nothing")


@pytest.fixture(scope="module")
def chunker():
    return QasperChunker()


@pytest.mark.parametrize("method", METHODS)
def test_backends_agree_on_a_real_paper(corpus, chunker, method):
    paper = corpus.paper("1909.00694")
    cs = chunker(paper)
    a, b = [BM25Index(backend=be, method=method).index([c.text for c in cs], [c.id for c in cs]) for be in BACKENDS]
    for q in [q.text for q in paper.questions] + ["Table 2", "BiGRU 2019", "0.5 accuracy", "1,000,000 events"]:
        np.testing.assert_allclose(a.scores(q), b.scores(q), atol=1e-5)
        assert [i for i, _ in a.search(q, 10)] == [i for i, _ in b.search(q, 10)]


def test_numbers_find_the_gold_chunk_of_a_real_paper(corpus, chunker):
    paper = corpus.paper("2003.07723")
    chunks = chunker(paper)
    cp = ChunkedPaper(paper, chunks)
    question = paper.questions[0]
    assert question.text == "Does the paper report macro F1?"
    gold = {i for ev in question.evidence for loc in [cp.locate(ev)] for i in loc.full + loc.partial}
    idx = BM25Index().index([c.text for c in chunks], [c.id for c in chunks])
    assert idx.search(question.text, 1)[0][0] in gold
    assert idx.search(".520", 1)[0][0] == "2003.07723:s18c1"  # the best model's score, written without its zero
