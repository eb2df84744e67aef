"""The system users get (issue 44): the shipped generator, Qwen2.5-Coder-1.5B-Instruct Q4_K_M on llama.cpp with 2 threads, through
the answer path `qasper-rag ask` runs (`make_answerer` with the default settings: offline-2k retrieval, grammar-constrained
decoding, every sentence verified by the grounded judge), on questions of the shared TRAIN papers only. Every other answer,
verify and judge test runs on SmolLM2-135M, which proves the path runs but not what it gives.

`make test` (and so CI) installs the model first (`make models`). Missing shared data or model fails under CI (CI=true) and is
skipped elsewhere, with the command that fixes it. Cost: one model load, three answers, nine judge readings and the 55 labelled
train items. Measured twice on a 2-core machine shared with other engineers' jobs: 22.5 min wall / 13.0 min CPU (user time,
llama.cpp's 2 threads counted twice) under a load of 6-8; 10.1 min wall / 10.8 min CPU under a load of 5-6 that fell to 0 for
the last minute, where the pairs took 10 s and the 55 items 40 s (the three answers, the model and the retriever's models
loading: 9.3 min of it). On 2 free cores, less than that second run."""
import re
from collections import Counter
from pathlib import Path

import pytest

from qasper_rag.papers.data import load_path, under_ci
from qasper_rag.core.env import shared_data_dir
from qasper_rag.answer.prompts import NO_ANSWER, yes_no_question
from qasper_rag.answer.verify import NOT_ESTABLISHED

THREADS = 2
TRAIN = "original_format/qasper-train-sample10.json"
LABELS = "citation_support_offline_full.csv"
# three questions of the train papers: a yes/no one the committed run answered Yes, a yes/no one it left Unanswerable (its
# sentence removed), and an extractive one (gold: "AdaBoost-based classifier")
QUESTIONS = ("cd1034c183edf630018f47ff70b48d74d2bb1649",  # 1805.02400 Does their detection tool work better than human detection?
             "98b11f70239ef0e22511a3ecf6e413ecb726f954",  # 1805.02400 Do they use a pretrained NMT model to help generating reviews?
             "12f1919a3e8ca460b931c6cacc268a926399dff4")  # 1805.02400 What kind of model do they use for detection?
VERIFIED = ("verified", "re-cited", "rewritten")  # statuses of a sentence shown as supported (`CheckedSentence.verified`)


def needed(ok: bool, what: str):
    "Fail under CI (a skipped check there would hide that users' model is untested), skip elsewhere."
    if ok: return
    if under_ci(): pytest.fail(f"{what} (CI=true: the shipped model's test must run, never be skipped)")
    pytest.skip(what)


@pytest.fixture(scope="module")
def train():
    f = shared_data_dir()/TRAIN
    needed(f.is_file(), f"no shared train papers at {f}: set QASPER_SHARED to the folder holding original_format/")
    return load_path(f)


@pytest.fixture(scope="module")
def answerer():
    "The answerer `qasper-rag ask --generator qwen-1.5b --threads 2` builds (default retrieval and verification)."
    from qasper_rag.core.models import qwen_gguf_path
    try: qwen_gguf_path(progress=False)
    except Exception as e: needed(False, f"the shipped model is not installed ({type(e).__name__}: {e}): run `make models`")
    from qasper_rag.app import make_answerer
    from qasper_rag.settings import AnswerSettings
    return make_answerer(AnswerSettings(generator="qwen-1.5b", threads=THREADS))


@pytest.fixture(scope="module")
def answers(train, answerer):
    "question id -> (question, record, retrieval), each answered once."
    qs = {q.id: q for q in train.questions()}
    out = {}
    for qid in QUESTIONS:
        q = qs[qid]
        rec, res = answerer.answer(train.paper(q.paper_id), q.text, q.id)
        print(f"\n{q.id[:8]} {q.text!r}: short {rec.short_answer!r}, statuses {[s.status for s in rec.sentences]}, "
              f"answer {rec.answer!r}, {rec.timings.get('total', 0):.0f} s")
        out[qid] = (q, rec, res)
    return out


def shown(rec) -> list:
    "The sentences a reader sees (removed ones are not shown)."
    return [s for s in rec.sentences if not s.removed]


