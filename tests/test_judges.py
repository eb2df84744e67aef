"""Judges (TRUE on a tiny T5 built here, the LLM Yes/No judge on SmolLM2), the gold-evidence check, agreement and the human label file."""
import csv
import pytest
from qasper_rag.papers.chunking import ChunkedPaper, QasperChunker
from qasper_rag.answer.judges import LLMJudge, TrueJudge, JudgeUnavailable, build_tiny_t5, load_judge
from qasper_rag.answer.labels import JudgedSentence, agreement, export_labelling, gold_support, read_labels, LABEL_COLUMNS
from qasper_rag.evaluate.metrics import answer_citations
from qasper_rag.core.stats import cohen_kappa


@pytest.fixture(scope="module")
def tiny_true(tmp_path_factory):
    d = tmp_path_factory.mktemp("t5")
    words = "BLEU rose to 27.3 on WMT14 the model uses BERT".split()
    return TrueJudge(str(build_tiny_t5(d / "yes", words, entail=True))), TrueJudge(str(build_tiny_t5(d / "no", words, entail=False)))


def test_true_judge_follows_the_checkpoint(tiny_true):
    yes, no = tiny_true
    assert yes.entails(premise="BLEU rose to 27.3", hypothesis="BLEU rose") is True
    assert no.entails(premise="BLEU rose to 27.3", hypothesis="BLEU rose") is False
    assert yes.probability("the model", "BERT") > 0.5 > no.probability("the model", "BERT")
    # an ALCE run through the loaded checkpoint: recall and precision follow the verdicts
    assert answer_citations("BLEU rose [Doc 1].", ["BLEU rose to 27.3"], yes).recall == 1.0
    assert answer_citations("BLEU rose [Doc 1].", ["BLEU rose to 27.3"], no).recall == 0.0


def test_true_judge_input_is_premise_then_hypothesis_and_never_cut(tiny_true):
    yes, _ = tiny_true
    assert yes.tok.decode(yes.encode("the model uses BERT", "BLEU rose")) == "premise: the model uses BERT hypothesis: BLEU rose </s>"
    long = " ".join(["the"] * 3000)  # far beyond 500 characters and 512 tokens
    assert len(yes.encode(long, "BERT")) == 3000 + 4
    capped = TrueJudge(str(yes.model.name_or_path), max_input_tokens=100)
    with pytest.raises(ValueError, match="max_input_tokens"):
        capped.encode(long, "BERT")


def test_true_judge_missing_model_says_what_to_do(tmp_path):
    with pytest.raises(JudgeUnavailable, match="huggingface-cli download google/t5_xxl_true_nli_mixture"):
        TrueJudge(str(tmp_path / "nothing"), local_files_only=True)


def test_llm_judge_prompt_roles_and_disk_cache(tmp_path):
    from qasper_rag.core.generate import load_generator
    gen = load_generator("smollm2", n_ctx=1024)
    j = LLMJudge(gen, cache=tmp_path / "cache.jsonl")
    m = j.messages(premise="We train on 50,000 Amazon reviews.", hypothesis="They train on reviews.")
    assert m[1]["content"].startswith("Passage:\nWe train on 50,000 Amazon reviews.\n\nClaim: They train on reviews.")
    p = j.probability(premise="We train on 50,000 Amazon reviews.", hypothesis="They train on reviews.")
    assert 0.0 <= p <= 1.0 and j.calls == 1
    assert j.entails("We train on 50,000 Amazon reviews.", "They train on reviews.") == (p >= 0.5) and j.calls == 1
    again = LLMJudge(gen, cache=tmp_path / "cache.jsonl")  # a resumed run reads the verdicts back
    assert again.probability("We train on 50,000 Amazon reviews.", "They train on reviews.") == p and again.calls == 0
    with open(tmp_path / "cache.jsonl", "a") as f: f.write('{"key": "torn')  # killed mid-write
    assert LLMJudge(gen, cache=tmp_path / "cache.jsonl").probability("We train on 50,000 Amazon reviews.", "They train on reviews.") == p


