"""Nothing lost under faults (issue 43): writers killed at random points, two writers at once, a file of each kind cut short
or damaged, a full disk during an evaluation, the same PDF added twice, a library moved. After each fault the folder opens
whole (or repaired, saying so), nothing already written is lost, and the next run says what it did.

No LLM: the evaluation's generator is a canned one, libraries use the `bm25-only` preset (no embedder), and the
indexes written under kills hold random vectors. Kill points are drawn from a seeded generator over the measured length
of an unkilled run, so the test never waits on a clock."""
import errno, io, json, os, random, shutil, signal, subprocess, sys, time
from contextlib import redirect_stderr
from pathlib import Path

import numpy as np
import pytest

import qasper_rag.core.files as files
from qasper_rag.papers.data import load_path
from qasper_rag.core.files import folder_lock, read_jsonl, stale_temps
from qasper_rag.answer.library import Library, LibraryError
from qasper_rag.answer.library_answer import Router

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
RNG = random.Random(43)


# --- helpers -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sources(tmp_path_factory, shared_dir):
    "The ten shared train papers, one QASPER file each: ten sources to add."
    d = tmp_path_factory.mktemp("sources")
    data = json.loads((shared_dir / "original_format" / "qasper-train-sample10.json").read_text())
    for pid, entry in data.items(): (d / f"{pid}.json").write_text(json.dumps({pid: entry}))
    return sorted(d.glob("*.json"))


ADD = """import sys
from qasper_rag.answer.library import Library
lib = Library(sys.argv[1], create=True, retrieval="bm25-only")
rows = lib.add(sys.argv[2:], progress=False)
print("indexed", lib.index()["chunks"], [r.status for r in rows], flush=True)
"""


def _add(root, paths, **kw):
    return subprocess.Popen([sys.executable, "-c", ADD, str(root), *map(str, paths)], env=ENV, text=True, **kw)


def _whole(root: Path) -> Library | None:
    "The library at `root` opened as a user would, checked whole: every paper it names reads; None when none was made yet."
    try: lib = Library(root)
    except LibraryError as e:
        assert "not a library (no manifest.json)" in str(e), e  # killed before its first manifest: nothing to lose yet
        return None
    for pid in lib.paper_ids: assert lib.paper(pid).id == pid
    return lib


# --- writers killed at random points ------------------------------------------------------------------