def test_the_shipped_model_answers(answerer, answers):
    assert "qwen2.5-coder-1.5b-instruct-q4_k_m" in answerer.gen.name.lower() and answerer.gen.llm.n_threads == THREADS
    assert answerer.constrained and answerer.verifier is not None  # what `ask` gives: grammar-constrained, then verified
    for q, rec, res in answers.values():
        assert not rec.failed, (q.text, rec.problems)
        assert rec.question_id == q.id and rec.paper_id == q.paper_id and rec.model == answerer.gen.name
        assert rec.raw_output and rec.sentences, (q.text, rec.raw_output)


def test_every_shown_sentence_cites_a_passage_that_was_sent(answers):
    for q, rec, res in answers.values():
        sent = res.passages
        assert [c.chunk_id for c in rec.context] == [c.id for c in sent] and sent
        assert all(c.id.startswith(f"{q.paper_id}:") for c in sent)  # its own paper's chunks
        for s in shown(rec):
            if s.claim in (NO_ANSWER,) or s.status == "no answer": continue
            assert s.citations and all(1 <= d <= len(sent) for d in s.citations), (q.text, s)
            assert all(f"[Doc {d}]" in s.text for d in s.citations), s  # the marks a reader sees are the ones checked
        cited = {d for s in shown(rec) for d in s.citations}
        assert {p.doc for p in rec.passages} == cited  # the passages listed under the answer are exactly those cited
        for p in rec.passages:
            assert (p.chunk_id, p.text) == (sent[p.doc - 1].id, sent[p.doc - 1].body)
        # the grammar held: every [Doc N] the model wrote points into the context
        assert all(1 <= int(d) <= len(sent) for d in re.findall(r"\[Doc (\d+)\]", rec.raw_output)), rec.raw_output


def test_verification_ran_on_these_sentences(answerer, answers):
    from qasper_rag.answer.record import STATUSES
    for q, rec, res in answers.values():
        v = rec.verification
        assert v["judge"] == f"grounded:{answerer.gen.name}" == rec.config["verify"]
        assert v["counts"] == {k: Counter(s.status for s in rec.sentences).get(k, 0) for k in STATUSES}, (v, rec.sentences)
        assert sum(v["counts"].values()) == len(rec.sentences) > 0
        assert v["short_answer"]["after"] == rec.short_answer
        for s in rec.sentences:
            assert s.status in STATUSES and s.verified == (s.status in VERIFIED)
            if s.status in ("verified", "re-cited"):  # the model's own claim kept: the judge said yes to it
                assert s.verdict.p is not None and s.verdict.p >= answerer.verifier.judge.threshold, s
        assert rec.answer == " ".join(s.text for s in shown(rec)) or not shown(rec), rec.answer
        if not shown(rec): assert rec.answer in (NO_ANSWER, NOT_ESTABLISHED)  # the reader is told, not shown an empty answer


def test_the_short_answer_agrees_with_the_answer(answers):
    for q, rec, res in answers.values():
        short, kept = rec.short_answer, [s for s in rec.sentences if s.verified]
        unsettled = rec.verification["short_answer"]["unsettled"]  # a Yes/No kept as the model's reading: no passage settles it
        if short == "Unanswerable":  # nothing verified is shown beside it, and no evidence is predicted
            assert not kept and rec.predicted_evidence == [] and rec.short_answer_type == "unanswerable", rec
        elif not unsettled:  # an answer is claimed only with a verified sentence behind it
            assert kept, (q.text, short, rec.sentences)
        if yes_no_question(q.text):
            assert short in ("Yes", "No", "Unanswerable"), (q.text, short)
            if short in ("Yes", "No"):
                assert rec.short_answer_type == "yes/no"
                if unsettled:  # the reader is told it is the model's reading, and the facts found are quotes at most
                    assert "no passage sent settles the question" in rec.notice and not any(s.status in ("verified", "re-cited") for s in kept), rec
                    assert rec.short_answer == rec.verification["short_answer"]["before"]
                else:  # decided by the model's own claim that held, not only by a quote a rewrite put in
                    assert any(s.status in ("verified", "re-cited") for s in kept), rec.sentences
        else:
            assert not unsettled


def test_some_answer_is_right(answers):
    "Not only consistent: at least one of the three short answers matches a gold answer (token F1 >= 0.5)."
    from qasper_rag.evaluate.metrics import token_f1
    best = {q.id: max(token_f1(rec.short_answer, a.text) for a in q.answers) for q, rec, res in answers.values()}
    assert max(best.values()) >= 0.5, best


