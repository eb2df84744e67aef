"""Late interaction: golden MaxSim values, the ColBERT layout on a tiny checkpoint built here, the MiniLM stand-in."""
import numpy as np
import pytest
import torch
from qasper_rag.papers.chunking import ChunkedPaper, QasperChunker
from qasper_rag.retrieve.late_interaction import (STANDIN_NAME, ColBERTScorer, LateInteractionScorer, RerankResult,
                                         TokenMaxSimScorer, load_colbert_weights, load_late_interaction, maxsim,
                                         maxsim_batch, rank_by_score, text_key)

# ---------------------------------------------------------------- MaxSim, by hand
Q = np.array([[1, 0], [0, 1]], dtype=np.float32)
D = np.array([[0.6, 0.8], [1, 0], [0, -1]], dtype=np.float32)


def test_maxsim_golden():
    assert maxsim(Q, D) == pytest.approx(1.0 + 0.8)
    assert maxsim(Q, D, d_mask=[True, False, True]) == pytest.approx(0.6 + 0.8)
    assert maxsim(Q, D[2:]) == pytest.approx(0.0 - 1.0)
    assert maxsim(Q, D[:0]) == 0.0
    # three query tokens, one of them repeated: it counts twice
    assert maxsim(np.array([[1, 0], [1, 0], [0, 1]]), D) == pytest.approx(1 + 1 + 0.8)


def test_maxsim_torch_and_batch():
    assert maxsim(torch.tensor(Q), torch.tensor(D), torch.tensor([True, False, True])) == pytest.approx(1.4)
    np.testing.assert_allclose(maxsim_batch(Q, [D, D[:1], D[:0], torch.tensor(D)]), [1.8, 1.4, 0.0, 1.8], rtol=1e-6)
    np.testing.assert_allclose(maxsim_batch(Q, [D, D], masks=[None, [False, True, True]]), [1.8, 1.0], rtol=1e-6)
    rng = np.random.default_rng(0)
    q, docs = rng.normal(size=(5, 4)), [rng.normal(size=(n, 4)) for n in (1, 7, 3)]
    np.testing.assert_allclose(maxsim_batch(q, docs), [maxsim(q, d) for d in docs], rtol=1e-5)
    assert maxsim_batch(q, []).shape == (0,)


def test_maxsim_errors():
    with pytest.raises(ValueError, match="dimension mismatch"): maxsim(Q, np.ones((2, 3)))
    with pytest.raises(ValueError, match="2-d"): maxsim(Q[0], D)
    with pytest.raises(ValueError, match="dimension mismatch"): maxsim_batch(Q, [D, np.ones((1, 3))])


def test_rank_by_score():
    rr = rank_by_score(["a", "b", "c"], [0.2, 0.7, 0.7])
    assert rr == [RerankResult("b", 0.7, 1), RerankResult("c", 0.7, 2), RerankResult("a", 0.2, 3)]
    assert [r.id for r in rank_by_score(["a", "b", "c"], np.array([3, 1, 2]), k=2)] == ["a", "c"]
    with pytest.raises(ValueError, match="2 ids but 3 scores"): rank_by_score(["a", "b"], [1, 2, 3])
    with pytest.raises(Exception): rr[0].score = 1.0  # frozen


# ---------------------------------------------------------------- the base class: batching and cache
class Words(LateInteractionScorer):
    "One fixed unit vector per word; records its batch sizes."
    name = "words"

    def __init__(self, **kw):
        super().__init__(**kw)
        self.batches = []

    def vec(self, t):
        v = np.stack([np.random.default_rng(sum(map(ord, w))).normal(size=6) for w in t.split()])
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    def encode_query(self, query): return self.vec(query)

    def _encode_batch(self, texts):
        self.batches.append(len(texts))
        return [self.vec(t) for t in texts]


