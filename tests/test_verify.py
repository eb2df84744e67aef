"""Verified answers and the judge's check against labels: `labels --check` as a user runs it, the grounded judge's
order of checks on a real tiny model, and quotes that a grammar keeps verbatim."""
import csv, json, shutil, subprocess, sys
from pathlib import Path

import pytest
from qasper_rag.papers.chunking import Chunk
from qasper_rag.answer.judges import GroundedJudge, grounding
from qasper_rag.answer.labels import LABEL_COLUMNS, read_label_items
from qasper_rag.answer.prompts import check_citations
from qasper_rag.answer.verify import Verifier, quotable_sentences

EXE = shutil.which("qasper-rag", path=str(Path(sys.executable).parent))
PASSAGE = ("We collected 17,833 sentences from pathology reports of Ruijing Hospital. Annotators wrote 2,714 question-answer pairs. "
           "The reports total 826,987 characters.")


@pytest.fixture(scope="module")
def smollm2():
    from qasper_rag.core.generate import load_generator
    return load_generator("smollm2", n_ctx=2048, n_threads=1)


def _label_file(path: Path) -> Path:
    rows = [("q1#0", "How big is the dataset?", "It has 17,833 sentences.", f"[Doc 3] {PASSAGE}", "1"),
            ("q1#1", "How big is the dataset?", "It has 30,000 questions.", f"[Doc 3] {PASSAGE}", "0"),
            ("q2#0", "Which hospital?", "Ruijing Hospital.", f"[Doc 1] {PASSAGE}\n\n[Doc 2] Another passage.", "1"),
            ("q3#0", "Is the data public?", "Yes.", "[Doc 1] The data comes from one hospital.", "0")]
    with open(path, "w", newline="") as f:
        w = csv.writer(f); w.writerow([*LABEL_COLUMNS, "reason"]); w.writerows([(*r, "why") for r in rows])
    return path