# --- the grounded judge's direction --------------------------------------------------------------------------------------

def _paragraph(paper, start: str) -> str:
    return next(p for s in paper.sections for p in s.paragraphs if p.startswith(start))

# (paper, first words of the premise paragraph, a claim it supports, the claim negated, the claim with a number swapped)
PAIRS = [("1909.00694", "We constructed our seed lexicon", "The seed lexicon consists of 15 positive words and 15 negative words.",
          "The seed lexicon does not contain any positive or negative words.", "The seed lexicon consists of 25 positive words and 15 negative words."),
         ("1805.02400", "We developed an AdaBoost-based classifier", "The fake review detector is an AdaBoost classifier of 200 shallow decision trees.",
          "The fake review detector is not an AdaBoost classifier.", "The fake review detector is an AdaBoost classifier of 50 shallow decision trees."),
         ("1811.00942", "Quality–performance tradeoff.", "On the Raspberry Pi, KN-5 takes about 7 ms per query on PTB.",
          "On the Raspberry Pi, KN-5 does not take about 7 ms per query on PTB.", "On the Raspberry Pi, KN-5 takes about 70 ms per query on PTB.")]


def test_the_grounded_judge_points_the_right_way(train, answerer):
    """P(Yes) of a claim its passage supports is above that of its negation and of the same claim with a number swapped (the
    model's own reading, before the judge's free lexical checks); the judge accepts the supported claims whose words the passage
    holds, and its number check rejects every swapped number before the model is asked."""
    judge = answerer.verifier.judge
    for pid, start, sup, neg, swapped in PAIRS:
        premise = _paragraph(train.paper(pid), start)
        p_sup, p_neg, p_swap = (judge.probability(premise, c) for c in (sup, neg, swapped))
        print(f"\n{pid}: P(Yes) supported {p_sup:.3f}, negated {p_neg:.3f}, number swapped {p_swap:.3f}")
        assert p_sup > p_neg and p_sup > p_swap and p_sup >= judge.threshold, (pid, p_sup, p_neg, p_swap)
        v = judge.verdict(premise, swapped)
        assert not v.supported and v.p is None and v.reason.startswith("number(s) not in the passage"), v
    for pid, start, sup, neg, _ in PAIRS[:2]:  # (the third claim names "Raspberry Pi", which its 3-sentence window leaves out)
        premise = _paragraph(train.paper(pid), start)
        assert judge.verdict(premise, sup).supported and not judge.verdict(premise, neg).supported


# --- agreement with the reference labels of the train papers --------------------------------------------------------------

# kappa of the grounded judge (Qwen, default settings) on the 55 labelled items of the 10 train papers, measured once on this
# code: 0.8187 (bootstrap 95% 0.667-0.962), agreement 0.909, confusion [[25, 1], [4, 25]] (rows: judge supported/not, columns:
# label supported/not). The items are read greedily, so a rerun on the same build gives the same verdicts. TOLERANCE allows
# another CPU's llama.cpp kernels to move the P(Yes) of an item lying near the 0.5 threshold across it: one flipped verdict
# moves kappa by 0.036 here, two by 0.072-0.074, so 0.08 is two flips; a change of the judge's prompt, threshold, window or
# grounding rules that costs agreement moves it further and fails. (All 55 items: 40 s on a free machine, so no subset is needed.)
PINNED_KAPPA, TOLERANCE, N_ITEMS = 0.8187, 0.08, 55


def test_judge_agreement_with_reference_labels_is_pinned(train, answerer):
    from qasper_rag.answer.labels import check_labels, read_label_items
    path = shared_data_dir().parent/"labels"/LABELS
    needed(path.is_file(), f"no reference labels at {path} (the shared labels folder beside the QASPER sample)")
    ids = {q.id for q in train.questions()}
    items = [i for i in read_label_items(path) if i.item_id.split("#")[0] in ids]  # train papers only: the test papers' are kept apart
    assert len(items) == N_ITEMS
    r = check_labels(items, answerer.verifier.judge)
    print(f"\nkappa {r['kappa']} (95% {r['kappa_ci95']}), agreement {r['agreement']}, confusion {r['confusion']}, n {r['n']}")
    assert r["judge"] == f"grounded:{answerer.gen.name}"
    assert PINNED_KAPPA is not None and abs(r["kappa"] - PINNED_KAPPA) <= TOLERANCE, (r["kappa"], PINNED_KAPPA)
