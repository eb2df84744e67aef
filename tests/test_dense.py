"""Dense retrieval: embedder contract, long-text modes, SPECTER2 loading, index, vector cache."""
import hashlib, json, re, shutil

import numpy as np
import pytest

from qasper_rag.retrieve import dense
from qasper_rag.papers.chunking import Chunk
from qasper_rag.retrieve.dense import (DenseIndex, Embedder, Specter2Embedder, VectorCache, build_index, index_name, l2_normalize,
                              load_embedder, specter2_document)


class BowEmbedder(Embedder):
    "Hashed bag of words over whitespace tokens: a real, deterministic embedder that counts the documents it embeds."
    def __init__(self, dim: int = 64, max_tokens: int = 512, long_text: str = "truncate", name: str | None = None):
        self.name, self.dim, self.max_tokens, self.long_text = name or f"bow{dim}", dim, max_tokens, long_text
        self.doc_texts = 0  # documents (or windows) embedded
        self.batches = 0

    def _offsets(self, text):
        return [m.span() for m in re.finditer(r"\S+", text)]

    def _embed(self, texts, query):
        if not query: self.doc_texts += len(texts); self.batches += 1
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            for a, b in self._offsets(t)[: self.max_tokens - self.n_special]:
                out[i, int(hashlib.sha1(t[a:b].lower().encode()).hexdigest(), 16) % self.dim] += 1.0
        return out


TEXTS = ["seed lexicon of positive and negative words", "the japanese web corpus has 100 million sentences",
         "results table of accuracy", "discourse relations propagate polarity"]


def chunks_of(texts, paper="0000.00001"):
    return [Chunk(f"{paper}:s0c{k}", paper, "text", "Intro", t, len(t.split()), k) for k, t in enumerate(texts)]


# --- the Embedder contract ---------------------------------------------------------------------

def test_encode_contract():
    e = BowEmbedder()
    e.batch_size = 3
    docs = [f"word{i} common" for i in range(10)] + [""]
    v = e.encode_documents(docs, progress=True)
    assert v.shape == (11, 64) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v[:10], axis=1), 1, atol=1e-6) and not v[10].any()
    assert e.batches == 4  # ceil(11 / 3)
    one_by_one = np.concatenate([e.encode_documents([d]) for d in docs])
    assert np.allclose(v, one_by_one)
    assert e.encode_query([]).shape == (0, 64) and e.encode_documents([]).shape == (0, 64)
    q = e.encode_query(["seed lexicon"])
    assert q.dtype == np.float32 and np.isclose(np.linalg.norm(q), 1)


def test_l2_normalize():
    v = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert v.dtype == np.float32 and np.allclose(v, [[0.6, 0.8], [0, 0]])


def test_mean_mode_windows_fit_and_average():
    e = BowEmbedder(max_tokens=22, long_text="mean")  # 20 words per window
    doc = " ".join(f"w{i}" for i in range(53))
    wins = e.windows(doc)
    assert all(len(w.split()) <= 20 for w in wins) and len(wins) >= 3
    assert wins[0].split()[0] == "w0" and wins[-1].split()[-1] == "w52"
    seen = {w for win in wins for w in win.split()}
    assert seen == set(doc.split())  # the whole text is read
    v = e.encode_documents([doc, "short text"])
    expect = l2_normalize(l2_normalize(e._embed(wins, False)).mean(0))
    assert np.allclose(v[0], expect, atol=1e-6)
    trunc = BowEmbedder(max_tokens=22)
    assert np.allclose(v[1], trunc.encode_documents(["short text"])[0])  # a text that fits: the same vector
    assert not np.allclose(v[0], trunc.encode_documents([doc])[0])  # truncate reads only the first 20 words
    with pytest.raises(ValueError, match="truncate"):
        dense._check_mode("max")


def test_windows_start_at_words():
    e = BowEmbedder(max_tokens=6)  # 4 tokens per window
    e._offsets = lambda t: [(0, 3), (3, 6), (7, 10), (10, 13), (14, 17), (18, 21), (21, 24)]  # subword-like pieces
    text = "abcdef ghijkl mno pqrstu"
    for w in e.windows(text):
        assert text.index(w) == 0 or text[text.index(w) - 1] == " "


# --- MiniLM ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def minilm():
    return load_embedder("minilm")


def test_minilm(minilm):
    assert (minilm.dim, minilm.max_tokens, minilm.long_text) == (384, 256, "truncate")
    q = minilm.encode_query(["What is the seed lexicon?", "How big is the Japanese data?"])
    assert q.shape == (2, 384) and q.dtype == np.float32 and np.allclose(np.linalg.norm(q, axis=1), 1, atol=1e-5)
    assert np.allclose(minilm.encode_query(["What is the seed lexicon?"])[0], q[0], atol=1e-6)


