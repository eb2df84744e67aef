"""Tests of qasper_rag.papers.tables: readers on small fixtures and on the shared files, matching, attaching."""
import json
from dataclasses import replace
from pathlib import Path

import pytest

from qasper_rag.papers.data import Float, Paper, QasperDataError, Section, load_path
from qasper_rag.core.env import shared_data_dir
from qasper_rag.papers.tables import (TableBody, attach_bodies, caption_similarity, normalize_caption, parse_markdown_tables,
                               read_ibm_tdms, read_scigen, read_scitab, read_table_dir, read_uda, rows_to_markdown,
                               table_number)

SHARED = shared_data_dir()
TABLES = SHARED/"tables"
needs_shared = pytest.mark.usefixtures("shared_tables")  # fails, never skips, without the shared files


@pytest.fixture(scope="module")
def shared_tables(shared_dir):
    if not TABLES.is_dir(): pytest.fail(f"{TABLES} is missing from the shared data: set QASPER_SHARED to the folder holding tables/")
    return TABLES


def write_jsonl(path: Path, *objs) -> Path:
    path.write_text("\n".join(o if isinstance(o, str) else json.dumps(o) for o in objs) + "\n")
    return path


SG = {"qasper_paper_id": "1111.00001", "table_caption": "Table 2: Scores  on\ndev.",
      "table_column_names": ["[BOLD] Model", "F1"], "table_content_values": [["ours", "[BOLD] 91.2"], ["base|line", "[EMPTY]"]]}


# ---- record and Markdown ------------------------------------------------------------------------

@pytest.mark.parametrize("caption,number", [("Table 3: x", 3), ("TABLE VIII: x", 8), ("TABLE IV. x", 4), ("TABLE XIV x", 14),
                                            ("Table 3", 3), ("TABLE I WER ON TEST SET", 1), ("Figure 2: x", None),
                                            ("Table A1: x", None), ("TABLE CLASSIFICATION", None), ("", None)])
def test_table_number(caption, number):
    assert table_number(caption) == number


def test_rows_to_markdown_escapes_pads_and_normalises():
    assert rows_to_markdown(["Model", "F1"], [["ours", "91.2"], ["a|b"], ["two\nlines  here", None, "x"]]) == (
        "| Model | F1 |  |\n| --- | --- | --- |\n| ours | 91.2 |  |\n| a\\|b |  |  |\n| two lines here |  | x |")
    assert rows_to_markdown([], []) == ""


# ---- readers on fixtures ------------------------------------------------------------------------

def test_read_scigen_fixture(tmp_path):
    assert read_scigen(write_jsonl(tmp_path/"sg.jsonl", SG)) == [TableBody(
        "1111.00001", 2, "Table 2: Scores on dev.", "| Model | F1 |\n| --- | --- |\n| ours | 91.2 |\n| base\\|line |  |", "scigen")]


def test_read_scitab_fixture_dedups_claims(tmp_path):
    st = {"qasper_paper_id": "1111.00002", "table_caption": "TABLE III: Accuracy", "table_column_names": ["Model", "Acc"],
          "table_content_values": [["A", "1.0"]], "claim": "A is best", "label": "supports", "table_id": "t1"}
    got = read_scitab(write_jsonl(tmp_path/"st.jsonl", st, {**st, "claim": "A is worst", "label": "refutes"}))
    assert got == [TableBody("1111.00002", 3, "TABLE III: Accuracy", "| Model | Acc |\n| --- | --- |\n| A | 1.0 |", "scitab")]


def test_read_uda_fixture_dedups_and_splits(tmp_path):
    u1 = {"qasper_paper_id": "1111.00003", "qasper_question_id": "q1",
          "table_markdown": "\nTable 1: Data.\n| a | b |\n|---|---|\n| 1 | 2 |\n"}
    u2 = {**u1, "qasper_question_id": "q2", "table_markdown": "\nTable 1: Data.\n| a   | b |\n|-----|---|\n| 1   | 2 |\n"}
    u3 = {**u1, "qasper_question_id": "q3", "table_markdown": "Table 1: Data.\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
          "TABLE II. More\n### Dev\n| x | y |\n| --- | --- |\n| 3 |\n### Test\n| x | y |\n| --- | --- |\n| 4 | 5 |"}
    assert read_uda(write_jsonl(tmp_path/"uda.jsonl", u1, u2, u3)) == [
        TableBody("1111.00003", 1, "Table 1: Data.", "| a | b |\n| --- | --- |\n| 1 | 2 |", "uda"),
        TableBody("1111.00003", 2, "TABLE II. More", "| x | y |\n| --- | --- |\n| Dev |  |\n| 3 |  |\n| Test |  |\n| 4 | 5 |", "uda")]


