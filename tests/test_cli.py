"""The `qasper-rag` command as a user runs it: the installed entry point in a subprocess."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qasper_rag.papers.chunking import chunk_paper_id

EXE = shutil.which("qasper-rag", path=str(Path(sys.executable).parent))


def run(*args):
    assert EXE, "qasper-rag is not installed in this environment (make setup)"
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=300)


def test_chunks_json_contract(dev_data):
    r = run("chunks", "--data", str(dev_data), "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    for key in ("papers", "chunks", "questions", "text_evidence", "text_evidence_mapped", "float_evidence",
                "float_evidence_mapped", "tables_with_body", "max_chunk_tokens"):
        assert key in s, key
    assert (s["papers"], s["questions"]) == (28, 185)
    assert s["text_evidence_mapped"] == s["text_evidence"] > 150
    assert s["float_evidence_mapped"] == s["float_evidence"] > 10
    assert s["tables_with_body"] == 4 and s["max_chunk_tokens"] <= 500


def test_chunks_of_one_paper(dev_data):
    r = run("chunks", "--data", str(dev_data), "--paper", "1909.00694")
    assert r.returncode == 0, r.stderr
    assert "1909.00694:abstract" in r.stdout and "1909.00694:table1" in r.stdout
    r = run("chunks", "--data", str(dev_data), "--paper", "1909.00694", "--json")
    ids = [c["id"] for c in json.loads(r.stdout)["chunks"]]
    assert ids[0] == "1909.00694:abstract" and len(ids) == len(set(ids))


@pytest.mark.parametrize("args, message", [
    (["--paper", "1909.0069"], "Did you mean 1909.00694"),
    (["--split", "validaton"], "unknown split 'validaton'"),
])
def test_bad_input_says_what_to_do(dev_data, args, message):
    r = run("chunks", "--data", str(dev_data), *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_malformed_file(tmp_path):
    (tmp_path / "q.json").write_text('{"x": ')
    r = run("chunks", "--data", str(tmp_path / "q.json"))
    assert r.returncode == 2 and "malformed JSON at line 1" in r.stderr


def _my_paper_pdf(path):
    "A two-column PDF of a small paper, typeset with reportlab (a dev dependency)."
    from qasper_rag.papers.data import Float, Paper, Section
    from qasper_rag.papers.typeset import typeset_pdf
    body = ("Researchers keep their drafts as PDFs, and a reader of such a paper wants answers with the passages they "
            "rest on. We read the columns, headings and captions of the paper back into sections. ") * 30  # two pages
    paper = Paper("x", "Reading My Own Paper", "We ask questions about a paper that exists only as a PDF.",
                  (Section("Introduction", (body, "The second paragraph of the introduction is short.")),
                   Section("Method ::: Data", ("We use twelve papers of our group, as Table 1 shows.",))),
                  (Float.from_raw("Table 1: The twelve papers of the group."),))
    return typeset_pdf(paper, path, references=["Doe, J. 2020. Reading layouts. In Proceedings of ACL."])


def test_chunks_of_a_pdf(tmp_path):
    pdf = _my_paper_pdf(tmp_path / "mypaper.pdf")
    r = run("chunks", "--pdf", str(pdf), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    chunks = {c["id"]: c for c in out["chunks"]}
    assert out["paper"] == "mypaper"
    ids = list(chunks)
    assert ids[0] == "mypaper:abstract" and ids[-2:] == ["mypaper:s1c0", "mypaper:table1"] and len(ids) > 4
    assert chunks["mypaper:abstract"]["text"].endswith("We ask questions about a paper that exists only as a PDF.")
    assert chunks["mypaper:s0c0"]["text"].startswith("Title: Reading My Own Paper. Section: Introduction. Researchers keep")
    assert chunks[ids[-3]]["text"].endswith("The second paragraph of the introduction is short.")
    assert chunks["mypaper:s1c0"]["section"] == "Method ::: Data"
    assert chunks["mypaper:table1"]["text"].endswith("Table 1: The twelve papers of the group.")
    assert not any("Doe, J." in c["text"] for c in out["chunks"])  # the reference list is kept apart
    texts = [c["text"][len("Title: Reading My Own Paper"):] for c in out["chunks"]]
    assert not any("Reading My Own Paper" in t or re.search(r"\b2\b", t) for t in texts)  # no running header, no page number


def test_pdf_that_cannot_be_read_says_what_to_do(tmp_path):
    (tmp_path / "notes.pdf").write_text("my notes, not a PDF")
    r = run("chunks", "--pdf", str(tmp_path / "notes.pdf"))
    assert r.returncode == 2 and "not a PDF" in r.stderr and "Traceback" not in r.stderr
    r = run("ask", "--pdf", str(tmp_path / "notes.pdf"), "What is it?")  # read before any model loads
    assert r.returncode == 2 and "not a PDF" in r.stderr
    r = run("ask", "--pdf", str(tmp_path / "notes.pdf"), "--paper", "1909.00694", "q?")
    assert r.returncode == 2 and "not allowed with argument" in r.stderr



def _my_paper_tex(root):
    "A two-file LaTeX source of a small paper, packed as an arXiv e-print (.tar.gz)."
    import tarfile
    src = root / "src"
    (src / "sections").mkdir(parents=True)
    (src / "main.tex").write_text(
        "\\documentclass{article}\n\\title{Reading My Own Source}\n\\begin{document}\n\\maketitle\n"
        "\\begin{abstract}We ask questions about a paper given as LaTeX.\\end{abstract}\n\\input{sections/method}\n"
        "\\begin{table}\\centering\\begin{tabular}{lr}Group & Papers \\\\ \\hline ours & 12 \\\\ \\end{tabular}"
        "\\caption{The papers of the group.}\\end{table}\n"
        "\\begin{thebibliography}{1}\\bibitem{doe} Doe, J. 2020. Reading layouts.\\end{thebibliography}\n\\end{document}\n")
    (src / "sections" / "method.tex").write_text(
        "\\section{Introduction}\nResearchers keep their drafts as LaTeX~\\cite{doe}.\n% TODO hidden remark\n\n"
        "A second paragraph.\n\\section{Method}\n\\subsection{Data}\nWe use twelve papers (Table~\\ref{t}).\n")
    with tarfile.open(root / "2101.00001v2.tar.gz", "w:gz") as tf:
        for p in sorted(src.rglob("*")): tf.add(p, arcname=p.relative_to(src).as_posix())
    return root / "2101.00001v2.tar.gz"


def test_chunks_of_a_tex_source(tmp_path):
    r = run("chunks", "--tex", str(_my_paper_tex(tmp_path)), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    chunks = {c["id"]: c for c in out["chunks"]}
    assert out["paper"] == "2101.00001v2"
    assert list(chunks) == ["2101.00001v2:abstract", "2101.00001v2:s0c0", "2101.00001v2:s1c0", "2101.00001v2:table1"]
    assert chunks["2101.00001v2:abstract"]["text"].endswith("We ask questions about a paper given as LaTeX.")
    assert chunks["2101.00001v2:s0c0"]["text"].startswith("Title: Reading My Own Source. Section: Introduction. Researchers keep")
    assert "as LaTeX BIBREF0." in chunks["2101.00001v2:s0c0"]["text"]
    assert chunks["2101.00001v2:s1c0"]["section"] == "Method ::: Data"
    assert "Table 1: The papers of the group." in chunks["2101.00001v2:table1"]["text"]
    assert not any("Doe, J." in c["text"] or "TODO" in c["text"] or "\\" in c["text"] for c in out["chunks"])
    (tmp_path / "figures").mkdir(); (tmp_path / "figures" / "plot.txt").write_text("x y")
    r = run("chunks", "--tex", str(tmp_path / "figures"))  # no .tex file: said before any model loads
    assert r.returncode == 2 and "no .tex file" in r.stderr and "Traceback" not in r.stderr


def test_ask_json_contract(shared_dir):
    """`ask` end to end with the tests' tiny generator (its answers are poor; the contract is what is checked)."""
    r = run("ask", "--data", str(shared_dir / "original_format" / "qasper-train-sample10.json"), "--paper", "1909.00694",
            "--config", "smoke", "--generator", "smollm2", "--json", "What is the seed lexicon?")
    assert r.returncode in (0, 1), r.stderr  # 1: the tiny model's reply could not be parsed (recorded, not raised)
    rec = json.loads(r.stdout)
    for key in ("answer", "sentences", "short_answer", "short_answer_type", "passages", "predicted_evidence", "context", "model", "config", "timings"):
        assert key in rec, key
    from qasper_rag.answer.short import SHORT_TYPES
    assert rec["short_answer_type"] in SHORT_TYPES and (rec["short_answer_type"] == "missing") == (not rec["short_answer"].strip())
    assert rec["model"].startswith("llama.cpp:") and rec["config"]["retrieval"]["name"] == "smoke"
    assert all(set(p) >= {"doc", "chunk_id", "section", "text", "location"} for p in rec["passages"])
    assert all(p["location"]["chunk_id"] == p["chunk_id"] and (p["location"]["paragraphs"] or p["location"]["section_index"] is None) for p in rec["passages"])  # where it is
    texts = {p["chunk_id"]: p["text"] for p in rec["passages"]}
    for s in rec["sentences"]:  # a shown sentence's supporting sentences, per passage it cites, are that passage's own words
        assert [c["doc"] for c in s.get("support", [])] == (s["citations"] if "support" in s else [])
        assert all(x["text"] == texts[c["chunk_id"]][x["start"]:x["end"]] for c in s.get("support", []) for x in c["sentences"])
    assert all(1 <= c <= len(rec["context"]) for s in rec["sentences"] for c in s["citations"])