def test_minilm_mean_mode(minilm):
    mean = load_embedder("minilm", long_text="mean")
    long = " ".join(["The seed lexicon has fifteen positive words."] * 40 + ["The Japanese corpus has 100 million sentences."] * 40)
    wins = mean.windows(long)
    assert len(wins) >= 3 and all(len(mean._offsets(w)) <= 254 for w in wins)
    v_mean, v_trunc = mean.encode_documents([long, "short one"]), minilm.encode_documents([long, "short one"])
    assert np.allclose(v_mean[1], v_trunc[1], atol=1e-5)
    assert float(v_mean[0] @ v_trunc[0]) < 0.99
    # the tail (the corpus sentences) shapes the mean vector only
    q = minilm.encode_query(["How large is the Japanese corpus?"])[0]
    assert v_mean[0] @ q > v_trunc[0] @ q


# --- model files (moved to qasper_rag.core.models, tested in tests/test_models.py) ---------------------

def test_model_file_names_still_importable_from_dense():
    "Users import these from qasper_rag.retrieve.dense: they are qasper_rag.core.models' own objects."
    from qasper_rag.core import models
    names = ["ModelPartsError", "reassemble_parts", "default_model_dir", "mpnet_part_files", "mpnet_path", "MPNET_PARTS",
             "MPNET_SHA256", "MPNET_PIP"]
    assert all(getattr(dense, n) is getattr(models, n) for n in names)
    assert set(names) <= set(dense.__all__)


# --- SPECTER2 loading path on a tiny BERT + adapter -----------------------------------------------

@pytest.fixture(scope="module")
def tiny_specter(tmp_path_factory):
    import torch
    from adapters import AutoAdapterModel
    from transformers import BertConfig, BertModel, BertTokenizerFast
    d = tmp_path_factory.mktemp("specter")
    words = "title section affective events seed lexicon japanese data we use the a of is what how big . corpus".split()
    (d / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(words) + 5, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=37, max_position_embeddings=64, initializer_range=0.5)
    BertModel(cfg).save_pretrained(d / "base")
    BertTokenizerFast(vocab_file=str(d / "vocab.txt")).save_pretrained(d / "base")
    m = AutoAdapterModel.from_pretrained(str(d / "base"))
    m.add_adapter("proximity", config="seq_bn")
    with torch.no_grad():
        for n, p in m.named_parameters():
            if ".adapters." in n: p.normal_(0, 0.5)
    m.save_adapter(str(d / "adapter"), "proximity")
    return d / "base", d / "adapter"


DOCS = ["Title: Affective events. Section: Seed lexicon. We use the seed lexicon.", "how big is the japanese data"]


def test_specter2_tiny(tiny_specter):
    base, adapter = tiny_specter
    sp = load_embedder("specter2", base=base, adapter=adapter)
    assert isinstance(sp, Specter2Embedder) and (sp.dim, sp.max_tokens) == (32, 64)
    assert "proximity" in str(sp.model.active_adapters)
    v = sp.encode_documents(DOCS)
    assert v.shape == (2, 32) and v.dtype == np.float32 and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert np.allclose(Specter2Embedder(base, adapter).encode_documents(DOCS), v, atol=1e-6)  # deterministic
    plain = Specter2Embedder(base, None)
    assert np.abs(plain.encode_documents(DOCS) - v).max() > 1e-2  # the adapter is active
    # documents are read as title[SEP]text, queries as they are
    assert np.allclose(sp.encode_query([specter2_document(DOCS[0])])[0], v[0], atol=1e-6)
    assert not np.allclose(sp.encode_query([DOCS[0]])[0], v[0], atol=1e-3)
    assert np.allclose(sp.encode_query([DOCS[1]])[0], v[1], atol=1e-6)


def test_specter2_cls_pooling(tiny_specter):
    import torch
    from transformers import AutoTokenizer, BertModel
    base, _ = tiny_specter
    sp = Specter2Embedder(base, None)
    tok, bert = AutoTokenizer.from_pretrained(str(base)), BertModel.from_pretrained(str(base)).eval()
    with torch.no_grad():
        cls = bert(**tok([DOCS[1]], return_tensors="pt")).last_hidden_state[:, 0].numpy()
    assert np.allclose(sp.encode_query([DOCS[1]]), l2_normalize(cls), atol=1e-5)