def test_load_judge_by_name():
    assert load_judge("none") is None
    assert load_judge("lexical").entails("BLEU rose to 27.3", "BLEU rose to 27.3")
    with pytest.raises(ValueError, match="unknown judge"): load_judge("gpt4")
    with pytest.raises(ValueError, match="needs a generator"): load_judge("llm")


def test_gold_support_on_a_real_question(train10):
    p = train10.paper("1909.00694")
    cp = ChunkedPaper(p, QasperChunker()(p))
    q = next(q for q in p.questions if q.text == "What is the seed lexicon?")
    hits = {c.id for c in cp.chunks if gold_support(cp, q, c.id)}
    want = {c.id for c in cp.chunks if any(cp.reached(e, [c.id]) or e in cp.evidence_strings([c.id]) for e in q.evidence)}
    assert hits == want and 0 < len(hits) < len(cp.chunks)
    assert not gold_support(cp, q, f"{p.id}:abstract")


def _items():
    pairs = [(1, 1), (1, 1), (0, 0), (1, 0), (0, 0), (1, 1), (0, 1)]
    return [JudgedSentence(f"q{i}#0", f"q{i}", f"claim {i}", (1, 2), ("p:a", "p:b"), j, (j, 1), g, (g, 0))
            for i, (j, g) in enumerate(pairs)]


def test_agreement_hand_computed():
    a = agreement(_items())
    r = a["judge_vs_gold"]["recall"]
    assert r["confusion"] == [[2, 1], [1, 3]] and r["n"] == 7
    # p_o = 5/7; p_e = (3*3 + 4*4)/49 = 25/49; kappa = (35/49 - 25/49) / (24/49) = 10/24
    assert r["kappa"] == round(10 / 24, 4)
    prec = a["judge_vs_gold"]["precision"]
    assert prec["n"] == 14 and prec["kappa"] == round(cohen_kappa([x for s in _items() for x in s.judge_scores],
                                                                    [x for s in _items() for x in s.gold_scores]).kappa, 4)
    # sentences the judge did not see (no judge) or without citations are not compared
    extra = [JudgedSentence("z#0", "z", "c", (), (), None, (), 0, ())]
    assert agreement(_items() + extra)["judge_vs_gold"]["recall"]["n"] == 7


def test_label_file_roundtrip(tmp_path):
    items = _items()
    f = export_labelling(items, {"q1": "Which data?"}, {"p:a": "Passage A, with \"quotes\".", "p:b": "Passage B\nline 2."}, tmp_path / "l.csv", n=5, seed=3)
    rows = list(csv.DictReader(open(f, newline="")))
    assert len(rows) == 5 and list(rows[0]) == list(LABEL_COLUMNS)
    assert all(r["label"] == "" for r in rows) and "Passage B\nline 2." in rows[0]["cited_passages"]
    assert [r["item_id"] for r in rows] == [r["item_id"] for r in csv.DictReader(open(export_labelling(items, {}, {"p:a": "A", "p:b": "B"}, tmp_path / "m.csv", n=5, seed=3)))]
    rows[0]["label"], rows[1]["label"], rows[2]["label"] = "1", "no", "YES"
    with open(f, "w", newline="") as fh:
        w = csv.DictWriter(fh, LABEL_COLUMNS); w.writeheader(); w.writerows(rows)
    labels = read_labels(f)
    assert labels == {rows[0]["item_id"]: 1, rows[1]["item_id"]: 0, rows[2]["item_id"]: 1}
    a = agreement(items, labels)
    assert a["human_labels"] == 3 and a["judge_vs_human"]["n"] == 3
    rows[3]["label"] = "perhaps"
    with open(f, "w", newline="") as fh:
        w = csv.DictWriter(fh, LABEL_COLUMNS); w.writeheader(); w.writerows(rows)
    with pytest.raises(ValueError, match="row 5"): read_labels(f)
    (tmp_path / "bad.csv").write_text("id,verdict\nx,1\n")
    with pytest.raises(ValueError, match="item_id and label"): read_labels(tmp_path / "bad.csv")
