"""Golden tests of every metric (hand-computed values), a cross-check against the official QASPER evaluator's
logic, and one regression test per measurement bug of the reference (each runs the buggy variant, defined only
here, and shows that it moves the number while the real implementation does not)."""
import json
import math
import random
import re
import string
from collections import Counter

import pytest

from qasper_rag.papers.chunking import ChunkedPaper, QasperChunker
from qasper_rag.papers.data import Answer
from qasper_rag.evaluate.metrics import AnswerCitations, Prediction, PredictionsError, Reference, answer_citations, citation_metrics, evidence_f1, fmt_mean, fmt_scores, gold_from_corpus, read_predictions, reference, score, score_questions, token_f1, write_predictions
from qasper_rag.core.text import normalize_answer
from qasper_rag.answer.entailment import Judge, LexicalJudge, content_tokens
from qasper_rag.core.stats import bootstrap_ci, cohen_kappa
from qasper_rag.evaluate.recall import question_recall

# ---------------------------------------------------------------- QASPER official metrics

def test_normalisation_and_token_f1_golden():
    assert normalize_answer("The  Seed-lexicon, an (example)!") == "seedlexicon example"
    # 5 shared tokens of 5 predicted and 8 gold: P 1, R 5/8
    assert token_f1("The seed lexicon of positive predicates",
                    "seed lexicon consists of positive and negative predicates") == pytest.approx(10 / 13, abs=1e-12)
    # 3 shared of 5 and 13: P 3/5, R 3/13 -> 1/3
    assert token_f1("The seed lexicon of positive predicates", "a vocabulary of positive and negative predicates that "
                    "helps determine the polarity score of an event") == pytest.approx(1 / 3, abs=1e-12)
    assert token_f1("the the cat", "cat cat") == pytest.approx(2 * 1 * 0.5 / 1.5)  # bag of tokens, counts clipped
    # the official evaluator (SQuAD v1.1) returns 0 whenever nothing is shared, also for two empty strings
    assert token_f1("", "") == 0.0 and token_f1("An", "the") == 0.0


def test_evidence_f1_golden():
    assert evidence_f1([], []) == 1.0
    assert evidence_f1([], ["p"]) == 0.0 and evidence_f1(["p"], []) == 0.0
    assert evidence_f1(["p1", "p2", "p3"], ["p1", "p4"]) == pytest.approx(0.4)
    assert evidence_f1(["p1", "p1"], ["p1"]) == pytest.approx(2 / 3)  # list length in the precision, as official


def _answer(**kw):
    raw = {"unanswerable": False, "extractive_spans": [], "yes_no": None, "free_form_answer": "", "evidence": []}
    raw.update(kw)
    return Answer.from_raw(raw, "ann1")


def test_references_follow_the_official_rules():
    ev = ["para one", "FLOAT SELECTED: Table 1: x"]
    assert reference(_answer(unanswerable=True, evidence=ev)) == Reference("Unanswerable", (), "none")
    assert reference(_answer(extractive_spans=["a", "b"], free_form_answer="f", evidence=ev)) == Reference("a, b", tuple(ev), "extractive")
    assert reference(_answer(free_form_answer="f", yes_no=True)) == Reference("f", (), "abstractive")
    assert reference(_answer(yes_no=False, evidence=ev), text_evidence_only=True) == Reference("No", ("para one",), "boolean")
    with pytest.raises(ValueError, match="does not contain an answer"):
        reference(_answer())