def test_specter2_long_text(tiny_specter):
    base, adapter = tiny_specter
    sp = Specter2Embedder(base, adapter, long_text="mean")
    long = "Title: Affective events. Section: Seed lexicon. " + "we use the seed lexicon . " * 30
    assert len(sp.windows(long)) >= 3 and all(len(sp._offsets(w)) <= 62 for w in sp.windows(long))
    v = sp.encode_documents([long])
    assert v.shape == (1, 32) and np.isclose(np.linalg.norm(v), 1, atol=1e-5)


def test_specter2_document():
    assert specter2_document("Title: A. B. Section: Intro ::: Setup. Text here.", "</s>") == "A. B</s>Intro ::: Setup. Text here."
    assert specter2_document("plain question?") == "plain question?"


# --- DenseIndex -------------------------------------------------------------------------------------

def test_dense_index_search_and_scores():
    e = BowEmbedder()
    idx = DenseIndex(e, "t500").index(TEXTS, ["p:a", "p:b", "p:c", "q:a"])
    assert len(idx) == 4 and idx.vectors.dtype == np.float32
    hits = idx.search("seed lexicon words", k=2)
    assert hits[0][0] == "p:a" and len(hits) == 2 and hits[0][1] >= hits[1][1]
    s = idx.scores("seed lexicon words")
    assert s.shape == (4,) and np.isclose(s[0], hits[0][1], atol=1e-6)
    assert np.allclose(idx.scores("seed lexicon words", ids=["q:a", "p:a"]), s[[3, 0]])
    sub = idx.search("polarity", k=10, ids=["p:b", "q:a"])
    assert [i for i, _ in sub] == ["q:a", "p:b"]
    qv = e.encode_query(["japanese corpus"])[0]
    assert idx.search(qv, 1)[0][0] == "p:b" and idx.search(qv * 5, 1)[0][0] == "p:b"  # vectors are normalised
    assert np.isclose(idx.search(qv * 5, 1)[0][1], idx.search(qv, 1)[0][1], atol=1e-6)
    assert len(idx.search("x", k=100)) == 4 and idx.search("x", k=0) == []
    assert DenseIndex(e).search("anything") == []
    with pytest.raises(KeyError, match="not in the index"): idx.scores("x", ids=["nope"])
    with pytest.raises(ValueError, match="duplicate"): idx.add(e.encode_documents(["x"]), ["p:a"])
    with pytest.raises(ValueError, match="dim"): idx.search(np.ones(3))
    with pytest.raises(ValueError, match="ids"): idx.index(["a"], ["x", "y"])


def test_dense_index_save_load(tmp_path):
    e = BowEmbedder(long_text="mean")
    idx = DenseIndex(e, "t500-o10-minilm").index(TEXTS, ["p:a", "p:b", "p:c", "q:a"])
    idx.save(tmp_path / "i")
    params = json.loads((tmp_path / "i" / "params.json").read_text())
    files = params.pop("files")  # each file's size and SHA-256, checked before the index is used
    assert params == {"version": 1, "embedder": "bow64", "dim": 64, "long_text": "mean", "chunker": "t500-o10-minilm", "count": 4}
    assert sorted(files) == ["ids.json", "vectors.npy"] and files["vectors.npy"]["bytes"] == (tmp_path / "i" / "vectors.npy").stat().st_size
    assert json.loads((tmp_path / "i" / "ids.json").read_text()) == ["p:a", "p:b", "p:c", "q:a"]
    assert np.load(tmp_path / "i" / "vectors.npy", allow_pickle=False).shape == (4, 64)
    back = DenseIndex.load(tmp_path / "i", e)
    assert back.ids == idx.ids and np.array_equal(back.vectors, idx.vectors)
    assert back.search("japanese corpus", 3) == idx.search("japanese corpus", 3)
    bare = DenseIndex.load(tmp_path / "i")
    with pytest.raises(ValueError, match="needs an embedder"): bare.search("japanese corpus")
    assert bare.search(e.encode_query(["japanese corpus"])[0], 1)[0][0] == "p:b"
    with pytest.raises(ValueError, match="was built with"): DenseIndex.load(tmp_path / "i", BowEmbedder())  # other mode
    with pytest.raises(ValueError, match="was built with"): DenseIndex.load(tmp_path / "i", BowEmbedder(32, long_text="mean"))
    (tmp_path / "i" / "params.json").write_text(json.dumps({**params, "version": 99}))
    with pytest.raises(ValueError, match="version"): DenseIndex.load(tmp_path / "i")
    with pytest.raises(FileNotFoundError, match="params.json"): DenseIndex.load(tmp_path / "nothing")


# --- vector cache and index folders -----------------------------------------------------------------