def test_parse_markdown_tables_joins_bare_label_with_next_line():
    assert parse_markdown_tables("Table 3\nThe scores on MAE.\n| m | v |\n|---|---|\n|   |   |\n| a | 1 |") == [
        ("Table 3 The scores on MAE.", ["m", "v"], [["a", "1"]])]


def test_read_ibm_tdms_fixture_rebuilds_grid(tmp_path):
    def cell(n, r, c, m=()):
        return {"number": n, "isBolded": False, "associatedRows": r, "associatedColumns": c, "associatedMergedColumns": list(m)}
    ibm = {"qasper_paper_id": "1111.00004", "tables": [
        {"caption": "Table 1: Results on \nSQuAD. \n\n", "rows": ["A", "B"], "columns": ["EM", "F1"], "mergedAllColumns": ["dev"],
         "numberCells": [cell("2", ["B"], ["F1"]), cell("1", ["A"], ["EM"]), cell("3", ["A"], ["F1"]), cell("4", ["A"], ["EM"]),
                         cell("5", ["A", "A"], ["EM", "EM"], ["dev"])]},
        {"caption": "Table 2: empty", "rows": [], "columns": [], "mergedAllColumns": [], "numberCells": []}]}
    assert read_ibm_tdms(write_jsonl(tmp_path/"ibm.jsonl", ibm)) == [TableBody(
        "1111.00004", 1, "Table 1: Results on SQuAD.",
        "|  | dev / EM | EM | F1 |\n| --- | --- | --- | --- |\n| A | 5 | 1 | 3 |\n| A |  | 4 |  |\n| B |  |  | 2 |", "ibm_tdms")]


def test_bad_json_names_file_and_line(tmp_path):
    write_jsonl(tmp_path/"scigen_qasper_overlap.jsonl", SG, '{"qasper_paper_id": "1", "table_caption": ')
    with pytest.raises(QasperDataError, match=r"scigen_qasper_overlap\.jsonl, line 2: malformed JSON"):
        read_table_dir(tmp_path)
    write_jsonl(tmp_path/"uda_well_parsed_tables.jsonl", "", "[1, 2]")
    with pytest.raises(QasperDataError, match=r"uda_well_parsed_tables\.jsonl, line 2: expected a JSON object"):
        read_uda(tmp_path/"uda_well_parsed_tables.jsonl")
    write_jsonl(tmp_path/"x.jsonl", {"qasper_paper_id": "1"})
    with pytest.raises(QasperDataError, match=r"x\.jsonl, line 1: not a table record"):
        read_scitab(tmp_path/"x.jsonl")


def test_read_table_dir_missing_and_empty(tmp_path):
    assert read_table_dir(tmp_path) == []
    with pytest.raises(QasperDataError, match="no such folder"):
        read_table_dir(tmp_path/"nope")


# ---- matching -----------------------------------------------------------------------------------

def test_caption_similarity():
    assert normalize_caption("TABLE IV.  Results  on the Dev-set (F$_1$)!") == "results on the dev set f 1"
    assert caption_similarity("Table 3: Results on dev.", "results on DEV") == 1.0
    assert caption_similarity("Results on the dev set", "Results on the test set") == pytest.approx(0.8)
    assert caption_similarity("Table 3", "Table 3: Results") == 0.0
    assert 0.0 <= caption_similarity("a b c d", "x b y") <= 1.0


def toy_paper() -> Paper:
    fl = [Float.from_raw("Table 1: Statistics of the three corpora.", "2-Table1-1.png"),
          Float.from_raw("Table 2: Results on the development set.", "4-Table2-1.png"),
          Float.from_raw("Table 3: Ablation of the attention layer on the test set.", "5-Table3-1.png"),
          Float.from_raw("Figure 1: Statistics of the three corpora.", "2-Figure1-1.png")]
    return Paper("1111.00009", "Toy", "", (Section("Intro", ("text",)),), tuple(fl))


def body(n, cap, src="scigen", pid="1111.00009"):
    return TableBody(pid, n, cap, f"| {src} {n} |\n| --- |", src)


def sources(bodies, **kw):
    (p,), rep = attach_bodies([toy_paper()], bodies, **kw)
    return [f.body_source for f in p.floats], rep