def test_ask_prints_the_passages_before_the_model_has_written(shared_dir, monkeypatch):
    """`ask` in a terminal streams: the first passage line is on stdout when the generator's first `generate` call begins, and the
    reply is printed as written before the checked answer (the real tiny model, in process, wrapped to note what stdout held
    when each call began and returned; the order is checked, not the time)."""
    import contextlib, io
    from qasper_rag.core import generate
    from qasper_rag.cli import main
    out, calls, load = io.StringIO(), [], generate.load_generator
    class Noted:
        def __init__(self, gen): self.gen = gen
        def __getattr__(self, name): return getattr(self.gen, name)
        def generate(self, *a, **k):
            calls.append(("begin", out.getvalue(), "on_text" in k))
            try: return self.gen.generate(*a, **k)
            finally: calls.append(("return", out.getvalue(), "on_text" in k))
    monkeypatch.setattr(generate, "load_generator", lambda *a, **k: Noted(load(*a, **k)))
    with contextlib.redirect_stdout(out):
        rc = main(["ask", "--data", str(shared_dir / "original_format" / "qasper-train-sample10.json"), "--paper", "1909.00694",
                   "--config", "smoke", "--generator", "smollm2", "--verify", "lexical", "What is the seed lexicon?"])
    text = out.getvalue()
    assert rc in (0, 1), text
    first = next(l for l in text.splitlines() if l.startswith("  [Doc 1] "))
    assert calls[0][:1] == ("begin",) and first in calls[0][1] and calls[0][2]  # printed before the model began; the call streams
    assert "the model writes:" in calls[0][1] and calls[1][0] == "return"
    reply = text.split("the model writes:\n", 1)[1]
    checked = max(reply.find("\nshort answer ("), reply.find("\nno answer:"))
    assert checked > 0 and reply[:checked].strip()  # the reply as written, then the checked answer


