"""Evaluation runs: a run killed in flight resumes without redoing finished questions; run metrics golden-checked; settings guarded."""
import json, os, signal, subprocess, sys, time
from pathlib import Path
import pytest
from qasper_rag.evaluate.runs import RunDir
from qasper_rag.evaluate.evaluate import run_metrics
from qasper_rag.evaluate.metrics import token_f1
from qasper_rag.answer.prompts import NO_ANSWER, citation_ids

EVAL = [str(Path(sys.executable).parent / "qasper-rag"), "eval", "--generator", "smollm2", "--judge", "lexical", "--config", "smoke",
        "--threads", "1", "--json"]


def _cmd(data, out, limit):
    return EVAL + ["--data", str(data), "--out", str(out), "--limit", str(limit)]


def test_kill_and_resume(shared_dir, tmp_path):
    data, out = shared_dir / "original_format" / "qasper-train-sample10.json", tmp_path / "run"
    records = out / "records.jsonl"
    proc = subprocess.Popen(_cmd(data, out, 4), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 600
    while time.time() < deadline and proc.poll() is None:
        if records.exists() and records.read_bytes().count(b"\n") >= 1: break
        time.sleep(0.05)
    assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read().decode()[-2000:]}"
    os.kill(proc.pid, signal.SIGKILL); proc.wait()
    before = records.read_bytes()
    complete = before[:before.rfind(b"\n") + 1]  # a line torn by the kill is not finished
    done_before = [json.loads(l)["question_id"] for l in complete.splitlines()]
    assert 1 <= len(done_before) < 4 and not (out / "metrics.json").exists()

    r = subprocess.run(_cmd(data, out, 4), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    after = records.read_bytes()
    assert after.startswith(complete)  # finished lines untouched
    ids = [json.loads(l)["question_id"] for l in after.splitlines()]
    assert len(ids) == len(set(ids)) == 4 and ids[:len(done_before)] == done_before  # nothing answered twice
    m = json.loads((out / "metrics.json").read_text())
    assert (m["n_questions"], m["finished"]) == (4, 4) and json.loads(r.stdout)["finished"] == 4
    preds = [json.loads(l) for l in (out / "predictions.jsonl").read_text().splitlines()]
    assert {p["question_id"] for p in preds} <= set(ids) and all(set(p) == {"question_id", "predicted_answer", "predicted_evidence"} for p in preds)
    assert len(preds) == m["coverage"]["answered"]
    # constrained decoding (llama.cpp grammar): every sentence of a complete reply cites an in-range passage
    done = [json.loads(l)["record"] for l in after.splitlines()]
    replies = [r for r in done if "Short answer:" in r.get("raw_output", "")]
    assert replies and all(citation_ids(s["original"]) and not s["attributed"] for r in replies for s in r["sentences"] if s["claim"] != NO_ANSWER)
    # verification (the default): every shown sentence was checked, the model's own sentence is kept beside it
    assert all(s["status"] in ("verified", "re-cited", "rewritten", "removed", "no answer") for r in done for s in r["sentences"])
    assert all(r["verification"]["judge"] == "grounded:llama.cpp:SmolLM2-135M-Instruct.Q4_1.gguf" for r in done if r["sentences"])
    # the evaluation verifies as `ask` does: a shown sentence must also answer the question (the answers judge, recorded)
    assert all(r["verification"]["answers_judge"] == "answers:llama.cpp:SmolLM2-135M-Instruct.Q4_1.gguf" for r in done if r["sentences"])
    assert json.loads((out / "run.json").read_text())["answers"] == "answers:llama.cpp:SmolLM2-135M-Instruct.Q4_1.gguf"
    assert m["verification"]["sentences"] == sum(len(r["sentences"]) for r in done)

    # another configuration into the same folder is refused, with the way out in the message
    r = subprocess.run(EVAL[:-4] + ["--config", "rrf-only", "--data", str(data), "--out", str(out), "--limit", "4"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and "--restart" in r.stderr


def _line(q, short, evidence, failed=False, alce=None):
    return {"question_id": q.id, "paper_id": q.paper_id, "question": q.text, "seconds": 10.0,
            "record": {"failed": failed, "short_answer": short, "predicted_evidence": evidence, "sentences": [], "passages": []},
            "alce": alce, "judged": [],
            "evidence_recall": {"question_id": q.id, "paper_id": q.paper_id, "text": [True, False], "float": [], "per_annotator": 0.5, "n_chunks": 3, "n_tokens": 900}}


def test_run_metrics_golden(train10):
    qs = train10.questions()[:4]
    gold0 = qs[0].answers[0]
    lines = [_line(qs[0], gold0.text, list(gold0.evidence), alce={"recall": 1.0, "precision": 0.5, "n_citations": 2, "sentences": []}),
             _line(qs[1], "Unanswerable", [], alce={"recall": 0.0, "precision": 0.0, "n_citations": 0, "sentences": []}),
             _line(qs[2], "", [], failed=True)]  # qs[3] not run yet
    m = run_metrics(lines, train10, [q.id for q in qs])
    assert m["coverage"] == {"answered": 2, "total": 4, "failed": 1, "not_run": 1, "unanswerable_predicted": 1}
    f1_q1 = max(token_f1("Unanswerable", a.text if a.type != "none" else "Unanswerable") for a in qs[1].answers)
    assert m["answer_f1"]["value"] == pytest.approx((1.0 + f1_q1) / 4)  # failed and missing count as 0
    assert m["answer_f1"]["missing"] == 2
    assert m["citation_recall"] == {"value": 0.5, "n": 2, "total": 4, "ci95": m["citation_recall"]["ci95"]}
    assert m["citation_precision"]["value"] == 0.25
    assert m["display"]["Citation recall"] == "0.500 (n=2/4)"
    assert m["evidence_recall"]["all"] == 0.5 and m["evidence_recall"]["n"]["all"] == 3


def test_run_dir_keeps_old_records_on_restart(tmp_path):
    r = RunDir(tmp_path)
    r.start({"config": "a", "limit": None}); r.append({"question_id": "x"})
    r.start({"config": "b", "limit": None}, restart=True)
    assert r.records() == [] and len(list(tmp_path.glob("records.*.jsonl"))) == 1


# --- concurrent evaluation against a real OpenAI-compatible server (issues 16, 44) ----------------------------------------

def _crowded(train10, k: int = 3):
    """The train papers with the `k`-th question (0-based, in evaluation order) made far longer than the server's 2,048-token
    context in tokens while under the 1,000 characters a question may have (`data.check_question` refuses longer ones before any
    request): 900 mathematical letters of four UTF-8 bytes, several byte-level tokens each. Its generation request fails (HTTP 400)
    while the questions around it are in flight."""
    import dataclasses
    from qasper_rag.papers.data import QasperCorpus
    from qasper_rag.evaluate.evaluate import eval_items
    p, q = eval_items(train10)[k]
    long = dataclasses.replace(q, text=q.text + " " + "\U0001D538" * 900)
    from qasper_rag.papers.data import MAX_QUESTION_CHARS
    assert len(long.text) <= MAX_QUESTION_CHARS
    papers = [dataclasses.replace(x, questions=tuple(long if y.id == q.id else y for y in x.questions)) if x.id == p.id else x for x in train10]
    return QasperCorpus(papers), long


def _own_question(line: dict, q):
    "A line of records.jsonl and everything in it belong to the line's question: its record, context, recall, verdicts and verification."
    from collections import Counter
    from qasper_rag.answer.record import STATUSES
    rec = line["record"]
    assert (line["question_id"], line["question"], line["paper_id"]) == (q.id, q.text, q.paper_id), line["question_id"]
    assert (rec["question_id"], rec["question"], rec["paper_id"]) == (q.id, q.text, q.paper_id), (q.id, rec["question_id"])
    assert rec["context"] and all(c["chunk_id"].startswith(f"{q.paper_id}:") for c in rec["context"])
    assert (line.get("evidence_recall") or {"question_id": q.id})["question_id"] == q.id
    assert all(j["question_id"] == q.id and j["item_id"].startswith(f"{q.id}#") for j in line.get("judged") or [])
    if rec["failed"]: return
    counts = Counter(s["status"] for s in rec["sentences"])  # the verification summary counts THESE sentences
    assert rec["verification"]["counts"] == {k: counts.get(k, 0) for k in STATUSES}, (q.id, rec["verification"]["counts"], counts)
    assert rec["verification"]["short_answer"]["after"] == rec["short_answer"], q.id


def _same_answer(a: dict, b: dict):
    "Two records of one question from the same model reply: the same sentences, statuses, verification and short answer."
    drop = lambda v: {k: x for k, x in v.items() if k != "seconds"}  # wall time differs, nothing else may
    assert [(s["text"], s["status"], s["citations"]) for s in a["sentences"]] == [(s["text"], s["status"], s["citations"]) for s in b["sentences"]]
    assert (drop(a["verification"]), a["short_answer"], a["passages"]) == (drop(b["verification"]), b["short_answer"], b["passages"])


def test_concurrent_eval_on_a_real_server(train10, tmp_path, monkeypatch):
    """`evaluate(concurrency=3)` against a real llama_cpp.server: records come out one per question in question order, a second
    call resumes exactly where the first stopped, each record holds its own question's context, verification and verdicts (the
    sequential run of the same questions is the reference), a question whose request fails in flight is recorded as failed for
    itself while the others around it are answered, and every answer request on the wire carries the backend's grammar field."""
    import requests
    from qasper_rag.answer.answer import Answerer
    from qasper_rag.evaluate.evaluate import eval_items, evaluate
    from qasper_rag.core.server import LlamaServer
    from qasper_rag.core.models import smollm2_gguf_path
    from qasper_rag.answer.judges import load_judge
    from qasper_rag.answer.prompts import answer_grammar
    from qasper_rag.retrieve.retrieval import Retriever
    from qasper_rag.retrieve.config import get_config
    from qasper_rag.answer.verify import Verifier
    corpus, long = _crowded(train10)
    cfg = get_config("smoke")
    sent, send = [], requests.adapters.HTTPAdapter.send
    def recording(self, request, **kw):  # what goes on the wire to the server, then the real request
        if request.body and request.url.endswith("/chat/completions"): sent.append(json.loads(request.body))
        return send(self, request, **kw)
    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send", recording)
    with LlamaServer(smollm2_gguf_path(), n_ctx=2048, n_threads=1, startup_timeout=120) as srv:
        def answerer(field="grammar"):
            gen = srv.generator(grammar_field=field, extra_body={"repeat_penalty": 1.0}, timeout=300)
            return Answerer(Retriever(cfg, cache_dir=tmp_path / "cache"), gen, verifier=Verifier(load_judge("lexical"), gen))
        def run(out, concurrency, limit):
            return evaluate(corpus, answerer(), load_judge("lexical"), out, {"config": cfg.name}, limit=limit, progress=False, concurrency=concurrency)
        first = run(tmp_path / "conc", 3, 2)
        assert first["finished"] == 2
        m = run(tmp_path / "conc", 3, 5)  # resumes: three more questions, answered concurrently, the middle one failing
        on_wire = list(sent)
        seq = run(tmp_path / "seq", 1, 5)
        # the field a vLLM server reads (`structured_outputs.grammar`, the default since vLLM 0.12 removed `guided_grammar`),
        # on a real request (llama_cpp.server ignores it)
        p0, q0 = eval_items(train10, 1)[0]
        del sent[:]
        vllm_rec = answerer("structured_outputs.grammar").ask(p0, q0.text, q0.id)
    lines = [json.loads(l) for l in (tmp_path / "conc" / "records.jsonl").read_text().splitlines()]
    seq_lines = [json.loads(l) for l in (tmp_path / "seq" / "records.jsonl").read_text().splitlines()]
    qs = {q.id: q for _, q in eval_items(corpus, 5)}
    assert [l["question_id"] for l in lines] == [l["question_id"] for l in seq_lines] == list(qs)  # question order, nothing twice
    assert m["finished"] == 5 and m["run"]["sessions"] == 2 and m["coverage"]["failed"] == 1
    for l, s in zip(lines, seq_lines):
        _own_question(l, qs[l["question_id"]]); _own_question(s, qs[s["question_id"]])
        assert l["record"]["context"] == s["record"]["context"]  # built from its own question's retrieval
    # the question that failed in flight: recorded for itself, with the server's reason; the ones around it answered
    failed = [l for l in lines if l["record"]["failed"]]
    assert [l["question_id"] for l in failed] == [long.id] and lines[3]["question_id"] == long.id
    assert any("HTTP 400" in p and "context" in p for p in failed[0]["record"]["problems"]), failed[0]["record"]["problems"]
    assert all(l["record"]["raw_output"] and l["record"]["timings"]["generation"] > 0 for l in lines if not l["record"]["failed"])
    # where the model gave the same reply in both runs, everything built on it is the same: no verification crossed over
    same = [(l["record"], s["record"]) for l, s in zip(lines, seq_lines) if not l["record"]["failed"] and l["record"]["raw_output"] == s["record"]["raw_output"]]
    assert len(same) >= 3, "the concurrent and sequential replies differ too often to compare their verifications"
    for a, b in same: _same_answer(a, b)
    # on the wire: each answered question's first request carries `grammar` (llama_cpp.server's field) with the answer grammar
    # for its own number of passages, and no request carries vLLM's field
    for l in lines:
        if l["record"]["failed"]: continue
        mine = [b for b in on_wire if any(l["question"] in m["content"] for m in b["messages"] if m["role"] == "user")]
        assert mine and mine[0]["grammar"] == answer_grammar(len(l["record"]["context"])), l["question_id"]
    assert not any("structured_outputs" in b for b in on_wire)
    (first_req,) = [b for b in sent if any(q0.text in m["content"] for m in b["messages"] if m["role"] == "user")][:1]
    assert first_req["structured_outputs"] == {"grammar": answer_grammar(len(vllm_rec.context))} and "grammar" not in first_req
    assert not any(p.startswith("generator error") for p in vllm_rec.problems), vllm_rec.problems  # a request the server took


def test_concurrency_needs_a_server_generator(train10, tmp_path, monkeypatch):
    from qasper_rag.answer.answer import Answerer
    from qasper_rag.evaluate.evaluate import evaluate
    from qasper_rag.core.generate import load_generator
    from qasper_rag.retrieve.retrieval import Retriever
    from qasper_rag.retrieve.config import get_config
    ans = Answerer(Retriever(get_config("smoke")), load_generator("smollm2", n_threads=1))
    with pytest.raises(ValueError, match="needs a generator that serves several requests at once"):
        evaluate(train10, ans, None, tmp_path / "r", {"config": "smoke"}, limit=1, progress=False, concurrency=2)
    assert not (tmp_path / "r").exists()  # refused before anything was written