def test_batches_cache_and_rerank():
    s = Words(batch_size=2, cache_size=10)
    ps = ["seed lexicon", "tokyo weather", "graph nets", "seed lexicon", "a b c"]
    sc = s.score("seed lexicon", ps)
    assert s.batches == [2, 2] and s.encoded == 4  # the repeated text is encoded once
    np.testing.assert_allclose(sc, [maxsim(s.vec("seed lexicon"), s.vec(p)) for p in ps], rtol=1e-6)
    assert sc[0] == pytest.approx(2.0)
    s.score("tokyo lexicon", ps[:3])
    assert s.encoded == 4  # all cached
    assert text_key("seed lexicon") in s._cache
    rr = s.rerank("seed lexicon", ["p0", "p1", "p2", "p3", "p4"], ps, k=3)
    assert [r.rank for r in rr] == [1, 2, 3] and {rr[0].id, rr[1].id} == {"p0", "p3"}
    with pytest.raises(ValueError, match="2 ids but 1 passages"): s.rerank("q", ["a", "b"], ["x"])


def test_cache_is_bounded_and_optional():
    s = Words(batch_size=8, cache_size=2)
    s.score("a", ["a", "b", "c"])
    assert len(s._cache) == 2
    off = Words(cache_size=0)
    off.score("a", ["a", "b"]); off.score("a", ["a", "b"])
    assert off.encoded == 4 and not off._cache


# ---------------------------------------------------------------- ColBERT on a tiny checkpoint of the real layout
SPECIAL = ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = "the seed lexicon of positive and negative predicates weather in tokyo is rainy , . ?".split()
VOCAB = {w: i for i, w in enumerate(SPECIAL + WORDS)}
PAD, Qm, Dm, UNK, CLS, SEP, MASK = range(7)
PUNCT = {VOCAB[","], VOCAB["."], VOCAB["?"]}


def build_tiny_colbert(folder, fmt="safetensors", seed=0):
    "BERT (hidden 32, 2 layers, 2 heads) + linear 32->8, keys `bert.*` + `linear.weight`, as HF_ColBERT saves them."
    from transformers import BertConfig, BertModel, BertTokenizerFast
    (folder / "vocab.txt").write_text("\n".join(SPECIAL + WORDS) + "\n")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True).save_pretrained(folder)
    cfg = BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    cfg.architectures = ["HF_ColBERT"]
    cfg.save_pretrained(folder)
    torch.manual_seed(seed)
    bert, linear = BertModel(cfg), torch.nn.Linear(32, 8, bias=False)
    sd = {**{f"bert.{k}": v.contiguous() for k, v in bert.state_dict().items()}, "linear.weight": linear.weight.detach()}
    if fmt == "safetensors":
        from safetensors.torch import save_file
        save_file(sd, str(folder / "model.safetensors"))
    else:
        torch.save(sd, folder / "pytorch_model.bin")
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_colbert(tmp_path_factory.mktemp("tiny_colbert"))


@pytest.fixture(scope="module")
def colbert(tiny):
    return ColBERTScorer(tiny)


def test_checkpoint_keys_are_the_hf_colbert_layout(tiny):
    from safetensors import safe_open
    with safe_open(str(tiny / "model.safetensors"), "pt") as f: keys = set(f.keys())
    assert "linear.weight" in keys and "bert.embeddings.word_embeddings.weight" in keys
    assert all(k == "linear.weight" or k.startswith("bert.") for k in keys)
    bert, linear = load_colbert_weights(tiny)
    assert linear.weight.shape == (8, 32) and linear.bias is None and bert.config.hidden_size == 32


def test_query_tokens(colbert):
    ids, att = colbert.query_ids(["The seed lexicon?", "tokyo"])
    assert ids.shape == att.shape == (2, 32)
    assert ids[0, :7].tolist() == [CLS, Qm, VOCAB["the"], VOCAB["seed"], VOCAB["lexicon"], VOCAB["?"], SEP]
    assert set(ids[0, 7:].tolist()) == {MASK}  # [MASK] augmentation, never [PAD]
    assert att[0].tolist() == [1] * 7 + [0] * 25  # colbertv2.0: attend_to_mask_tokens = False
    assert ids[1, :4].tolist() == [CLS, Qm, VOCAB["tokyo"], SEP]
    long_ids, _ = colbert.query_ids([" ".join(["seed"] * 50)])
    assert long_ids.shape == (1, 32) and long_ids[0, -1] == SEP  # truncated to query_maxlen
    qv = colbert.encode_query("The seed lexicon?")
    assert qv.shape == (32, 8)
    np.testing.assert_allclose(np.linalg.norm(qv, axis=1), 1, rtol=1e-5)