def test_labels_check_cli_json_contract(tmp_path):
    labels = _label_file(tmp_path / "labels.csv")
    r = subprocess.run([EXE, "labels", "--check", str(labels), "--judge", "lexical", "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) >= {"kappa", "n", "confusion", "false_supported_rate", "judge"}
    # the lexical judge: 17,833 sentences and Ruijing Hospital are in the passage, 30,000 questions and a public dataset are not
    assert (out["n"], out["judge"], out["confusion"], out["kappa"], out["false_supported_rate"]) == (4, "lexicaljudge", [[2, 0], [0, 2]], 1.0, 0.0)
    r = subprocess.run([EXE, "labels", "--check", str(labels), "--judge", "lexical"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "kappa 1.0" in r.stdout and "false 'supported' rate 0.0" in r.stdout


def test_labels_check_reports_answers_kappa_when_the_file_labels_answers(tmp_path):
    """A label file with an `answers` column (does the sentence answer its question?) gets the answers judge's agreement
    too, under the --json key answers_kappa; with the lexical judge no generator is loaded, so the answers judge is its
    form check alone: 'The dataset is large' gives no number for a *how big* question, the others may answer."""
    rows = [("q1#0", "How big is the dataset?", "It has 17,833 sentences.", f"[Doc 3] {PASSAGE}", "1", "1"),
            ("q1#1", "How big is the dataset?", "The dataset is large.", f"[Doc 3] {PASSAGE}", "0", "0"),
            ("q2#0", "Which hospital?", "Ruijing Hospital.", f"[Doc 1] {PASSAGE}", "1", "1"),
            ("q3#0", "Which hospital?", "The reports total 826,987 characters.", f"[Doc 1] {PASSAGE}", "1", "0")]
    path = tmp_path / "labels.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f); w.writerow([*LABEL_COLUMNS, "answers", "reason"]); w.writerows([(*r, "why") for r in rows])
    r = subprocess.run([EXE, "labels", "--check", str(path), "--judge", "lexical", "--json", "--verdicts", str(tmp_path / "v.jsonl")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    ak = json.loads(r.stdout)["answers_kappa"]
    assert (ak["judge"], ak["n"], ak["confusion"]) == ("answers:form", 4, [[2, 1], [0, 1]])  # rows: judge answers/not; columns: label
    rows = {d["item_id"]: d for d in map(json.loads, (tmp_path / "v.jsonl").read_text().splitlines())}
    assert (rows["q1#1"]["answers"], rows["q1#1"]["answers_label"], rows["q3#0"]["answers"]) == (0, 0, 1)
    r = subprocess.run([EXE, "labels", "--check", str(path), "--judge", "lexical"], capture_output=True, text=True, timeout=300)
    assert "answers judge answers:form" in r.stdout
    assert "answers_kappa" not in json.loads(subprocess.run([EXE, "labels", "--check", str(_label_file(tmp_path / "plain.csv")), "--judge",
                                                            "lexical", "--json"], capture_output=True, text=True, timeout=300).stdout)


def test_labels_check_groups_items_by_data_file(shared_dir, dev_data, tmp_path):
    """Item ids name QASPER questions: with --data the items of each data file (the train papers and the dev file) are reported apart."""
    from qasper_rag.papers.data import load_path
    train = load_path(shared_dir / "original_format" / "qasper-train-sample10.json").questions()[0].id
    dev = load_path(dev_data / "qasper-traindev-leval.json").questions()[0].id
    path = tmp_path / "labels.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f); w.writerow(LABEL_COLUMNS)
        w.writerow([f"{train}#0", "q", "It has 17,833 sentences.", f"[Doc 1] {PASSAGE}", "1"])
        w.writerow([f"{dev}#0", "q", "It has 30,000 sentences.", f"[Doc 1] {PASSAGE}", "1"])
    r = subprocess.run([EXE, "labels", "--check", str(path), "--judge", "lexical", "--json", "--data", str(dev_data)],
                       capture_output=True, text=True, timeout=300)
    g = json.loads(r.stdout)["groups"]
    assert g["qasper-train-sample10"]["confusion"] == [[1, 0], [0, 0]] and g["qasper-traindev-leval"]["confusion"] == [[0, 0], [1, 0]]


def test_labels_check_verdicts_say_why_with_the_grounded_judge(tmp_path):
    """--verdicts writes each item's verdict beside its label, and the grounded judge's reason: the number check fails
    on 30,000 questions without a model call (P(Yes) None), and a claim the model read carries its P(Yes)."""
    labels = _label_file(tmp_path / "labels.csv")
    r = subprocess.run([EXE, "labels", "--check", str(labels), "--judge", "grounded", "--generator", "smollm2", "--threads", "1",
                        "--json", "--verdicts", str(tmp_path / "v.jsonl")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = {d["item_id"]: d for d in map(json.loads, (tmp_path / "v.jsonl").read_text().splitlines())}
    assert list(rows) == ["q1#0", "q1#1", "q2#0", "q3#0"] and [d["label"] for d in rows.values()] == [1, 0, 1, 0]
    assert rows["q1#1"]["supported"] == 0 and rows["q1#1"]["p"] is None and "30000" in rows["q1#1"]["reason"]
    assert rows["q1#0"]["p"] is not None and rows["q1#0"]["supported"] == int(rows["q1#0"]["p"] >= 0.5)
    assert json.loads(r.stdout)["n"] == 4 and "details" not in json.loads(r.stdout)


def test_labels_check_bad_file_says_what_is_missing(tmp_path):
    (tmp_path / "bad.csv").write_text("item_id,label\nq1#0,1\n")
    r = subprocess.run([EXE, "labels", "--check", str(tmp_path / "bad.csv"), "--judge", "lexical"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "missing cited_passages, claim, question" in r.stderr and "Traceback" not in r.stderr


def test_grounded_judge_asks_the_model_only_when_grounding_holds(smollm2, tmp_path):
    j = GroundedJudge(smollm2, cache=tmp_path / "cache.jsonl")
    v = j.verdict(PASSAGE, "There are 30,000 question-answer pairs.")  # a number the passage never gives
    assert (v.supported, v.p, j.calls) == (False, None, 0) and "30000" in v.reason
    v = j.verdict(PASSAGE, "The hospital is in Berlin and the data is multilingual.")  # words the passage never gives
    assert (v.supported, v.p, j.calls) == (False, None, 0) and v.grounding.coverage < j.min_coverage
    v = j.verdict(PASSAGE, "Annotators wrote 2,714 question-answer pairs.")
    assert v.p is not None and 0 <= v.p <= 1 and j.calls == len(j.prompts) and v.supported == (v.p >= j.threshold)
    again = GroundedJudge(smollm2, cache=tmp_path / "cache.jsonl")  # a resumed run reads the probabilities back
    assert again.verdict(PASSAGE, "Annotators wrote 2,714 question-answer pairs.").p == v.p and again.calls == 0


def test_rewrite_quotes_the_passage_verbatim_under_a_grammar(smollm2):
    """The quote is the sentence sharing most words with question and claim; between tied sentences the tiny model
    picks, and the grammar allows nothing but those sentences, verbatim."""
    chunk = Chunk("p:c1", "p", "text", "Data", f"Title: T. Section: Data. {PASSAGE}", 40, 1, prefix_chars=len("Title: T. Section: Data. "))
    ver = Verifier(GroundedJudge(smollm2), smollm2)
    quote = ver._quote("How many question-answer pairs were written?", "They wrote 5,000 pairs.", chunk, 1)
    assert quote == "Annotators wrote 2,714 question-answer pairs." and ver.generations == 0  # one best sentence: no model call
    quote = ver._quote("What do the reports hold?", "They hold texts.", chunk, 1)  # two sentences name the reports
    assert quote in ("We collected 17,833 sentences from pathology reports of Ruijing Hospital.", "The reports total 826,987 characters.")
    assert ver.generations == 1
    assert ver._quote("Which optimizer is used?", "They use Adam.", chunk, 1) is None  # no sentence shares a word with the question


def test_verifier_never_shows_an_unsupported_sentence(smollm2):
    """Whatever the tiny model's verdicts, a shown sentence has passed the judge on the passages it now cites."""
    chunks = [Chunk(f"p:c{i}", "p", "text", "S", t, 30, i) for i, t in enumerate([PASSAGE, "We train a BiLSTM tagger on the reports."], 1)]
    j = GroundedJudge(smollm2)
    v = Verifier(j, smollm2).check("How big is the dataset?", check_citations(
        "The dataset has 30,000 sentences from Berlin [Doc 2]. Annotators wrote 2,714 question-answer pairs [Doc 1].", 2), chunks)
    assert [s.original for s in v.sentences][0].startswith("The dataset has 30,000")
    for s in v.shown:
        assert s.status in ("verified", "re-cited", "rewritten")
        assert j.entails("\n".join(chunks[d - 1].body for d in s.citations), s.claim)
    assert v.sentences[0].status != "verified"  # 30,000 is in no passage
    assert (v.notice != "") == any(s.status == "removed" for s in v.sentences)