def test_library_add_list_and_ask(shared_dir, tmp_path):
    """`add` reads a PDF, a LaTeX e-print and a QASPER file into a library (a bad file is reported, the rest go in),
    skips unchanged sources, re-reads a changed one; `ask --library` routes to the paper and names it in every citation."""
    pdf = _my_paper_pdf(tmp_path / "mypaper.pdf")
    tex = _my_paper_tex(tmp_path)
    qasper = shared_dir / "original_format" / "qasper-train-sample10.json"
    (tmp_path / "notes.docx").write_text("x")
    lib = tmp_path / "lib"
    r = run("add", str(pdf), str(tex), str(qasper), str(tmp_path / "notes.docx"), "--library", str(lib), "--json", "--quiet")
    assert r.returncode == 1, r.stderr  # one source failed, the others were added
    out = json.loads(r.stdout)
    assert [s["status"] for s in out["sources"]] == ["added", "added", "added", "failed"]
    assert "cannot add this kind of file" in out["sources"][3]["message"]
    assert out["sources"][0]["papers"] == ["mypaper"] and out["sources"][1]["papers"] == ["2101.00001v2"]
    assert out["papers"] == 12 and out["index"]["chunks"] > 12
    manifest = json.loads((lib / "manifest.json").read_text())
    assert manifest["papers"]["2101.00001v2"]["stats"]["tables"] == 1 and manifest["papers"]["2101.00001v2"]["stats"]["table_bodies"] == 1
    assert manifest["papers"]["mypaper"]["kind"] == "pdf" and len(manifest["papers"]["mypaper"]["sha256"]) == 64
    r = run("add", str(pdf), str(tex), str(qasper), "--library", str(lib), "--json", "--quiet")
    again = json.loads(r.stdout)
    assert r.returncode == 0 and [s["status"] for s in again["sources"]] == ["unchanged"] * 3 and again["index"] is None
    r = run("library", str(lib))
    assert r.returncode == 0 and "Reading My Own Source" in r.stdout and "12 papers from 3 sources" in r.stdout
    r = run("ask", "--library", str(lib), "--paper", "nope", "q?")  # refused before any model loads
    assert r.returncode == 2 and "is not in the library" in r.stderr and "12 in all" in r.stderr and "qasper-rag library" in r.stderr
    r = run("ask", "--library", str(tmp_path / "elsewhere"), "q?")
    assert r.returncode == 2 and "not a library" in r.stderr and "qasper-rag add" in r.stderr
    r = run("ask", "--library", str(lib), "--config", "smoke", "--generator", "smollm2", "--json",
            "How many papers of their group do they use, as read from the LaTeX source?")
    assert r.returncode in (0, 1), r.stderr
    rec = json.loads(r.stdout)
    assert rec["paper"]["id"] == "2101.00001v2" and rec["paper"]["title"] == "Reading My Own Source"
    assert rec["route"]["papers"][0][0] == "2101.00001v2"
    assert all(c["chunk_id"].startswith("2101.00001v2:") for c in rec["context"])
    assert all(p["paper"]["title"] == "Reading My Own Source" for p in rec["passages"])
    r = run("ask", "--library", str(lib), "--config", "smoke", "--generator", "smollm2", "--json", "What are the results?")
    rec = json.loads(r.stdout)
    assert rec["route"]["ambiguous"] and "could be about several papers" in rec["notice"], rec["route"]
    # an ambiguous route answers from its first three papers: every passage sent is theirs and names its paper
    firsts = [p for p, _ in rec["route"]["papers"][:3]]
    assert "answered from passages of the 3 closest" in rec["notice"] and all(p in rec["notice"] for p in firsts)
    sent = {chunk_paper_id(c["chunk_id"]) for c in rec["context"]}
    assert sent <= set(firsts) and len(sent) >= 2, (sent, firsts)
    assert all(p["paper"]["id"] == chunk_paper_id(p["chunk_id"]) for p in rec["passages"])
    assert all(" / " in c["section"] for c in rec["context"])
    r = run("ask", "--library", str(lib), "--config", "smoke", "--generator", "smollm2", "--json", "--papers", "2", "What are the results?")
    rec = json.loads(r.stdout)  # --papers 2: the same route, answered from its first two papers
    assert "answered from passages of the 2 closest" in rec["notice"] and {chunk_paper_id(c["chunk_id"]) for c in rec["context"]} <= set(firsts[:2])
    r = run("ask", "--library", str(lib), "--papers", "0", "q?")
    assert r.returncode == 2 and "argument --papers: 0 is not allowed here: give a whole number of 1 or more" in r.stderr
    r = run("ask", "--paper", "1909.00694", "--papers", "2", "q?")
    assert r.returncode == 2 and "use it with --library" in r.stderr


