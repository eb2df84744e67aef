"""Bad inputs a new user gives (issue 43): each is refused with a message that says what to pass instead, before any model loads."""
import shutil, subprocess, sys
from pathlib import Path

import pytest

from qasper_rag.papers.data import MAX_QUESTION_CHARS

EXE = shutil.which("qasper-rag", path=str(Path(sys.executable).parent))


def run(*args, timeout=300):
    assert EXE, "qasper-rag is not installed in this environment (make setup)"
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=timeout)


class NoModel:
    "A generator that must not be asked: the input is refused before generation."
    name, supports_grammar = "no-model", False
    def generate(self, *a, **k): raise AssertionError("the model was asked")
    def tokenizer(self): return None


LONG = "Considering the whole setup described in the paper and all its experiments, " * 200 + "what is the seed lexicon?"


def test_a_question_over_the_limit_is_refused_with_the_limit_and_what_to_do(shared_dir, tmp_path):
    assert len(LONG) > MAX_QUESTION_CHARS
    r = run("ask", "--data", str(shared_dir / "original_format" / "qasper-train-sample10.json"), "--paper", "1909.00694", LONG)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"the question has {len(LONG):,} characters, more than the 1,000 a question may have" in r.stderr
    assert "Ask the question itself in a sentence or two" in r.stderr and 'qasper-rag ask --paper ID "' in r.stderr
    # the Python API refuses it the same way, before retrieval or generation
    from qasper_rag.answer.answer import Answerer
    from qasper_rag.papers.data import load_path
    from qasper_rag.retrieve.retrieval import Retriever
    from qasper_rag.retrieve.config import get_config
    ans = Answerer(Retriever(get_config("bm25-only"), cache_dir=tmp_path), NoModel())
    paper = load_path(shared_dir / "original_format" / "qasper-train-sample10.json").paper("1909.00694")
    with pytest.raises(ValueError, match=r"more than the 1,000 a question may have.*answerer\.ask\(paper, \"What"):
        ans.ask(paper, LONG)


def test_a_file_given_as_the_library_folder_is_refused_with_what_to_pass(shared_dir, tmp_path):
    (tmp_path / "libfile").write_text("my notes")
    qasper = str(shared_dir / "original_format" / "qasper-train-sample10.json")
    for args in (("add", qasper, "--library", str(tmp_path / "libfile")), ("ask", "--library", str(tmp_path / "libfile"), "q?"),
                 ("library", str(tmp_path / "libfile"))):
        r = run(*args)
        assert r.returncode == 2 and "Not a directory" not in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert f"{tmp_path / 'libfile'} is a file, not a folder: --library takes a library folder" in r.stderr
        assert f"--library {tmp_path / 'library'}" in r.stderr  # what to pass instead
    assert (tmp_path / "libfile").read_text() == "my notes"


def _encrypted_pdf(path, password="secret"):
    "A one-page paper encrypted with a user password (reportlab's standard encryption)."
    from reportlab.lib import pdfencrypt
    from reportlab.pdfgen import canvas
    c = canvas.Canvas(str(path), encrypt=pdfencrypt.StandardEncryption(password, "owner"))
    c.setFont("Helvetica", 11)
    for i, line in enumerate(["Abstract", "We count emperor penguins in satellite images of Antarctica.", "1 Introduction",
                              "Penguins live in colonies that can be seen from space, so we count them there."]):
        c.drawString(72, 720 - 18 * i, line)
    c.showPage(); c.save()
    return path


def test_an_encrypted_pdf_says_to_pass_password_and_password_reads_it(tmp_path):
    pdf = _encrypted_pdf(tmp_path / "locked.pdf")
    r = run("chunks", "--pdf", str(pdf))
    assert r.returncode == 2 and "encrypted and needs a password: pass it with --password PW" in r.stderr, r.stderr
    assert "load_pdf(path, password=PW) in Python" in r.stderr  # the Python way is said second, for library users
    r = run("chunks", "--pdf", str(pdf), "--password", "wrong")
    assert r.returncode == 2 and "the password given is wrong: pass the right one with --password PW" in r.stderr
    r = run("chunks", "--pdf", str(pdf), "--password", "secret", "--json")
    assert r.returncode == 0 and "colonies that can be seen from space" in r.stdout, r.stderr
    r = run("ask", "--pdf", str(pdf), "What do they count?")  # refused before any model loads
    assert r.returncode == 2 and "--password PW" in r.stderr
    lib = tmp_path / "lib"
    r = run("add", str(pdf), "--library", str(lib), "--json", "--quiet")
    assert r.returncode == 1 and "--password PW" in r.stdout
    r = run("add", str(pdf), "--library", str(lib), "--password", "secret", "--json", "--quiet")
    assert r.returncode == 0 and '"status": "added"' in r.stdout, r.stderr


def test_an_unreachable_server_says_what_to_start_without_urllib3s_repr(shared_dir):
    from qasper_rag.core.llm import GeneratorUnavailable
    from qasper_rag.core.server import OpenAIGenerator, START_SERVER_HINT, free_port
    port = free_port()  # nothing listens there
    with pytest.raises(GeneratorUnavailable) as e:
        OpenAIGenerator(f"http://127.0.0.1:{port}/v1", model="m", retries=0).generate([{"role": "user", "content": "hi"}], max_tokens=4)
    msg = str(e.value)
    assert msg.startswith(f"cannot reach the LLM server at http://127.0.0.1:{port}/v1/chat/completions "
                          "(connection refused: nothing listens on that port; 1 try). Is it running? If not, start one"), msg
    assert msg.endswith(START_SERVER_HINT) and "--generator openai:<model>@<url>" in msg
    assert not any(s in msg for s in ("HTTPConnection", "NewConnectionError", "object at 0x", "Max retries")), msg
    with pytest.raises(GeneratorUnavailable, match="the host name cannot be resolved"):
        OpenAIGenerator("http://no-such-host.invalid:8000/v1", model="m", retries=0).models()
    # the command line: the same message, and the exit code of an error
    r = run("ask", "--data", str(shared_dir / "original_format" / "qasper-train-sample10.json"), "--paper", "1909.00694",
            "--config", "bm25-only", "--verify", "none", "--generator", f"openai:m@http://127.0.0.1:{port}/v1", "What is the seed lexicon?")
    assert r.returncode == 2 and "connection refused: nothing listens on that port" in r.stderr and "HTTPConnection" not in r.stderr, r.stderr
    assert r.stderr.rstrip().endswith("or set $QASPER_LLM_BASE_URL")