def test_second_build_computes_nothing(tmp_path):
    e = BowEmbedder()
    a = build_index(e, chunks_of(TEXTS), "t500", tmp_path)
    assert e.doc_texts == 4 and (a.folder / "params.json").exists()
    b = build_index(e, chunks_of(TEXTS), "t500", tmp_path)  # the saved index
    assert e.doc_texts == 4 and b.folder == a.folder and b.search("seed", 2) == a.search("seed", 2)
    shutil.rmtree(a.folder)  # the index is gone, the vectors are cached
    e2 = BowEmbedder()
    c = build_index(e2, chunks_of(TEXTS), "t500", tmp_path)
    assert e2.doc_texts == 0 and np.array_equal(c.vectors, a.vectors)


def test_changed_text_recomputes_only_it(tmp_path):
    e, cache = BowEmbedder(), VectorCache(tmp_path / "vec")
    build_index(e, chunks_of(TEXTS), "t500", tmp_path, cache)
    assert (e.doc_texts, cache.computed, len(cache)) == (4, 4, 4)
    changed = build_index(e, chunks_of(TEXTS[:3] + ["discourse relations propagate polarity strongly"]), "t500", tmp_path, cache)
    assert (e.doc_texts, cache.computed, len(cache)) == (5, 1, 5)
    fresh = BowEmbedder().encode_documents(["discourse relations propagate polarity strongly"])[0]
    assert np.allclose(changed.vectors[3], fresh)


def test_cache_keys_model_and_mode(tmp_path):
    cache = VectorCache(tmp_path)
    a, b = BowEmbedder(64), BowEmbedder(64, name="other-model")
    va = cache.encode(a, TEXTS)
    assert cache.computed == 4
    cache.encode(b, TEXTS)
    assert cache.computed == 4 and b.doc_texts == 4  # another model never reuses a vector
    a.long_text = "mean"
    cache.encode(a, TEXTS)
    assert cache.computed == 4  # another long-text mode neither
    a.long_text = "truncate"
    again = cache.encode(a, TEXTS + TEXTS[:1])  # duplicates are embedded once, read from the cache here
    assert cache.computed == 0 and np.array_equal(again[:4], va) and np.array_equal(again[4], va[0])
    assert len(cache) == 12
    cache.close()
    reopened = VectorCache(tmp_path)
    c = BowEmbedder(64)
    assert np.array_equal(reopened.encode(c, TEXTS), va) and c.doc_texts == 0  # on disk
    assert reopened.encode(c, []).shape == (0, 64)


def test_index_folder_name_follows_settings():
    e = BowEmbedder()
    ids, texts = ["a:1", "a:2"], TEXTS[:2]
    n = index_name(e, "t500-o10-minilm", ids, texts)
    assert re.fullmatch(r"bow64-truncate-t500_o10_minilm-[0-9a-f]{12}", n)
    assert n == index_name(BowEmbedder(), "t500-o10-minilm", ids, texts)
    others = {index_name(e, "t400-o10-minilm", ids, texts), index_name(BowEmbedder(32), "t500-o10-minilm", ids, texts),
              index_name(BowEmbedder(long_text="mean"), "t500-o10-minilm", ids, texts),
              index_name(BowEmbedder(max_tokens=128), "t500-o10-minilm", ids, texts),
              index_name(e, "t500-o10-minilm", ids, [texts[0], texts[1] + "!"]), index_name(e, "t500-o10-minilm", ids[:1], texts[:1])}
    assert n not in others and len(others) == 6


def test_real_paper_with_minilm(minilm, corpus, tmp_path):
    from qasper_rag.papers.chunking import ChunkedPaper, QasperChunker
    chunker = QasperChunker()
    paper = corpus.paper("1909.00694")
    chunks = chunker(paper)
    idx = build_index(minilm, chunks, chunker.config.key(), tmp_path)
    assert len(idx) == len(chunks) and idx.folder.name.startswith("minilm-truncate-t500_o10_minilm-")
    cp = ChunkedPaper(paper, chunks)
    q = next(q for q in paper.questions if q.text == "How big is the Japanese data?")
    gold = {i for e in q.evidence for i in cp.locate(e).full}
    assert idx.search(q.text, 1)[0][0] in gold
    other = corpus.paper(next(p for p in corpus.papers if p != paper.id))
    idx2 = build_index(minilm, chunks + chunker(other), chunker.config.key(), tmp_path)
    mine = [c.id for c in chunks]
    assert {i for i, _ in idx2.search(q.text, 5, ids=mine)} <= set(mine)
    assert np.allclose(idx2.scores(q.text, ids=mine), idx.scores(q.text), atol=1e-6)
