"""Golden and integration tests of the data layer on the real shared QASPER papers."""
import json
import pytest
from qasper_rag.papers.data import (Answer, QasperDataError, load_path, load_qasper, normalize_split, read_json_objects)


def test_both_formats_give_identical_records(shared_dir, train10):
    hf = load_path(shared_dir / "raw" / "rajsr-p_qasper-original-sample.hf-format.json")
    assert sorted(hf.papers) == sorted(train10.papers)
    for pid, paper in train10.papers.items():
        assert hf.paper(pid) == paper


def test_counts_match_the_shared_readme(train10):
    qs = train10.questions()
    assert (len(train10), len(qs)) == (10, 51)
    assert sum(len(q.answers) for q in qs) == 68
    assert sum(len(s.paragraphs) for p in train10 for s in p.sections) == 1115
    with_float = [q for q in qs if any(e.startswith("FLOAT SELECTED") for e in q.evidence)]
    with_text = [q for q in qs if any(not e.startswith("FLOAT SELECTED") for e in q.evidence)]
    assert (len(with_text), len(with_float), sum(not q.evidence for q in qs)) == (43, 7, 7)


def test_answer_types_follow_the_official_evaluator(train10):
    types = [a.type for q in train10.questions() for a in q.answers]
    assert set(types) == {"extractive", "abstractive", "boolean", "none"}
    none = next(a for q in train10.questions() for a in q.answers if a.type == "none")
    assert none.text == "Unanswerable" and none.evidence == ()
    assert Answer.from_raw({"extractive_spans": ["a", "b"], "free_form_answer": "x"}).text == "a, b"


def test_unknown_paper_suggests_close_ids(train10):
    with pytest.raises(QasperDataError, match=r"unknown paper id '1909\.00964'.*Did you mean 1909\.00694"):
        train10.paper("1909.00964")


def test_malformed_json_names_file_and_position(tmp_path):
    f = tmp_path / "broken.json"
    f.write_text('{"1909.00694": {"title": "x",\n "full_text": [}}')
    with pytest.raises(QasperDataError, match=r"broken\.json: malformed JSON at line 2, column 16"):
        load_path(f)


def test_wrong_schema_and_missing_paths(tmp_path):
    f = tmp_path / "other.json"
    f.write_text(json.dumps({"rows": [1, 2]}))
    with pytest.raises(QasperDataError, match="neither QASPER v0.3 JSON"):
        load_path(f)
    with pytest.raises(QasperDataError, match="no such file or folder"):
        load_qasper(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(QasperDataError, match="no .json or .jsonl files"):
        load_path(tmp_path / "empty")


def test_splits(shared_dir, tmp_path):
    assert normalize_split("validation") == "dev"
    with pytest.raises(QasperDataError, match="unknown split 'dvelopment'"):
        normalize_split("dvelopment")
    (tmp_path / "qasper-train-sample10.json").symlink_to(shared_dir / "original_format" / "qasper-train-sample10.json")
    (tmp_path / "qasper-dev-leval.json").symlink_to(shared_dir / "dev" / "qasper-traindev-leval.json")  # the split from the file name
    both = load_qasper(tmp_path)
    assert (len(both), len(both.split("dev")), len(both.split("train")), len(both.split("test"))) == (28, 18, 10, 0)


def test_env_var_selects_local_files(shared_dir, monkeypatch):
    monkeypatch.setenv("QASPER_DATA", str(shared_dir / "original_format" / "qasper-train-sample10.json"))
    assert len(load_qasper()) == 10


def test_jsonl_and_gzip(tmp_path, shared_dir):
    import gzip
    rows = read_json_objects(shared_dir / "raw" / "rajsr-p_qasper-original-sample.hf-format.json")
    f = tmp_path / "qasper-dev-rows.jsonl.gz"
    with gzip.open(f, "wt") as g:
        g.write("\n".join(json.dumps(r) for r in rows[:3]) + "\n")
    c = load_path(f)
    assert len(c) == 3 and {p.split for p in c} == {"dev"}