def test_attend_to_mask_tokens(tiny):
    s = ColBERTScorer(tiny, attend_to_mask_tokens=True)
    assert s.query_ids(["seed"])[1].tolist() == [[1] * 32]
    assert not np.allclose(s.encode_query("seed"), ColBERTScorer(tiny).encode_query("seed"))


def test_doc_tokens_truncation_and_punctuation(colbert, tiny):
    docs = ["The seed lexicon .", "weather in tokyo is rainy , rainy"]
    ids, att = colbert.doc_ids(docs)
    assert ids.tolist() == [[CLS, Dm, 7, 8, 9, VOCAB["."], SEP, PAD, PAD, PAD],
                            [CLS, Dm, 15, 16, 17, 18, 19, VOCAB[","], 19, SEP]]
    assert att[0].tolist() == [1] * 7 + [0] * 3
    dv = colbert.encode_passages(docs)
    assert [v.shape for v in dv] == [(6, 8), (9, 8)]  # padding and punctuation dropped, [CLS] [D] [SEP] kept
    np.testing.assert_allclose(np.linalg.norm(np.concatenate(dv), axis=1), 1, rtol=1e-5)
    short = ColBERTScorer(tiny, doc_maxlen=6)
    assert short.doc_ids(["weather in tokyo is rainy"])[0].tolist() == [[CLS, Dm, 15, 16, 17, SEP]]


def test_score_equals_manual_maxsim(colbert, tiny):
    query, docs = "the seed lexicon ?", ["the seed lexicon of positive predicates .", "weather in tokyo is rainy", ""]
    bert, linear = load_colbert_weights(tiny)  # an independent copy of the model

    def vecs(ids, att):
        with torch.no_grad():
            return torch.nn.functional.normalize(linear(bert(input_ids=ids, attention_mask=att).last_hidden_state), dim=-1)
    qv = vecs(*colbert.query_ids([query]))[0]
    ids, att = colbert.doc_ids(docs)
    dv = vecs(ids, att)
    manual = []
    for i in range(len(docs)):
        keep = [a == 1 and t not in PUNCT for t, a in zip(ids[i].tolist(), att[i].tolist())]
        sims = qv @ dv[i][torch.tensor(keep)].T  # [32, kept doc tokens]
        manual.append(sum(float(sims[j].max()) for j in range(32)))
    got = colbert.score(query, docs)
    np.testing.assert_allclose(got, manual, rtol=1e-5)
    np.testing.assert_allclose(colbert.score(query, docs), got)  # cached: same
    fresh = ColBERTScorer(tiny, cache_size=0)
    np.testing.assert_allclose(fresh.score(query, docs), got, rtol=1e-6)  # deterministic across instances
    np.testing.assert_allclose(fresh.score(query, docs[::-1]), got[::-1], rtol=1e-6)  # batch order does not matter
    rr = colbert.rerank(query, ["a", "b", "c"], docs)
    assert [r.id for r in rr] == [["a", "b", "c"][i] for i in np.argsort(-got, kind="stable")]


def test_pytorch_model_bin_and_load_by_path(tmp_path, colbert):
    d = build_tiny_colbert(tmp_path, fmt="bin")
    assert not (d / "model.safetensors").exists()
    s = load_late_interaction(str(d))
    assert isinstance(s, ColBERTScorer) and s.name == f"colbert:{d.name}"
    np.testing.assert_allclose(s.score("seed", ["the seed lexicon"]), colbert.score("seed", ["the seed lexicon"]), rtol=1e-6)