def test_add_killed_at_random_points_leaves_a_library_that_opens_and_finishes(tmp_path, sources):
    clean = tmp_path / "clean"
    t0 = time.perf_counter()
    r = _add(clean, sources, stdout=subprocess.PIPE, stderr=subprocess.PIPE); out, err = r.communicate(timeout=300)
    length = time.perf_counter() - t0  # how long an unkilled add runs here: the range the kill points are drawn from
    assert r.returncode == 0, err
    want = Library(clean)
    root = tmp_path / "lib"
    for k in range(3):
        p = _add(root, sources, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try: p.wait(timeout=RNG.uniform(0.2, 1.0) * length)
        except subprocess.TimeoutExpired: pass
        p.send_signal(signal.SIGKILL); p.wait()
        with redirect_stderr(io.StringIO()): _whole(root)  # opens whole (or repaired, saying so) at whatever point the kill hit
    r = _add(root, sources, stdout=subprocess.PIPE, stderr=subprocess.PIPE); out, err = r.communicate(timeout=300)
    assert r.returncode == 0, err
    lib = _whole(root)
    assert lib.paper_ids == want.paper_ids and lib.manifest["index"]["chunks"] == want.manifest["index"]["chunks"]
    assert [lib.paper(i) for i in lib.paper_ids] == [want.paper(i) for i in want.paper_ids]
    assert stale_temps(root) == [] and stale_temps(root / "papers") == []  # what the kills left half written is gone


SAVE = """import sys, numpy as np
from qasper_rag.retrieve.bm25 import BM25Index
from qasper_rag.retrieve.dense import DenseIndex, INDEX_VERSION
rng = np.random.default_rng(0)
dense = DenseIndex(None, params={"version": INDEX_VERSION, "embedder": "vectors", "dim": 64, "long_text": "truncate", "chunker": ""})
dense.add(rng.normal(size=(30000, 64)).astype(np.float32), [f"c{i}" for i in range(30000)])
bm = BM25Index().index([f"passage {i} about penguins number {i % 97}" for i in range(5000)], [f"c{i}" for i in range(5000)])
while True:
    dense.save(sys.argv[1] + "/dense"); bm.save(sys.argv[1] + "/bm25"); print("saved", flush=True)
"""


def test_index_saves_killed_at_random_points_never_load_damaged(tmp_path):
    from qasper_rag.retrieve.bm25 import BM25Index
    from qasper_rag.retrieve.dense import DenseIndex
    ref = None
    for k in range(4):  # each writer saves both indexes again and again over the last one's files; the kill lands in some save
        p = subprocess.Popen([sys.executable, "-c", SAVE, str(tmp_path)], env=ENV, stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "saved"
        t0 = time.perf_counter(); assert p.stdout.readline().strip() == "saved"; length = time.perf_counter() - t0
        time.sleep(RNG.uniform(0, 1) * length)
        p.send_signal(signal.SIGKILL); p.wait()
        for name, load in (("dense", DenseIndex.load), ("bm25", BM25Index.load)):
            try: idx = load(tmp_path / name)
            except FileNotFoundError as e:  # killed inside a save: no params.json, so its user builds it again
                assert "params.json" in str(e); continue
            assert idx.ids == [f"c{i}" for i in range(30000 if name == "dense" else 5000)]  # loaded: whole, as saved
            if name == "dense": ref = idx.vectors if ref is None else ref; assert np.array_equal(idx.vectors, ref)
            else: assert idx.search("penguins number 5", 1)[0][0] in {f"c{i}" for i in range(5, 5000, 97)}


EVAL = """import sys, time
from qasper_rag.papers.data import load_path
from qasper_rag.evaluate.evaluate import evaluate
sys.path.insert(0, sys.argv[3]); from test_faults import canned_answerer
evaluate(load_path(sys.argv[1]), canned_answerer(sys.argv[2] + "/cache", delay=float(sys.argv[4])), None, sys.argv[2] + "/run",
         {"config": "bm25-only", "generator": "canned"}, limit=8, progress=False)
"""


class Canned:
    "A generator that answers every question the same way, after `delay` seconds (so a run lasts long enough to be killed)."
    name, supports_grammar = "canned", False
    def __init__(self, delay: float = 0.0): self.delay = delay
    def generate(self, messages, max_tokens, temperature=0.0, stop=None, grammar=None):
        from qasper_rag.core.llm import Generation
        time.sleep(self.delay)
        return Generation("Reasoning: Doc 1 says it.\nAnswer: The passages describe it [Doc 1].\nShort answer: a seed lexicon", 10, 10, 0.0, "canned", "stop")
    def tokenizer(self): return None


def canned_answerer(cache, delay: float = 0.0):
    from qasper_rag.answer.answer import Answerer
    from qasper_rag.retrieve.retrieval import Retriever
    from qasper_rag.retrieve.config import get_config
    return Answerer(Retriever(get_config("bm25-only"), cache_dir=cache), Canned(delay), max_tokens=40)


def test_eval_killed_at_random_points_resumes_without_losing_an_answer(tmp_path, shared_dir):
    from qasper_rag.evaluate.runs import RunDir
    from qasper_rag.evaluate.evaluate import evaluate
    data = shared_dir / "original_format" / "qasper-train-sample10.json"
    records, kept = tmp_path / "run" / "records.jsonl", []
    for k in range(3):
        p = subprocess.Popen([sys.executable, "-c", EVAL, str(data), str(tmp_path), str(Path(__file__).parent), "0.1"], env=ENV,
                             stdout=subprocess.DEVNULL, stderr=open(tmp_path / "err.txt", "w"))
        while p.poll() is None and (not records.exists() or records.read_bytes().count(b"\n") <= len(kept)): time.sleep(0.02)
        time.sleep(RNG.uniform(0, 0.3))  # about one question's length: the kill lands in a question or in its write
        p.send_signal(signal.SIGKILL); p.wait()
        assert p.returncode in (0, -signal.SIGKILL), (tmp_path / "err.txt").read_text()[-2000:]
        with redirect_stderr(io.StringIO()): now = [r["question_id"] for r in RunDir(tmp_path / "run").records(repair=True)]
        assert now[:len(kept)] == kept and len(now) == len(set(now))  # every answer written before the kill is still there, once
        kept = now
    with redirect_stderr(err := io.StringIO()):
        m = evaluate(load_path(data), canned_answerer(tmp_path / "cache"), None, tmp_path / "run", {"config": "bm25-only", "generator": "canned"},
                     limit=8, progress=False)
    ids = [json.loads(l)["question_id"] for l in records.read_text().splitlines()]
    assert ids[:len(kept)] == kept and len(ids) == len(set(ids)) == 8 and m["finished"] == 8
    if len(kept) < 8: assert f"resuming the run: {len(kept)} of 8 questions already answered" in err.getvalue()


# --- two writers at once ---------------------------------------------------------------------------------

def test_two_adds_into_one_library_at_once_keep_both(tmp_path, sources):
    root = tmp_path / "lib"
    logs = [tmp_path / "a.err", tmp_path / "b.err"]
    with folder_lock(root, "the test"):  # both start while the lock is held, so they meet whatever the machine's speed
        procs = [_add(root, half, stdout=subprocess.PIPE, stderr=open(log, "w")) for half, log in zip((sources[:5], sources[5:]), logs)]
        deadline = time.time() + 300
        while not all("waiting for it to finish" in log.read_text() for log in logs) and time.time() < deadline: time.sleep(0.05)
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [log.read_text() for log in logs]
    for log in logs: assert f"the library {root} is being changed by process {os.getpid()}" in log.read_text()
    lib = _whole(root)
    assert len(lib.paper_ids) == 10 and len(lib.manifest["sources"]) == 10  # neither add's papers were lost to the other's manifest
    assert "indexed" in outs[0] and "indexed" in outs[1]
    assert lib.manifest["index"]["chunks"] == int(max(outs, key=lambda o: int(o.split()[1])).split()[1])  # the later index has all


# --- a file of each kind cut short or damaged ------------------------------------------------------------

def _cut(path: Path, keep: float = 0.5):
    data = path.read_bytes(); path.write_bytes(data[:int(len(data) * keep)])


def test_a_damaged_judge_cache_is_read_past_and_keeps_working(tmp_path):
    from qasper_rag.core.llm import ProbabilityCache
    f = tmp_path / "judge_cache.jsonl"
    c = ProbabilityCache(f)
    for k in range(5): c.put(f"k{k}", k / 10)
    raw = f.read_bytes().replace(b'"k2"', b'"k\xff')  # a damaged byte in the middle
    f.write_bytes(raw[:-7])  # and the last line cut short
    with redirect_stderr(err := io.StringIO()): c = ProbabilityCache(f)
    assert "skipped 2 damaged line(s) (the last one cut short); kept 3 scores" in err.getvalue(), err.getvalue()
    assert [c.get(f"k{k}") for k in range(5)] == [0.0, 0.1, None, 0.3, None]
    c.put("k4", 0.4); c.put("k5", 0.5)  # it keeps working: new scores are appended on lines of their own
    with redirect_stderr(io.StringIO()): again = ProbabilityCache(f)
    assert (again.get("k4"), again.get("k5"), len(again)) == (0.4, 0.5, 5)


def test_damaged_run_files_are_dropped_said_or_rewritten(tmp_path, shared_dir):
    from qasper_rag.evaluate.runs import RunDir
    from qasper_rag.evaluate.evaluate import evaluate
    data, run = load_path(shared_dir / "original_format" / "qasper-train-sample10.json"), tmp_path / "run"
    go = lambda limit: evaluate(data, canned_answerer(tmp_path / "cache"), None, run, {"config": "bm25-only", "generator": "canned"},
                                limit=limit, progress=False)
    with redirect_stderr(io.StringIO()): go(3)
    before = (run / "records.jsonl").read_bytes()
    (run / "records.jsonl").write_bytes(before[:-40])  # the last record cut short (a kill in its write)
    (run / "metrics.json").write_text('{"run": {"wall_s"')  # metrics cut short
    with redirect_stderr(err := io.StringIO()): m = go(3)
    assert "dropped its last line, cut short by an interrupted write" in err.getvalue() and "2 answers kept" in err.getvalue()
    assert "metrics.json was damaged: it is written again from the records" in err.getvalue()
    assert m["finished"] == 3 and json.loads((run / "metrics.json").read_text())["finished"] == 3
    lines = (run / "records.jsonl").read_bytes().splitlines(keepends=True)
    assert b"".join(lines[:2]) == before[:len(b"".join(lines[:2]))]  # the two whole answers untouched
    (run / "records.jsonl").write_bytes(lines[0] + b'{"question_id": \n' + b"".join(lines[1:]))  # damaged mid-file: refused, saying how
    with pytest.raises(ValueError, match=r"line 2 is damaged and 2 lines follow it; delete that line to answer its question again, or pass --restart"):
        RunDir(run).records()
    (run / "records.jsonl").write_bytes(b"".join(lines))
    (run / "run.json").write_text('{"config": "bm')
    with pytest.raises(ValueError, match=r"run.json is damaged .*pass --restart to start the run over"): go(3)


def test_a_damaged_library_index_is_said_and_built_again(tmp_path, sources):
    r = _add(tmp_path / "lib", sources[:3], stdout=subprocess.PIPE, stderr=subprocess.PIPE); r.communicate(timeout=300)
    lib = Library(tmp_path / "lib")
    (folder,) = (tmp_path / "lib" / "cache" / "indexes").glob("bm25-*")
    ranked = Router.of(lib).route("What is the seed lexicon?").candidates()
    _cut(folder / "tokens.npy")
    with redirect_stderr(err := io.StringIO()): info = Library(tmp_path / "lib").index()
    assert f"{folder}: cannot use this saved index" in err.getvalue() and "tokens.npy has" in err.getvalue(), err.getvalue()
    assert info["chunks"] == lib.manifest["index"]["chunks"]
    assert Router.of(Library(tmp_path / "lib")).route("What is the seed lexicon?").candidates() == ranked  # rebuilt the same
    with redirect_stderr(err := io.StringIO()): Library(tmp_path / "lib").index()
    assert err.getvalue() == ""  # whole again: loaded, nothing said


def test_a_damaged_library_manifest_or_paper_file_is_repaired_saying_what_to_add(tmp_path, sources):
    r = _add(tmp_path / "lib", sources[:3], stdout=subprocess.PIPE, stderr=subprocess.PIPE); r.communicate(timeout=300)
    root = tmp_path / "lib"
    first = Library(root).paper_ids[0]
    _cut(root / "papers" / f"{first}.json")
    with redirect_stderr(err := io.StringIO()): lib = Library(root)
    assert first not in lib.paper_ids and len(lib) == 2
    src = next(s for s in sources if s.stem == first)
    assert f"removed 1 damaged paper(s) from the library ({first}): a file missing or cut short" in err.getvalue()
    assert f"qasper-rag add {src} --library {root}" in err.getvalue()
    with redirect_stderr(io.StringIO()): rows = lib.add([src], progress=False)
    assert rows[0].status == "added" and len(Library(root)) == 3  # added again as it said
    _cut(root / "manifest.json")
    with redirect_stderr(err := io.StringIO()): lib = Library(root)
    assert "manifest.json was damaged: restored the copy kept before the last change (2 papers)" in err.getvalue()
    (root / "manifest.json.bak").write_text("{")
    _cut(root / "manifest.json")
    with pytest.raises(LibraryError, match="is damaged and no earlier copy of it can be read; add the sources to a new library"): Library(root)


def test_a_damaged_adapted_model_is_refused_with_what_to_run(tmp_path):
    from qasper_rag.retrieve.dense import MODEL_DIR, load_adapted
    from qasper_rag.core.files import DamagedFiles
    weights = os.urandom(4096)
    (tmp_path / MODEL_DIR).mkdir(); (tmp_path / MODEL_DIR / "model.safetensors").write_bytes(weights[:2048])  # a copy cut short
    import hashlib
    (tmp_path / "manifest.json").write_text(json.dumps({"steps": {"training": {"weights_sha256": hashlib.sha256(weights).hexdigest()}}}))
    with pytest.raises(DamagedFiles, match=rf"model.safetensors is damaged: .*run `qasper-rag adapt --out {tmp_path}` again"): load_adapted(tmp_path)
    (tmp_path / "manifest.json").write_text('{"steps": {"train')
    with pytest.raises(DamagedFiles, match=r"manifest.json is damaged .*run `qasper-rag adapt --out"): load_adapted(tmp_path)


# --- a full disk during an evaluation -------------------------------------------------------------------

def _full_disk_at(monkeypatch, when):
    "Make `files._write_all` write half its bytes and raise ENOSPC when `when(path)` is true for the file written."
    real = files._write_all
    def write(fd, data):
        if when(os.readlink(f"/proc/self/fd/{fd}")):
            os.write(fd, data[:len(data) // 2]); raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data)
    monkeypatch.setattr(files, "_write_all", write)


def test_a_full_disk_during_eval_loses_nothing_written_and_the_next_run_resumes(tmp_path, shared_dir, monkeypatch):
    from qasper_rag.evaluate.evaluate import evaluate
    data, run = load_path(shared_dir / "original_format" / "qasper-train-sample10.json"), tmp_path / "run"
    go = lambda limit: evaluate(data, canned_answerer(tmp_path / "cache"), None, run, {"config": "bm25-only", "generator": "canned"},
                                limit=limit, progress=False)
    appends = []
    _full_disk_at(monkeypatch, lambda p: p.endswith("records.jsonl") and (appends.append(p) or len(appends) == 3))
    with pytest.raises(OSError, match=r"cannot append the answer to question .* \(No space left on device\); the 2 answers before it are kept: "
                                      r"free some space, then run the same command again") as e:
        go(5)
    assert e.value.errno == errno.ENOSPC
    rows, bad, torn = read_jsonl(run / "records.jsonl")
    assert (len(rows), bad, torn) == (2, [], False) and not (run / "metrics.json").exists()  # no half line left by the failed write
    monkeypatch.undo()
    with redirect_stderr(err := io.StringIO()): m = go(5)
    assert f"{run}: resuming the run: 2 of 5 questions already answered, 3 to go" in err.getvalue()
    assert m["finished"] == 5 and len(read_jsonl(run / "records.jsonl")[0]) == 5
    old = (run / "metrics.json").read_bytes(), (run / "predictions.jsonl").read_bytes()
    _full_disk_at(monkeypatch, lambda p: Path(p).name.startswith((".predictions.jsonl.", ".metrics.json.")))  # full when writing the outputs
    with pytest.raises(OSError, match=r"cannot write predictions.jsonl and metrics.json \(No space left on device\); the 6 answers in records.jsonl are whole"):
        go(6)
    assert ((run / "metrics.json").read_bytes(), (run / "predictions.jsonl").read_bytes()) == old and stale_temps(run) == []
    assert len(read_jsonl(run / "records.jsonl")[0]) == 6
    monkeypatch.undo()
    with redirect_stderr(io.StringIO()): m = go(6)
    assert m["finished"] == 6 and json.loads((run / "metrics.json").read_text())["n_questions"] == 6


# --- the same PDF twice, a library moved ------------------------------------------------------------------

def test_the_same_pdf_twice_and_a_moved_library(tmp_path, shared_dir):
    from qasper_rag.papers.typeset import typeset_pdf
    home = tmp_path / "home"
    lib = Library(home / "lib", create=True, retrieval="bm25-only"); lib.add([], progress=False)  # an empty library, then a PDF put inside it
    paper = load_path(shared_dir / "original_format" / "qasper-train-sample10.json").paper("1909.00694")
    (home / "lib" / "pdfs").mkdir()
    typeset_pdf(paper, home / "lib" / "pdfs" / "seed.pdf"); shutil.copy(home / "lib" / "pdfs" / "seed.pdf", home / "seed-again.pdf")
    rows = lib.add([home / "lib" / "pdfs" / "seed.pdf", home / "seed-again.pdf"], progress=False)
    assert [r.status for r in rows] == ["added", "duplicate"] and len(lib) == 1
    assert rows[1].message == f"the same bytes as {home / 'lib' / 'pdfs' / 'seed.pdf'}, already in the library as seed: not added again"
    assert list(lib.manifest["sources"]) == ["pdfs/seed.pdf"]  # inside the library: named relative to it
    chunks = lib.index()["chunks"]
    (tmp_path / "elsewhere").mkdir(); os.rename(home / "lib", tmp_path / "elsewhere" / "moved")  # the folder moved, its PDF inside
    moved = tmp_path / "elsewhere" / "moved"
    with redirect_stderr(err := io.StringIO()):
        lib = Library(moved)
        assert lib.index()["chunks"] == chunks and Router.of(lib).route("What is the seed lexicon?").best == "seed"
        assert [r.status for r in lib.add([moved / "pdfs" / "seed.pdf"], progress=False)] == ["unchanged"]
    assert err.getvalue() == ""  # nothing to repair, nothing built again
    os.rename(moved / "pdfs" / "seed.pdf", home / "seed-moved.pdf")  # the source moved out of the library: the same source, not a new one
    r = lib.add([home / "seed-moved.pdf"], progress=False)[0]
    assert (r.status, r.message, len(lib)) == ("unchanged", f"moved from {moved / 'pdfs' / 'seed.pdf'}", 1)