def test_score_golden():
    P, E, T = "seed para", "data para", "FLOAT SELECTED: Table 1: Results."
    gold = {"q1": [Reference("seed lexicon consists of positive and negative predicates", (P,), "extractive"),
                   Reference("Unanswerable", (), "none")],
            "q2": [Reference("Yes", (E, T), "boolean")],
            "q3": [Reference("No", (T,), "boolean")]}
    preds = {"q1": Prediction("Unanswerable"), "q2": {"predicted_answer": "No", "predicted_evidence": [E]},
             "not-in-gold": Prediction("x")}
    out = score(gold, preds)
    assert out["Answer F1"] == pytest.approx(1 / 3) and out["Evidence F1"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert out["Answer F1 by type"] == {"extractive": 0.0, "abstractive": 0.0, "boolean": 0.0, "none": 1.0}
    assert (out["Missing predictions"], out["n"]) == (1, 3)
    assert out["n by type"] == {"extractive": 0, "abstractive": 0, "boolean": 1, "none": 1}  # missing: no type
    assert score(gold, preds, text_evidence_only=True)["Evidence F1"] == pytest.approx(2 / 3)
    # subset: the caller restricts the gold; the other predictions are ignored
    assert score({"q1": gold["q1"]}, preds)["Answer F1"] == 1.0


def test_best_reference_and_first_max_tie_rule():
    refs = [Reference("Yes", (), "boolean"), Reference("Unanswerable", (), "none")]
    assert score_questions({"q": refs}, {"q": Prediction("maybe")})[0].type == "boolean"  # 0 = 0: the first
    assert score_questions({"q": refs[::-1]}, {"q": Prediction("maybe")})[0].type == "none"
    s = score_questions({"q": [Reference("the cat sat", ("a",), "extractive"), Reference("cat", ("b",), "abstractive")]},
                        {"q": Prediction("cat", ("a",))})[0]
    # answer: best is the 2nd reference (F1 1.0); evidence: max taken independently, the 1st reference (1.0)
    assert (s.answer_f1, s.type, s.evidence_f1) == (1.0, "abstractive", 1.0)


# A transcription of the logic of allenai/qasper-led-baseline scripts/evaluator.py (get_answers_and_evidence,
# evaluate, token_f1_score, paragraph_f1_score), used as an independent oracle for our implementation.
def _off_norm(s):
    s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", s).split())


def _off_token_f1(prediction, ground_truth):
    p, g = _off_norm(prediction).split(), _off_norm(ground_truth).split()
    num_same = sum((Counter(p) & Counter(g)).values())
    if num_same == 0:
        return 0
    precision, recall = num_same / len(p), num_same / len(g)
    return (2 * precision * recall) / (precision + recall)


def _off_paragraph_f1(prediction, ground_truth):
    if not ground_truth and not prediction:
        return 1.0
    num_same = len(set(ground_truth).intersection(set(prediction)))
    if num_same == 0:
        return 0.0
    precision, recall = num_same / len(prediction), num_same / len(ground_truth)
    return (2 * precision * recall) / (precision + recall)


def _off_gold(data, text_evidence_only):
    out = {}
    for paper_data in data.values():
        for qa_info in paper_data["qas"]:
            refs = []
            for annotation_info in qa_info["answers"]:
                a = annotation_info["answer"]
                if a["unanswerable"]:
                    refs.append({"answer": "Unanswerable", "evidence": [], "type": "none"})
                    continue
                if a["extractive_spans"]:
                    answer, typ = ", ".join(a["extractive_spans"]), "extractive"
                elif a["free_form_answer"]:
                    answer, typ = a["free_form_answer"], "abstractive"
                elif a["yes_no"]:
                    answer, typ = "Yes", "boolean"
                elif a["yes_no"] is not None:
                    answer, typ = "No", "boolean"
                else:
                    raise RuntimeError("no answer")
                ev = [t for t in a["evidence"] if "FLOAT SELECTED" not in t] if text_evidence_only else a["evidence"]
                refs.append({"answer": answer, "evidence": ev, "type": typ})
            out[qa_info["question_id"]] = refs
    return out


def _off_evaluate(gold, predicted):
    f1s, ev_f1s, by_type, missing = [], [], {"extractive": [], "abstractive": [], "boolean": [], "none": []}, 0
    for qid, references in gold.items():
        if qid not in predicted:
            missing += 1; f1s.append(0.0); ev_f1s.append(0.0)
            continue
        pairs = [(_off_token_f1(predicted[qid]["answer"], r["answer"]), r["type"]) for r in references]
        best, typ = sorted(pairs, key=lambda x: x[0], reverse=True)[0]
        f1s.append(best); by_type[typ].append(best)
        ev_f1s.append(max(_off_paragraph_f1(predicted[qid]["evidence"], r["evidence"]) for r in references))
    mean = lambda x: sum(x) / len(x) if x else 0.0
    return {"Answer F1": mean(f1s), "Answer F1 by type": {k: mean(v) for k, v in by_type.items()},
            "Evidence F1": mean(ev_f1s), "Missing predictions": missing}


@pytest.fixture(scope="module")
def raw_data(dev_data):
    "The train papers and the dev file as raw JSON (the official evaluator's input), the same papers as the `corpus` fixture."
    data = {}
    for f in sorted(dev_data.glob("*.json")):
        data.update(json.loads(f.read_text()))
    return data


def _noisy_predictions(data, seed=0):
    rng, out = random.Random(seed), {}
    for p in data.values():
        paras = [x for s in p["full_text"] for x in s["paragraphs"]] + ["FLOAT SELECTED: " + f["caption"] for f in p.get("figures_and_tables", [])]
        for qa in p["qas"]:
            k = rng.random()
            if k < 0.1:
                continue  # missing
            a = rng.choice(qa["answers"])["answer"]
            words = " ".join(a["extractive_spans"] or [a["free_form_answer"] or "yes"]).split()
            ans = rng.choice(["Unanswerable", "Yes", "No", " ".join(words[: rng.randint(0, len(words))]), "the"])
            ev = rng.sample(list(a["evidence"]), rng.randint(0, len(a["evidence"]))) + rng.sample(paras, rng.randint(0, 2))
            out[qa["question_id"]] = {"answer": ans, "evidence": ev}
    return out


@pytest.mark.parametrize("text_only", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_the_official_evaluator_logic(raw_data, corpus, text_only, seed):
    preds = _noisy_predictions(raw_data, seed)
    official = _off_evaluate(_off_gold(raw_data, text_only), preds)
    ours = score(gold_from_corpus(corpus, text_evidence_only=text_only), preds)
    assert official["Missing predictions"] == ours["Missing predictions"] > 0
    for k in ("Answer F1", "Evidence F1"):
        assert ours[k] == pytest.approx(official[k], abs=1e-12)
    assert ours["Answer F1 by type"] == pytest.approx(official["Answer F1 by type"], abs=1e-12)
    # the text filter is also applied by score() itself on the unfiltered gold
    assert score(gold_from_corpus(corpus), preds, text_evidence_only=text_only)["Evidence F1"] == pytest.approx(official["Evidence F1"])


def test_predictions_file_roundtrip_and_errors(tmp_path):
    preds = {"a": Prediction("BERT", ("p1", "FLOAT SELECTED: Table 2: é")), "b": {"answer": "No", "evidence": []}}
    f = write_predictions(tmp_path / "out" / "preds.jsonl", preds)
    assert read_predictions(f) == {"a": preds["a"], "b": Prediction("No")}
    assert json.loads(f.read_text().splitlines()[0]) == {"question_id": "a", "predicted_answer": "BERT",
                                                         "predicted_evidence": ["p1", "FLOAT SELECTED: Table 2: é"]}
    ok = '{"question_id": "a", "predicted_answer": "x", "predicted_evidence": []}\n'
    cases = {ok + "\n" + '{"question_id": "b", "predicted_answer": "x"}\n': "line 3: missing key(s) predicted_evidence",
             ok + "[1, 2]\n": "line 2: expected a JSON object, got list",
             ok + "{oops\n": "line 2: not valid JSON",
             '{"question_id": 7, "predicted_answer": "x", "predicted_evidence": []}\n': "line 1: question_id must be a string",
             '{"question_id": "a", "predicted_answer": null, "predicted_evidence": []}\n': "line 1: predicted_answer must be a string",
             '{"question_id": "a", "predicted_answer": "x", "predicted_evidence": [1]}\n': "line 1: predicted_evidence must be a list of strings"}
    for text, msg in cases.items():
        f.write_text(text)
        with pytest.raises(PredictionsError, match=re.escape(f"preds.jsonl, {msg}")):
            read_predictions(f)
    f.write_text(ok + ok.replace('"x"', '"y"'))  # a repeated id keeps its last line, as the official script
    assert read_predictions(f) == {"a": Prediction("y")}


def test_baselines_on_shared_data(corpus):
    gold = gold_from_corpus(corpus)
    assert len(gold) == 185
    unans = score(gold, {q: Prediction("Unanswerable") for q in gold})
    share = sum(any(r.type == "none" for r in refs) for refs in gold.values()) / len(gold)
    assert unans["Answer F1"] == pytest.approx(share) and unans["Answer F1 by type"]["none"] == 1.0
    oracle = score(gold, {q: Prediction(r[0].answer, r[0].evidence) for q, r in gold.items()})
    assert oracle["Evidence F1"] == 1.0 and oracle["Answer F1"] > 0.99
    half = {q: Prediction("Unanswerable") for q in list(gold)[:92]}
    s = score_questions(gold, half)
    assert fmt_scores(s)["Answer F1"].endswith("(n=92/185)")
    assert score(gold, half)["Answer F1"] == pytest.approx(float(fmt_scores(s)["Answer F1"].split()[0]), abs=5e-4)


# ---------------------------------------------------------------- ALCE citation recall and precision

DOCS = ["The seed lexicon consists of 15 positive words and 15 negative words.",
        "The model is trained on 100 million sentences of raw Japanese web text.",
        "The results are reported on the ACP corpus."]
ANS = ("The seed lexicon has 15 positive and 15 negative words [Doc 1][Doc 3]. "
       "The model is trained on 100 million raw sentences [Doc 2]. It beats every baseline [Doc 3].")


class ContainsJudge:
    "Real, simple, asymmetric judge: entailed iff every content word of the hypothesis occurs in the premise."
    def entails(self, premise: str, hypothesis: str) -> bool:
        hyp = set(content_tokens(hypothesis))
        return bool(hyp) and hyp <= set(content_tokens(premise))


class RecordingJudge:
    def __init__(self, judge): self.judge, self.calls = judge, []
    def entails(self, premise: str, hypothesis: str) -> bool:
        self.calls.append((premise, hypothesis)); return self.judge.entails(premise=premise, hypothesis=hypothesis)


def test_alce_golden():
    ac = answer_citations(ANS, DOCS, LexicalJudge(0.8))
    assert [(s.cited, s.recall, s.scores, s.irrelevant) for s in ac.sentences] == [
        ((1, 3), 1, (1, 0), (3,)), ((2,), 1, (1,), ()), ((3,), 0, (0,), ())]
    assert ac.recall == pytest.approx(2 / 3) and ac.precision == 0.5 and ac.n_citations == 4
    assert ac.sentences[0].claim == "The seed lexicon has 15 positive and 15 negative words."


def test_alce_judge_receives_full_passages_and_the_claim():
    rec = RecordingJudge(ContainsJudge())
    answer_citations(ANS, DOCS, rec)
    assert rec.calls[0] == (DOCS[0] + "\n" + DOCS[2], "The seed lexicon has 15 positive and 15 negative words.")
    assert len(rec.calls) == len(set(rec.calls))  # each (passages, claim) asked once
    assert isinstance(rec, Judge) and isinstance(LexicalJudge(), Judge)


def test_alce_rules():
    j = ContainsJudge()
    # the whole answer, every line
    assert answer_citations("Line one [Doc 1].\nLine two has no citation.", DOCS, j).recall == 0.0
    # first three citations, repeats once
    s = answer_citations("seed lexicon [Doc 1][Doc 2][Doc 3][Doc 1][Doc 2][Doc 4].", DOCS, j).sentences[0]
    assert (s.cited, s.dropped, s.recall, s.scores) == ((1, 2, 3), (4,), 1, (1, 0, 0))
    # 'seed lexicon' is entailed by doc 1 alone; docs 2, 3 are each irrelevant (alone no, the others yes)
    assert s.irrelevant == (2, 3)
    # out of range among the kept: recall 0, and its citations stay in the precision denominator
    oor = answer_citations("The seed lexicon has 15 positive words [Doc 1][Doc 4]. Trained on 100 million sentences [Doc 2].", DOCS, j)
    assert (oor.recall, oor.precision, oor.n_citations) == (0.5, 1 / 3, 3)
    assert answer_citations("The seed lexicon [Doc 0].", DOCS, j).recall == 0.0  # 0 is not a passage
    # no citation: precision 0 as in ALCE; no sentence: not scored (None)
    assert answer_citations("No citations here at all.", DOCS, j).precision == 0.0
    assert answer_citations("  ", DOCS, j).recall is None and answer_citations("", DOCS, j).precision is None
    # a single supporting citation is never irrelevant (no "other citations" entail)
    one = answer_citations("The seed lexicon [Doc 1].", DOCS, j)
    assert (one.recall, one.precision) == (1.0, 1.0)


def test_alce_report_coverage():
    rep = citation_metrics([ANS, None, "", "The seed lexicon [Doc 1]."], [DOCS] * 4, LexicalJudge(0.8))
    assert rep.n == 2 and rep.recall == pytest.approx((2 / 3 + 1) / 2) and rep.precision == pytest.approx((0.5 + 1) / 2)
    assert rep.summary() == {"citation_recall": "0.833 (n=2/4)", "citation_precision": "0.750 (n=2/4)"}
    assert rep.sentence_labels == [1, 1, 0, 1] and rep.citation_labels == [1, 0, 1, 0, 1]
    with pytest.raises(ValueError, match="2 answers but 1 passage lists"):
        citation_metrics([ANS, ANS], [DOCS], LexicalJudge())


# ---------------------------------------------------------------- kappa, bootstrap, coverage

def test_kappa_hand_table():
    # judge rows, second rater columns: yes/yes 8, yes/no 2, no/yes 3, no/no 7
    a = [1] * 10 + [0] * 10
    b = [1] * 8 + [0] * 2 + [1] * 3 + [0] * 7
    k = cohen_kappa(a, b)
    assert (k.n, k.p_o, k.p_e, k.kappa) == (20, 0.75, 0.5, 0.5)
    assert k.labels == (0, 1) and k.confusion == ((7, 3), (2, 8))
    # 3 categories, by hand: 7 of 9 agree; rater b says a 3, b 4, c 2 times, rater a 3 each:
    # p_e = (3*3 + 3*4 + 3*2)/81 = 1/3 -> kappa = (7/9 - 1/3)/(2/3) = 2/3
    k3 = cohen_kappa(list("aaabbbccc"), list("aabbbbcac"))
    assert k3.confusion == ((2, 1, 0), (0, 3, 0), (1, 0, 2))
    assert k3.p_o == pytest.approx(7 / 9) and k3.p_e == pytest.approx(1 / 3) and k3.kappa == pytest.approx(2 / 3)
    assert cohen_kappa([True, False], [False, True]).kappa == -1.0


def test_kappa_matches_sklearn():
    sk = pytest.importorskip("sklearn.metrics")
    rng = random.Random(0)
    for n, labels in [(30, [0, 1]), (57, ["yes", "no", "partial"]), (5, [1, 2, 3, 4])]:
        for _ in range(20):
            a = [rng.choice(labels) for _ in range(n)]
            b = [x if rng.random() < 0.6 else rng.choice(labels) for x in a]
            k = cohen_kappa(a, b)
            ref = sk.cohen_kappa_score(a, b)
            assert (math.isnan(k.kappa) and math.isnan(ref)) or k.kappa == pytest.approx(ref, abs=1e-12)


def test_kappa_degenerate_and_errors():
    k = cohen_kappa([1, 1, 1], [1, 1, 1])
    assert math.isnan(k.kappa) and (k.p_o, k.p_e, k.n) == (1.0, 1.0, 3)  # p_e = 1: undefined, NaN like sklearn
    assert cohen_kappa([1, 1, 0], [1, 1, 1]).kappa == 0.0  # p_e = 2/3 = p_o
    with pytest.raises(ValueError, match="pair them first"):
        cohen_kappa([1], [1, 0])
    with pytest.raises(ValueError, match="no items"):
        cohen_kappa([], [])


def test_bootstrap_and_fmt_mean():
    lo, hi = bootstrap_ci([0, 1] * 50)
    assert 0.39 < lo < 0.5 < hi < 0.61 and bootstrap_ci([0, 1] * 50) == (lo, hi)  # seeded: reproducible
    xs = [i % 10 for i in range(200)]  # mean 4.5, standard error sqrt(8.25/200): normal interval 4.5 +- 0.398
    lo, hi = bootstrap_ci(xs, n_resamples=4000)
    assert lo == pytest.approx(4.5 - 0.398, abs=0.05) and hi == pytest.approx(4.5 + 0.398, abs=0.05)
    assert bootstrap_ci(xs, seed=1) != bootstrap_ci(xs, seed=2)
    assert bootstrap_ci([0.3, None]) == (0.3, 0.3) and all(math.isnan(x) for x in bootstrap_ci([None]))
    assert fmt_mean([0.5, None, 1.0], total=4) == "0.750 (n=2/4)"  # failed ones count in the total
    assert fmt_mean([0.5, None, 1.0], total=4, missing=0.0) == "0.375 (n=2/4)"
    assert fmt_mean([0.512] * 45, total=51) == "0.512 (n=45/51)"
    assert fmt_mean([None]) == "n/a (n=0/1)"
    assert re.fullmatch(r"0\.500 \[0\.\d{3}, 0\.\d{3}\] \(n=100/100\)", fmt_mean([0, 1] * 50, ci=True))
    with pytest.raises(ValueError, match="less than"):
        fmt_mean([1.0, 1.0], total=1)


# ---------------------------------------------------------------- the reference's measurement bugs

@pytest.fixture(scope="module")
def seed_case(corpus):
    paper = corpus.paper("1909.00694")
    cp = ChunkedPaper(paper, QasperChunker()(paper))
    q = next(q for q in paper.questions if q.text == "What is the seed lexicon?")
    return cp, q, cp.by_id["1909.00694:s4c0"]


CLAIM = "The seed lexicon consists of positive and negative predicates [Doc {}]."


def _reached_cut500_buggy(cp, ev, ids):
    "Bug 1: evidence counted as reached only inside the first 500 characters of each passage."
    return " ".join(ev.split()) in " ".join(" ".join(cp.by_id[i].text[:500] for i in ids).split())


def test_bug1_no_500_character_cut(seed_case):
    cp, q, chunk = seed_case
    start = chunk.text.index(q.evidence[0][:40])
    assert len(chunk.text) > 500 and start > 500 - 30 and start + len(q.evidence[0]) > 500
    assert question_recall(cp, q, [chunk.id]).recall == 1.0 and cp.reached(q.evidence[0], [chunk.id])
    assert not _reached_cut500_buggy(cp, q.evidence[0], [chunk.id])
    # citation recall: the judge must see the passage beyond character 500
    rec = RecordingJudge(LexicalJudge())
    assert answer_citations(CLAIM.format(1), [chunk.text], rec).recall == 1.0
    assert rec.calls[0][0] == chunk.text  # the full passage, not a preview
    assert answer_citations(CLAIM.format(1), [chunk.text[:500]], LexicalJudge()).recall == 0.0  # what the bug saw
    # synthetic: the only supporting sentence sits after character 500
    passage = "Filler words about unrelated matters. " * 14 + "The encoder uses twelve attention heads."
    assert passage.index("The encoder") > 500
    assert answer_citations("The encoder uses twelve attention heads [Doc 1].", [passage], ContainsJudge()).recall == 1.0
    assert answer_citations("The encoder uses twelve attention heads [Doc 1].", [passage[:500]], ContainsJudge()).recall == 0.0


class _SwappedJudge_buggy:
    "Bug 2: the claim put where the passage goes."
    def __init__(self, judge): self.judge = judge
    def entails(self, premise: str, hypothesis: str) -> bool:
        return self.judge.entails(premise=hypothesis, hypothesis=premise)


def test_bug2_premise_is_the_passage_hypothesis_the_claim():
    j = ContainsJudge()
    assert j.entails(premise=DOCS[0], hypothesis="The seed lexicon has 15 words.")
    assert not j.entails(premise="The seed lexicon has 15 words.", hypothesis=DOCS[0])  # asymmetric
    good = citation_metrics([ANS], [DOCS], j)
    bad = citation_metrics([ANS], [DOCS], _SwappedJudge_buggy(j))
    assert (good.recall, good.precision) == (pytest.approx(2 / 3), 0.5)
    assert (bad.recall, bad.precision) == (0.0, 0.0)  # collapses, as the reference saw (about 0.012)


def _precision_one_denominator_buggy(ac: AnswerCitations) -> float:
    "Bug 3: scored citations divided by the number of sentences (recall's denominator)."
    return sum(sum(s.scores) for s in ac.sentences) / len(ac.sentences)


def test_bug3_precision_and_recall_have_different_denominators():
    ac = answer_citations(ANS, DOCS, LexicalJudge(0.8))
    assert ac.recall == pytest.approx(2 / 3) and ac.precision == pytest.approx(2 / 4)
    assert _precision_one_denominator_buggy(ac) == pytest.approx(ac.recall)  # they coincide under the bug
    assert ac.precision != pytest.approx(ac.recall)


def test_bug4_every_passage_is_read(seed_case):
    cp, q, chunk = seed_case
    others = [c.id for c in cp.chunks if not cp.reached(q.evidence[0], [c.id])]
    ids = others[:7] + [chunk.id] + others[7:9]  # ten passages, the evidence in the 8th
    assert len(ids) == 10 and ids.index(chunk.id) == 7
    assert question_recall(cp, q, ids).recall == 1.0
    assert question_recall(cp, q, ids[:6]).recall == 0.0  # the bug: 6 of 10 read
    texts = [cp.by_id[i].text for i in ids]
    assert answer_citations(CLAIM.format(8), texts, LexicalJudge()).recall == 1.0
    assert answer_citations(CLAIM.format(8), texts[:6], LexicalJudge()).recall == 0.0