def test_adapt_writes_questions_and_manifest_and_resumes(shared_dir, tmp_path):
    "`adapt` with the tests' tiny generator: questions for a sample of chunks, a manifest, and a resumed rerun that asks nothing again."
    args = ("adapt", "--data", str(shared_dir / "original_format" / "qasper-train-sample10.json"), "--out", str(tmp_path / "run"),
            "--generator", "smollm2", "--max-chunks", "2", "--questions-per-chunk", "2", "--no-train", "--quiet")
    r = run(*args)
    assert r.returncode == 0, r.stderr
    man = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert man["settings"]["max_chunks"] == 2 and len(man["papers"]) == 10 and len(man["questions_sha256"]) == 64
    assert man["steps"]["questions"]["chunks_done"] == 2 and man["steps"]["questions"]["chunks_new"] == 2
    assert "2 of 2 chunks have questions" in r.stdout
    r = run(*args)
    assert r.returncode == 0 and json.loads((tmp_path / "run" / "manifest.json").read_text())["steps"]["questions"]["chunks_new"] == 0
    r = run(*args[:-4], "--questions-per-chunk", "3", "--no-train", "--quiet")
    assert r.returncode == 2 and "other settings (questions_per_chunk)" in r.stderr
    # training: each chunk's questions replaced by one written here that passed the round trip, with another chunk of its
    # paper as the hard negative (what the tiny model writes is not a question often enough to train on)
    from qasper_rag.papers.data import load_path
    from qasper_rag.retrieve.retrieval import Retriever
    papers, chunker = load_path(shared_dir / "original_format" / "qasper-train-sample10.json"), Retriever("offline").chunker
    qfile = tmp_path / "run" / "questions.jsonl"
    lines = [json.loads(l) for l in qfile.read_text().splitlines()]
    for d in lines:
        other = next(c.id for c in chunker(papers.paper(d["paper_id"])) if c.id != d["chunk_id"])
        d["questions"] = [{"text": "What do the authors report in this part of the paper?", "rank": 1, "kept": True, "negatives": [other]}]
    qfile.write_text("".join(json.dumps(d) + "\n" for d in lines))
    r = run(*args[:-2], "--batch-size", "2", "--cross-epochs", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    man = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert man["steps"]["training"]["triples"] == 2 and man["steps"]["cross_training"]["pairs"] == 4 and man["settings"]["cross_epochs"] == 1
    assert (tmp_path / "run" / "cross-encoder" / "model.safetensors").is_file() and "cross-encoder on 4 pairs" in r.stdout
    r = run(*args[:-2], "--batch-size", "2", "--no-cross-encoder", "--quiet")
    assert r.returncode == 0 and "cross-encoder" not in r.stdout and "trained on 2 triples" in r.stdout


def test_ask_unknown_generator(shared_dir):
    r = run("ask", "--data", str(shared_dir / "original_format" / "qasper-train-sample10.json"), "--paper", "1909.00694", "--generator", "gpt-9", "q?")
    assert r.returncode == 2 and "unknown generator 'gpt-9'" in r.stderr


def test_bench_measures_renders_and_resumes(dev_data, tmp_path):
    "`qasper-rag bench`: a section measured into bench.json and its page rendered; a rerun keeps it; a bad section is refused."
    out = tmp_path / "bench"
    r = run("bench", "--quick", "--sections", "chunking", "--out", str(out), "--data", str(dev_data), "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "bench.json").read_text())
    assert list(doc["sections"]) == ["chunking"] and doc["quick"] is True
    ch = doc["sections"]["chunking"]
    assert ch["papers"] == 2 and ch["chunks"] > 2 and ch["tokens_per_s"] > 0
    page = (out / "bench.html").read_text()
    assert "Findings" in page and "papers/s" in page
    r = run("bench", "--quick", "--sections", "chunking", "--out", str(out), "--no-page", "--quiet")
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "bench.json").read_text())["sections"]["chunking"] == ch  # kept, not measured again
    r = run("bench", "--sections", "speed", "--out", str(out), "--no-page")
    assert r.returncode == 2 and "unknown benchmark section" in r.stderr and "chunking" in r.stderr