def test_match_right_number():
    got, rep = sources([body(1, "Table 1: Statistics of the three corpora")])
    assert got == ["scigen", None, None, None]
    assert (rep.table_captions, rep.with_body, rep.by_source, rep.coverage) == (3, 1, {"scigen": 1}, pytest.approx(1 / 3))
    assert sources([body(3, "Table 3: Ablation of attention.")])[0][2] == "scigen"  # same number, loose caption


def test_match_wrong_number_same_caption():
    assert sources([body(5, "Table 5: Results on the development set")])[0] == [None, "scigen", None, None]


def test_no_match_below_bar():
    got, rep = sources([body(4, "Table 4: Ablation of the decoder.")])  # similarity 0.46, other number
    assert got == [None] * 4 and (rep.candidates, rep.unused) == (1, 1)
    assert sources([body(2, "Table 2: Examples of generated summaries.")])[0] == [None] * 4  # same number, unrelated
    assert sources([body(1, "Table 1: Statistics of the three corpora.", pid="2222.0")])[0] == [None] * 4


def test_preferred_source_wins():
    two = [body(2, "Table 2: Results on the dev set.", "ibm_tdms"), body(2, "Table 2: Results on the development set", "scitab"),
           body(2, "Results on the development set.", "uda")]
    assert sources(two)[0][1] == "uda"
    assert sources(two, prefer=("ibm_tdms", "scitab"))[0][1] == "ibm_tdms"


def test_body_used_once_and_existing_body_kept():
    got, rep = sources([body(1, "Table 1: Statistics of the three corpora."), body(7, "Table 7: Statistics of the three corpora.")])
    assert got == ["scigen", None, None, None] and rep.unused == 1
    assert str(rep) == "table bodies: 1/3 table captions (33.3%); by source: scigen 1; 2 candidate bodies, 1 unused"
    pre = toy_paper()
    pre = pre.with_floats([replace(pre.floats[0], body="| x |\n| --- |", body_source="arxiv"), *pre.floats[1:]])
    (p,), rep = attach_bodies([pre], [body(1, "Table 1: Statistics of the three corpora.")])
    assert (p.floats[0].body, rep.by_source) == ("| x |\n| --- |", {"arxiv": 1})


# ---- the shared files ---------------------------------------------------------------------------

@needs_shared
def test_shared_reader_counts():
    counts = {}
    for name, read in [("uda_well_parsed_tables.jsonl", read_uda), ("scigen_qasper_overlap.jsonl", read_scigen),
                       ("scitab_qasper_overlap.jsonl", read_scitab), ("ibm_tdms_qasper_overlap.jsonl", read_ibm_tdms)]:
        bodies = read(TABLES/name)
        counts[name.split("_")[0]] = (len(bodies), len({b.paper_id for b in bodies}))
        assert all(b.markdown.splitlines()[1].startswith("| ---") for b in bodies)
    assert counts == {"uda": (93, 84), "scigen": (65, 28), "scitab": (16, 6), "ibm": (54, 11)}
    assert len(read_table_dir(TABLES)) == 93 + 65 + 16 + 54


@needs_shared
def test_shared_uda_multi_table_lines_and_roman_numerals():
    uda = read_uda(TABLES/"uda_well_parsed_tables.jsonl")
    assert [b.number for b in uda if b.paper_id == "1703.07090"] == [2, 3, 4]
    assert len({(b.paper_id, b.number) for b in uda}) == len(uda)
    scitab = read_scitab(TABLES/"scitab_qasper_overlap.jsonl")
    assert [b.number for b in scitab if b.paper_id == "1807.07279"] == [8, 5, 7, 9, 6]  # TABLE VIII:, TABLE V:, ...


@needs_shared
def test_attach_to_shared_papers(corpus):
    "The train papers and the dev file (the shared test papers are kept for measuring): UDA and SciGen bodies of four dev papers."
    assert len(corpus) == 28
    attached, rep = attach_bodies(corpus, read_table_dir(TABLES))
    assert (rep.table_captions, rep.with_body, rep.by_source, rep.candidates, rep.unused) == (36, 4, {"uda": 3, "scigen": 1}, 5, 1)
    assert rep.coverage == pytest.approx(4 / 36)
    got = {(p.id, f.number, f.body_source) for p in attached for f in p.tables if f.body}
    assert got == {("1704.05572", 2, "uda"), ("1809.06537", 1, "uda"), ("1901.01010", 1, "scigen"), ("1902.09666", 3, "uda")}
    t3 = next(f for p in attached if p.id == "1902.09666" for f in p.tables if f.number == 3)
    assert t3.caption.startswith("Table 3: Distribution of label combinations in OLID.")
    assert t3.body.splitlines()[2] == "| OFF | TIN | IND | 2,407 | 100 | 2,507 |"