def test_not_a_colbert_checkpoint(tmp_path):
    from safetensors.torch import load_file, save_file
    d = build_tiny_colbert(tmp_path)
    sd = load_file(str(d / "model.safetensors"))
    save_file({k: v for k, v in sd.items() if k != "linear.weight"}, str(d / "model.safetensors"))
    with pytest.raises(ValueError, match="linear.weight"): ColBERTScorer(d)
    (d / "model.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="no model.safetensors or pytorch_model.bin"): load_colbert_weights(d)


def test_load_by_name_offline(monkeypatch):
    import huggingface_hub

    def offline(*a, **k): raise ConnectionError("no network")
    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    with pytest.raises(RuntimeError, match="colbert-ir/colbertv2.0.*minilm-maxsim"): load_late_interaction("colbertv2")
    with pytest.raises(ValueError, match="unknown late-interaction model"): load_late_interaction("colbert-small")


# ---------------------------------------------------------------- the MiniLM stand-in
@pytest.fixture(scope="module")
def standin():
    return load_late_interaction("minilm-maxsim")


def test_standin_name_and_tokens(standin):
    assert isinstance(standin, TokenMaxSimScorer) and standin.name == STANDIN_NAME and "not ColBERT" in standin.name
    assert standin.window == 256
    qv = standin.encode_query("What is the seed lexicon?")
    assert qv.shape == (6, 384)  # what is the seed lexi ##con: no [CLS], [SEP], "?"
    np.testing.assert_allclose(np.linalg.norm(qv, axis=1), 1, rtol=1e-5)


def test_standin_windows(standin):
    text = "alpha " * 300 + "lexicon " + "beta " * 200  # 502 tokens
    wins = standin.windows(text)
    assert [len(w) for w in wins] == [256, 250] and all(w[0] == 101 and w[-1] == 102 for w in wins)
    assert standin.encode_passages([text])[0].shape == (502, 384)
    s = standin.score("lexicon", [text, "alpha " * 300 + "beta " * 200])
    assert s[0] > s[1] + 0.2  # the term in the second window is found


def test_standin_on_a_real_paper(corpus, standin):
    paper = corpus.paper("1909.00694")
    chunks = QasperChunker()(paper)
    cp = ChunkedPaper(paper, chunks)
    q = paper.questions[0]  # What is the seed lexicon?
    gold = {i for ev in q.evidence for loc in [cp.locate(ev)] for i in loc.full + loc.partial}
    rr = standin.rerank(q.text, [c.id for c in chunks], [c.text for c in chunks])
    assert sorted(r.id for r in rr) == sorted(c.id for c in chunks) and [r.rank for r in rr] == list(range(1, len(chunks) + 1))
    assert all(a.score >= b.score for a, b in zip(rr, rr[1:]))
    rank = next(r.rank for r in rr if r.id in gold)
    assert rank <= 5, rank  # 4 of 27 when written; every chunk above it mentions "seed lexicon" too
    n = standin.encoded
    standin.rerank("How big is the seed lexicon?", [c.id for c in chunks], [c.text for c in chunks])
    assert standin.encoded == n  # the paper's chunks come from the cache for its next question


def test_doc_maxlen_is_capped_by_the_model(colbert):
    assert colbert.doc_maxlen == 64  # the tiny BERT has 64 positions; the default asks for 512
    ids, _ = colbert.doc_ids([" ".join(["seed"] * 100)])
    assert ids.shape == (1, 64) and ids[0, -1] == SEP
    assert colbert.encode_passages([" ".join(["seed"] * 100)])[0].shape == (64, 8)


def test_load_by_name_with_a_hub(monkeypatch, tmp_path):
    import huggingface_hub
    d, calls = build_tiny_colbert(tmp_path, fmt="bin"), []

    def fake(repo_id, allow_patterns=None, **k):
        calls.append((repo_id, allow_patterns[-1]))
        return str(d)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    s = load_late_interaction("colbertv2")
    assert isinstance(s, ColBERTScorer) and s.query_ids(["seed"])[0].shape == (1, 32)
    # the safetensors weights first; the .bin only when the repository has no safetensors
    assert calls == [("colbert-ir/colbertv2.0", "model.safetensors"), ("colbert-ir/colbertv2.0", "pytorch_model.bin")]
