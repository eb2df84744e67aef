"""Regenerate the results from the run and benchmark files, never typed by hand: `reports/RESULTS.md` (every paragraph of
measurements: the report's run, adaptation, speed, library, PDF round trip) and the README's small results table.

    .venv/bin/python scripts/readme_results.py [RUN_FOLDER] [QASPER_DATA] [--check]
"""
import json, re, sys
from pathlib import Path
from qasper_rag.evaluate.runs import answered_by
from qasper_rag.evaluate.evaluate import run_metrics, question_groups
from qasper_rag.papers.data import load_path
CHECK = "--check" in sys.argv  # compare with the committed files instead of writing them; exit 1 when they differ
sys.argv = [a for a in sys.argv if a != "--check"]
run = Path(sys.argv[1] if len(sys.argv) > 1 else 'reports/offline-full')
D = sys.argv[2] if len(sys.argv) > 2 else str(Path(__file__).resolve().parents[1].parent/'shared/data/qasper/original_format')
m = json.loads((run/'metrics.json').read_text())
lines = [json.loads(l) for l in open(run/'records.jsonl')]
corpus = load_path(D)
groups = question_groups(D)
by = {}
for q, g in groups.items(): by.setdefault(g, []).append(q)
gm = {g: run_metrics(lines, corpus, qs) for g, qs in by.items()}
v, k = m['verification'], m['kappa']['judge_vs_reference_labels']
c = v['counts']; kt = k['groups']['qasper-test-sample47-1q']; ktr = k['groups']['qasper-train-sample10']
te, tr = gm['qasper-test-sample47-1q'], gm['qasper-train-sample10']
B = run_metrics(lines, corpus, [q for qs in by.values() for q in qs])['citation_before_verification']  # from the records: older runs too
L = m.get('shown_labels') or (json.loads((run/'reference_labels.json').read_text()).get('shown') if (run/'reference_labels.json').exists() else None)
share = lambda x: f"{x['k']} of {x['n']} ({x['share']:.2f}, 95% interval {x['ci95'][0]:.2f}-{x['ci95'][1]:.2f})"
LAB = (f"the shown sentences under independent labels ({L['labels']}, {L['matched']} of {L['shown']} labelled): supported {share(L['supported'])}, "
       f"answering the question {share(L['answers'])}, both {share(L['supported_and_answers'])};" if L and L.get('matched') and 'answers' in L else
       "no independent labels of this run's shown sentences;")
RUN = dict(m=m, te=te, tr=tr, L=L)  # the run's numbers, for README's table (later sections reuse the short names)
f = lambda x: f"{x:.3f}"
t = (m['run'].get('settings') or {}).get('answer', {}).get('threads') or m['run'].get('threads')
threads = f" (llama.cpp with {t} thread{'s' if t != 1 else ''} on two cores)" if t else ""
text = f"""## Results (offline, two CPU cores)
All 98 shared questions, `offline-2k` retrieval, Qwen2.5-Coder-1.5B in process, every answer sentence
verified before it is shown, judged by `{k['judge']}` (`reports/offline-full/`, rendered
pages indexed in `reports/README.md`; answered by {answered_by(m['run'])}):
Answer-F1 {f(m['answer_f1']['value'])}, Evidence-F1 {f(m['evidence_f1']['value'])} (official semantics, n={m['coverage']['answered']}/{m['n_questions']});
on the 47 test papers {f(te['answer_f1']['value'])} / {f(te['evidence_f1']['value'])} (n={te['n_questions']}), on the 10 train papers
{f(tr['answer_f1']['value'])} / {f(tr['evidence_f1']['value'])} (n={tr['n_questions']}); evidence recall of the context
sent {m['evidence_recall']['all']:.3f} (n={m['evidence_recall']['n']['all']}); the model's own sentences before verification: {B['supported_as_cited']} of {B['sentences']}
supported by the passages they cited (the verifier's judge; mean per question {f(B['recall']['value'])}, n={B['recall']['n']}); {LAB}
of the model's sentences {c['verified']} were verified as written, {c['re-cited']} re-cited, {c['rewritten']} rewritten as quotes, {c['removed']} removed, {v['multi_citation_sentences']} shown citing more than one
passage; {v['no_answer']} answers say the passages do not answer (the shown sentences are not scored by the judge that repaired them);
the judge's agreement with the reference labels of citation support: kappa {k['kappa']:.3f} (n={k['n']}), on the
test papers' items {kt['kappa']:.3f} (n={kt['n']}), on the train papers' {ktr['kappa']:.3f} (n={ktr['n']}), false 'supported' rate {k['false_supported_rate']:.3f};
verification adds {v['seconds']['median']} s per answer (median; p95 {v['seconds']['p95']}) to {m['seconds_per_question']['median']} s per question{threads}.
"""
# short answers by type (the evaluation page's short_answers.json) beside the plain baseline where it was replayed
sa = run/'short_answers.json'
if sa.is_file():
    S = json.loads(sa.read_text())
    at = lambda rows, g, t='all': next((r for r in rows if r['group'] == g and r['type'] == t), None)
    ci = lambda r, v: f"{r[v]:.3f} [{r[v + ' 95% interval'][0]:.3f}, {r[v + ' 95% interval'][1]:.3f}]"
    text += ("Short answers by the question's type are on the evaluation page (`short_answers.json`); on the train papers Answer-F1 by type: "
             + ", ".join(f"{r['type']} {r['run']:.3f} (n={r['n']})" for r in S['rows'] if r['group'] == 'qasper-train-sample10' and r['type'] != 'all') + ".")
    if S.get('plain_rows'):
        parts, WHATIF = [], "run + plain's Unanswerable"
        for g, name in (('qasper-train-sample10', 'train papers'), ('qasper-test-sample47-1q', 'test papers')):
            r, whole = at(S['plain_rows'], g), at(S['rows'], g)
            if r and whole and r['n'] == whole['n']:
                parts.append(f"on the {name} (n={r['n']}) the run {ci(r, 'run')}, the plain baseline {ci(r, 'plain baseline')}, "
                             f"the baseline made to agree with the verified answer {ci(r, 'plain + agreement')}"
                             + (f", the run's answer made Unanswerable where the plain call said so (a what-if) {ci(r, WHATIF)}" if WHATIF in r else ""))
            elif whole: parts.append(f"the {name}' replay is not finished ({r['n'] if r else 0} of {whole['n']} questions; `make short-baseline` resumes it)")
        text += (f" A plain retrieve-and-prompt baseline on the same passages (`make short-baseline`, replayed for {S['replayed']} of {S['n']} "
                 "questions): " + "; ".join(parts) + ".")
    if 'typed' in S.get('variants', []):  # the short-answer stage as the answerer has it now, replayed on this run's records
        typed = [(name, at(S['rows'], g)) for g, name in (('qasper-train-sample10', 'train papers'), ('qasper-test-sample47-1q', 'test papers'))]
        text += (" The answerer's short-answer stage as it is now (a short answer of the wrong form for its question asked again in that "
                 "form, a number that counts something else than the question asks rebound), replayed on this run's records (`typed`): "
                 + "; ".join(f"on the {name} (n={r['n']}) {ci(r, 'typed')} against the run's {ci(r, 'run')}" for name, r in typed if r and 'typed' in r)
                 + (f"; {S['unanswerable']['typed']} of {S['n']} short answers Unanswerable against the run's {S['unanswerable']['run']}"
                    if 'unanswerable' in S else "") + ".")
    text += "\n"
# against the report run this one replaced (benchmarks/compare_runs.py -> previous_run.json), same questions, same scorer
pr = run/'previous_run.json'
if pr.is_file():
    P = json.loads(pr.read_text()); R = {r['group']: r for r in P['rows']}
    d = lambda r, k: f"{r[k + '_before']:.3f} -> {r[k + '_after']:.3f} (difference {r[k + '_difference_ci95'][0]:+.3f} to {r[k + '_difference_ci95'][1]:+.3f})"
    text += (f"Against the report run it replaced ({P['before']['label']}), on the same questions (`benchmarks/compare_runs.py`; "
             "differences with paired bootstrap 95% intervals): "
             + "; ".join(f"{name} (n={R[g]['n']}) Answer-F1 {d(R[g], 'answer_f1')}, Evidence-F1 {d(R[g], 'evidence_f1')}"
                         for g, name in (('qasper-test-sample47-1q', 'test papers'), ('qasper-train-sample10', 'train papers')) if g in R)
             + (f"; short answers saying Unanswerable {R['all']['unanswerable_before']} -> {R['all']['unanswerable_after']} of {R['all']['n']}; "
                f"seconds per question {R['all']['seconds_median_before']} -> {R['all']['seconds_median_after']} (median) at median prompt tokens "
                f"{R['all']['prompt_tokens_median_before']} -> {R['all']['prompt_tokens_median_after']} and completion tokens "
                f"{R['all']['completion_tokens_median_before']} -> {R['all']['completion_tokens_median_after']}"
                + (" (the same work: the difference in seconds is the machine's speed on the day)" if all(
                    abs(R['all'][f'{k}_median_after'] - R['all'][f'{k}_median_before']) <= 0.02 * R['all'][f'{k}_median_before'] for k in ('prompt_tokens', 'completion_tokens')) else "")
                if 'all' in R and R['all'].get('prompt_tokens_median_after') else "")
             + ".\n")
sections = {"results": text}  # RESULTS.md's paragraphs, in order

# the speed paragraph, from the benchmark page's bench.json (`make bench`)
bench = Path('reports/bench/bench.json')
if bench.is_file():
    B = json.loads(bench.read_text()); S = B['sections']
    ms = lambda s: f"{1000 * s:.0f}"
    parts = []
    if 'generation' in S:
        an, fm = S['generation']['answers'], {r['format']: r for r in S['generation']['formats']}
        ra = an['rates']
        parts.append(f"an answer takes {an['total']['p50']:.1f} s (median, n={an['total']['n']}), of which generation {an['generation']['p50']:.1f} s against "
                     f"{an['compute']['p50']:.1f} s of model compute for its tokens at the rates measured in the same process (prefill "
                     f"{ra['prefill_tok_s']:.1f}, decode {ra['decode_tok_s']:.1f} tokens/s); by weight format, prefill / decode tokens/s: "
                     + ", ".join(f"{k} {r['prefill_tok_s']:.1f} / {r['decode_tok_s']:.1f}" for k, r in fm.items()))
    if 'retrieval' in S:
        rt = S['retrieval']
        parts.append(f"retrieval {ms(rt['warm']['p50'])} ms per question warm (p95 {ms(rt['warm']['p95'])} ms, n={rt['warm']['n']}), "
                     f"{ms(rt['cold']['p50'])} ms for a paper's first question with nothing cached (n={rt['cold']['n']})")
    cxp = Path('reports/bench/context_adaptive.json')  # benchmarks/adaptive_context.py
    if cxp.is_file() and 'generation' in S:
        cx, ra = json.loads(cxp.read_text()), S['generation']['answers']['rates']
        secs = lambda t: (t + 330) / ra['prefill_tok_s'] + 67 / ra['decode_tok_s']
        f2, f1 = cx['fixed'][str(cx['reference'])]['test'], cx['fixed']['1000']['test']
        parts.append(f"on the test papers evidence recall is {f2['recall']:.3f} at {cx['reference']:,} context tokens and {f1['recall']:.3f} at 1,000 "
                     f"(n={f2['n']}; predicted answers {secs(f2['median_tokens']):.1f} s and {secs(f1['median_tokens']):.1f} s), and "
                     + ("no adaptive rule chosen on the train papers keeps their recall within 0.01 of the full budget with fewer tokens, so the "
                        "20-s goal is not met at equal quality" if not cx['chosen'] else f"the adaptive rule chosen on train sends {cx['chosen']['test']['mean_tokens']:.0f} tokens"))
    if 'index' in S:
        ix = S['index']
        parts.append(f"the dense index of the {ix['chunks']} shared chunks builds at {ix['ratio']:.0%} of the encoder's raw throughput")
    if 'memory' in S:
        mem = S['memory']; last = mem['rows'][-1]
        parts.append(f"a retrieval pass over {last['questions']} questions ({last['papers']} papers) ends at {last['rss_mb']:.0f} MB resident "
                     f"({mem['mb_per_paper']:+.1f} MB per paper"
                     + (f"; {mem['rss_trimmed_mb']:.0f} MB once the freed heap is returned, every index still held)" if mem.get('rss_trimmed_mb') else ")"))
    if 'scaling' in S:
        sc = S['scaling']; big = max(r['size'] for r in sc['rows']); at = {r['kind']: r for r in sc['rows'] if r['size'] == big}
        parts.append(f"at {big:,} vectors exact search takes {1000 * at['flat']['latency']['p50']:.0f} ms per question, "
                     + ", ".join(f"{k} {1000 * r['latency']['p50']:.1f} ms returning {r['recall_vs_exact']:.1%} of the exact top {sc['k']}"
                                 for k, r in at.items() if k != 'flat'))
    cpus = B['machine'].get('cpus_usable') or B['machine'].get('cpus')
    text = (f"## Speed ({cpus} CPU cores, {B['threads']} threads)\n"
            f"`make bench` measures each stage beside its reference in one run (`reports/bench/bench.html`): " + "; ".join(parts) + ".\n")
    sl = Path("reports/bench/stream_latency.txt")  # benchmarks/stream_latency.py: what a researcher waits for before the first words
    if sl.is_file():
        rows = {l.split()[0]: l.split() for l in sl.read_text().splitlines() if l.split() and l.split()[0] in ("cold", "warm")}
        if {"cold", "warm"} <= set(rows):
            c, w = rows["cold"], rows["warm"]
            text += (f"Streaming `ask` (`{sl}`, the embedded Qwen on two threads): the passages sent are listed {c[1]} s after the "
                     f"question when the paper is new (its vectors computed) and {w[1]} s when it is not; the first word of the answer "
                     f"appears after {c[3]} s and {w[3]} s (the prompt is read first), the whole checked answer after {c[5]} and {w[5]} s.\n")
    sections["speed"] = text
# fewer prompt tokens: the recall curve by passage size, decoding settings, and the `fast` preset (issue 41)
cs, dec, fp = Path("reports/bench/context_size.json"), Path("reports/bench/decoding.json"), Path("reports/bench/fast_preset.json")
gcost = Path("reports/bench/grammar_cost.json")
fast = json.loads(fp.read_text()) if fp.is_file() else None
FAST = next((c for c in fast["candidates"] if c["is_preset"]), None) if fast else None
if cs.is_file() or dec.is_file() or gcost.is_file() or FAST:
    text = ""
    if cs.is_file():
        R = {(r["chunk_tokens"], r["budget"], r["split"]): r for r in json.loads(cs.read_text())["results"]}
        pt = lambda r: f"{r['lenient']:.3f} lenient / {r['strict']:.3f} strict at {r['prompt_tokens']:.0f} tokens"
        text += ("Evidence recall against the passage tokens a prompt carries (`benchmarks/context_size.py`, `reports/bench/context_size.json`; "
                 "strict: a gold paragraph counts when all of it is sent, lenient: when any part is): "
                 + "; ".join(f"on the {name} (n={R[(500, 2000, sp)]['n']}) the default's 500-token passages at 2,000 tokens {pt(R[(500, 2000, sp)])}, "
                             f"at 1,000 tokens {pt(R[(500, 1000, sp)])}; 150-token passages at 1,000 tokens {pt(R[(150, 1000, sp)])}, at 500 {pt(R[(150, 500, sp)])}"
                             for sp, name in (("train", "train papers"), ("dev", "dev file")) if (500, 2000, sp) in R and (150, 500, sp) in R)
                 + ". Small passages keep pieces of more paragraphs in the same tokens, though fewer whole ones.\n")
    if dec.is_file():
        V = json.loads(dec.read_text()); vs = V["variants"]; d0 = vs[next(iter(vs))]
        text += (f"Decoding settings on whole answers (`benchmarks/decoding.py`, {V['questions']} train questions, {V['threads']} threads, verification off): "
                 + "; ".join(f"{k} answer call {v['answer_call_seconds_median']:.1f} s (median; same reply as the default for {v['same_reply_as_default']} of {v['n']})"
                             for k, v in vs.items()) + ".\n")
    if gcost.is_file():
        G = json.loads(gcost.read_text()); gs = G["summary"]
        text += (f"The answer grammar's cost (`benchmarks/grammar_cost.py`, `reports/bench/grammar_cost.json`, {G['n']} train questions, {G['threads']} threads, "
                 f"the same cached prompt): through llama.cpp's sampler chain, which filters the whole vocabulary at every token, sampling took "
                 f"{gs['chain']['rest_ms_per_token']:.1f} ms a token (median) beside the model's {gs['chain']['eval_ms_per_token']:.1f} ms, "
                 f"{gs['chain_grammar_seconds_per_answer_median']:.1f} s of an answer; checking the model's first choice alone and filtering only when the "
                 f"grammar refuses it (`GreedyUnderGrammar`, the default now) takes {gs['check']['rest_ms_per_token']:.1f} ms a token "
                 f"(without a grammar {gs['free']['rest_ms_per_token']:.1f} ms), with the same reply for {gs['same_reply_chain_and_check']} of {G['n']} questions.\n")
    if FAST:
        c = FAST; ci = c["answer_f1_difference_ci95"]
        text += (f"The `fast` preset (`ask --fast`, `eval --settings fast`: {fast['preset_settings']['generator']} from {c['budget']:,} tokens of {c['chunk_tokens']}-token passages), "
                 f"on the train papers against the default's run (`benchmarks/fast_preset.py`, `reports/bench/fast_preset.json`, run `{c['run']}`; n={c['n']}): "
                 f"{c['seconds_median_after']} s per answer (median, p90 {c['seconds_p90']}) against {c['seconds_median_before']} s at median prompt tokens "
                 f"{c['prompt_tokens_median_after']} against {c['prompt_tokens_median_before']}; Answer-F1 {c['answer_f1_after']:.3f} against {c['answer_f1_before']:.3f} "
                 f"(paired difference {ci[0]:+.3f} to {ci[1]:+.3f}), Evidence-F1 {c['evidence_f1_after']:.3f} against {c['evidence_f1_before']:.3f}, "
                 f"short answers Unanswerable {c['unanswerable_after']} against {c['unanswerable_before']}, evidence recall of the passages sent {c['evidence_recall']:.3f} "
                 f"(n={c['evidence_recall_n']}). By the decision rule (the default changes only within 0.02 of its train Answer-F1) it stays a preset"
                 + "".join(f"; another candidate, {o['generator']} from {o['budget']:,} tokens of {o['chunk_tokens']}-token passages"
                           + (f" cut to {o['sentence_budget']:,} tokens of their best sentences" if o.get("sentence_budget") else "")
                           + (" with the short instruction (`prompt: short`)" if o.get("prompt", "full") != "full" else "")
                           + (f", took {o['seconds_median_after']} s" if o["seconds_median_after"] is not None else " (timed while the cores were shared: no comparable time)")
                           + f" at Answer-F1 {o['answer_f1_after']:.3f} ({o['answer_f1_difference_ci95'][0]:+.3f} to {o['answer_f1_difference_ci95'][1]:+.3f})"
                           for o in fast["candidates"] if not o["is_preset"]) + ".")
        for x in fast.get("pairs", []):
            ci = x["answer_f1_difference_ci95"]
            at = lambda c: f" (commit {c[:7]})" if c else ""
            text += (f" Question by question, `{x['after']}`{at(x.get('after_commit'))} against `{x['before']}`{at(x.get('before_commit'))} (n={x['n']}): Answer-F1 {x['answer_f1_after']:.3f} against "
                     f"{x['answer_f1_before']:.3f} (paired difference {ci[0]:+.3f} to {ci[1]:+.3f}) at median prompt tokens "
                     f"{x['prompt_tokens_median_after']} against {x['prompt_tokens_median_before']}"
                     + (lambda b, a: f" (the answer call's own prompt {a['answer_call_prompt_tokens_median']:.0f} against {b['answer_call_prompt_tokens_median']:.0f} tokens; "
                                     f"a follow-up call for the short answer {a['calls_by_purpose'].get('short answer', 0)} times against "
                                     f"{b['calls_by_purpose'].get('short answer', 0)}, Unanswerable short answers {a['unanswerable_after']} against {b['unanswerable_after']})"
                        if a and b and a.get("calls_by_purpose") and b.get("calls_by_purpose") else "")(
                         next((o for o in fast["candidates"] if o["run"] == x["before"]), None), next((o for o in fast["candidates"] if o["run"] == x["after"]), None))
                     + ".")
        if (tc := next((o for o in fast["candidates"] if o.get("time_by_purpose") and o.get("prompt", "full") == "full"), None)):
            tb = tc["time_by_purpose"]
            text += (f" Where an answer's seconds go, from the model calls the records keep ({tc['generator']} from {tc['budget']:,} tokens, {tb['questions']} answers): "
                     + ", ".join(f"{k} {v['share']:.1%} ({v['calls']} calls, median {v['reused_share_median']:.0%} of their prompt reused from the KV cache)"
                                 for k, v in tb.items() if isinstance(v, dict) and "calls" in v)
                     + f", outside any call {tb['outside_calls']['share']:.1%}.")
        text += "\n"
    sections["speed"] = sections.get("speed", "## Speed\n") + text

# the library paragraph, from the library page's routing.json (`make library`)
routing = Path('reports/library/routing.json')
if routing.is_file():
    L = json.loads(routing.read_text()); R, O, C = L['routing'], L['open_domain'], L['routed_context']
    from qasper_rag.answer.library_answer import FIRST_TURNS as FIRST
    a, te, tr = R['all'], R['by_group']['qasper-test-sample47-1q'], R['by_group']['qasper-train-sample10']
    text = ("A library of one's papers: `qasper-rag add papers/*.pdf 2101.00001.tar.gz --library ~/lib` reads PDFs, LaTeX sources "
            "and QASPER files into a folder with a manifest (each source's path, SHA-256 and parse statistics; unchanged sources are "
            "skipped when added again, changed ones re-read) and indexes them once; `qasper-rag library ~/lib` lists the papers, and "
            "`qasper-rag ask --library ~/lib \"...\"` routes the question to papers (their best chunk and their title and abstract, by BM25 "
            "and by the embedder, fused by RRF), answers from the first and names the paper of every cited passage (`--paper ID` picks one). "
            f"When fewer than {R['votes_needed']} of the 4 rankings agree, the answer says the question could be about several papers and "
            f"draws its passages from the first {C['ambiguous_papers']} (retrieval inside each, one shared {C['budget']:,}-token budget; "
            f"{FIRST} passages of the first for one of each other; each passage's section names its paper). With all {L['papers']} shared papers in one library (`make library`, `reports/library/library.html`), "
            f"routing puts the right paper first for {a['first']:.3f} of the shared questions (n={a['n']}; test papers {te['first']:.3f}, "
            f"train papers {tr['first']:.3f}) and among the first three for {a['top3']:.3f}; plain open-domain retrieval has it in its "
            f"first passage for {O['all']['right_paper_first']:.3f} and in its {O['budget']:,}-token context for {O['all']['right_paper_in_context']:.3f}; "
            f"the context `ask --library` sends holds it for {C['all']['right_paper_in_context_asked']:.3f} "
            f"(retrieval inside the first paper alone {C['all']['right_paper_in_context_1']:.3f}, inside the first three {C['all'][f'right_paper_in_context_3']:.3f}), "
            f"and its evidence recall is {C['all']['evidence_recall_asked']:.3f} against {C['all']['evidence_recall_1']:.3f} from the first paper alone (n={C['all']['n_evidence']}). "
            f"Routes without the notice ({a['confident']:.3f} of questions) are right for {a['right_when_confident']:.3f}: QASPER's questions "
            "(\"What are the results?\") rarely name anything that tells their paper apart.")
    ans = Path('reports/library/answers.jsonl')  # benchmarks/library_answers.py (make library-answers), resumable
    if ans.is_file() and (rows := [json.loads(l) for l in ans.read_text().splitlines() if l.strip()]):
        from qasper_rag.evaluate.routing import wrong_paper_summary
        S = wrong_paper_summary(rows)
        w, wo, wn = S['all'], S['without_notice'], S['with_notice']
        kinds = ["test papers" if "test" in r["group"] else "train papers" for r in rows]
        split = ", ".join(f"{kinds.count(k)} from the {k}" for k in sorted(set(kinds)))
        rate = lambda x: f"{x['wrong_paper_citation_rate']:.3f} of {x['cited_passages']} cited passages" if x['cited_passages'] else "no cited passage"
        text += (f" Answers across the library as `ask --library` gives them (`make library-answers`, {'so far ' if len(rows) < a['n'] else ''}{len(rows)} of {a['n']} questions, {split}): "
                 f"{rate(w)} come from another paper than the question's (goal 0.02); without the notice {rate(wo)} (n={wo['answers']} answers), "
                 f"with it {rate(wn)} (n={wn['answers']}).")
        by = {g: wrong_paper_summary([r for r in rows if r["group"] == g])["all"] for g in sorted({r["group"] for r in rows})}
        if len(by) > 1: text += " By split: " + "; ".join(f"{'train' if 'train' in g else 'test'} papers {rate(x)} (n={x['answers']} answers)" for g, x in by.items()) + "."
    text += "\n"
    sections["library"] = "## A library of papers\n" + text

def expansion_sentence(path: Path) -> str:
    "The doc2query experiment (benchmarks/expansion_recall.py --out): its best variant at 2,000 tokens, and the range at 4,000."
    if not path.is_file(): return ""
    E = json.loads(path.read_text())
    rows = list({(r['kept_only'], name, None if name == 'bm25' else r['alpha']): (r, name, v)  # BM25 ignores the vector weight: once
                 for r in E['runs'] for name, v in r['variants'].items() if name != 'offline'}.values())
    base = E['runs'][0]['variants']['offline']['recall']
    r, name, v = max(rows, key=lambda t: t[2]['diff_2000']['diff'])
    d, gains = v['diff_2000'], [x['recall']['4000'] - base['4000'] for _, _, x in rows]
    where = {"bm25": "in the BM25 list", "dense": "in the chunk's vector", "both": "in both lists"}[name]
    return (f" Indexing each chunk with its generated questions instead (doc2query; `benchmarks/expansion_recall.py`, `reports/adapt/expansion.json`: "
            f"{E['questions']} questions for all {E['chunks']} chunks of the train papers), the best of {len(rows)} variants "
            f"({'the kept' if r['kept_only'] else 'all'} questions {where}" + (f", weight {r['alpha']}" if name != 'bm25' else "")
            + f") gives {base['2000']:.3f} -> {v['recall']['2000']:.3f} at 2,000 tokens ({d['diff']:+.3f}, 95% CI {d['ci95'][0]:+.3f} to "
            f"{d['ci95'][1]:+.3f}, n={r['n']} train-paper questions); at 4,000 tokens the variants move {base['4000']:.3f} by {min(gains):+.3f} "
            f"to {max(gains):+.3f}. No preset uses it.")

# the adaptation paragraph, from reports/adapt (benchmarks/adapt_recall.py --out, and the run's manifest)
rec, man = Path('reports/adapt/recall.json'), Path('reports/adapt/manifest.json')
if rec.is_file() and man.is_file():
    from qasper_rag.retrieve.config import PRESETS
    R, M = json.loads(rec.read_text()), json.loads(man.read_text())
    C = {c['other']: c for c in (R['comparisons'] if 'comparisons' in R else [R])}
    q, tr, s = M['steps']['questions'], M['steps']['training'], M['settings']
    def cell(A, grp, b):
        v = A['by_group'][grp][str(b)]
        return f"{v['base']:.3f} -> {v['other']:.3f} ({v['diff']:+.3f}, 95% CI {v['ci95'][0]:+.3f} to {v['ci95'][1]:+.3f}, n={v['n']})"
    def curve(A, what):
        return (f"{what} evidence recall at 2,000 tokens goes {cell(A, 'all', 2000)} on the shared questions, on the test papers "
                f"{cell(A, 'qasper-test-sample47-1q', 2000)}, on the train papers {cell(A, 'qasper-train-sample10', 2000)}, at 1,000 tokens "
                f"{cell(A, 'all', 1000)}, at 6,000 {cell(A, 'all', 6000)}; retrieval takes {A['retrieval_ms']['other']} ms per question against "
                f"{A['retrieval_ms']['base']} ms (median, warm).")
    beats = lambda A: A['by_group']['all']['2000']['ci95'][0] > 0
    text = (f"Adapting the ranker without labels: `qasper-rag adapt --out data/adapted --max-chunks {s['max_chunks']}` had the embedded LLM write "
            f"{q['questions']} questions for {q['chunks_done']} chunks of the shared papers ({q['seconds_total'] / 60:.0f} min), kept {q['kept']} whose "
            f"source chunk came back in the top {s['keep_top']} of its paper, and trained the MiniLM bi-encoder on {tr['triples']} triples with a hard "
            f"negative from the same paper ({tr['seconds'] / 60:.1f} min on the CPU)"
            + (f" and, from the same MiniLM weights with a new one-logit head, a cross-encoder on their {ct['pairs']} (question, passage) pairs "
               f"({s['cross_epochs']} epochs, {ct['seconds'] / 60:.1f} min)" if (ct := M['steps'].get('cross_training')) else "")
            + "; no QASPER question, answer or evidence is used (`benchmarks/adapt_recall.py`, `reports/adapt/`). "
            + " ".join(curve(A, {"offline-adapted": "With the adapted bi-encoder in the dense stage (`offline-adapted`),",
                                 "offline-cross": f"With the cross-encoder rescoring the top {PRESETS['offline-cross'].cross_depth} candidates"
                                                  + (", fused with their order by RRF" if PRESETS['offline-cross'].cross_fusion == "rrf" else "") + " (`offline-cross`),"}.get(o, f"`{o}`:"))
                       for o, A in C.items())
            + (" Neither adapted model beats `offline` at 2,000 tokens (the paired interval includes zero or lies below it), so neither is the default."
               if not any(beats(A) for A in C.values()) else "")
            + expansion_sentence(Path('reports/adapt/expansion.json')) + "\n")
    sections["adapt"] = "## Adapting the ranker\n" + text

# the PDF round-trip sentence, from reports/library/pdf_roundtrip.json (benchmarks/pdf_roundtrip.py --out, one key per typesetter)
rt = Path('reports/library/pdf_roundtrip.json')
if rt.is_file():
    T = json.loads(rt.read_text())
    def said(r, how):
        s, e = r['structure'], r['evidence']
        out = (f"{how}: {e['exact']} of {e['evidence_paragraphs']} gold evidence paragraphs come back exactly ({e['exact'] / e['evidence_paragraphs']:.1%}) "
               f"and {e['f1_09']} with token F1 >= 0.9, {s['paragraphs_exact']} of {s['paragraphs']} paragraphs and {s['captions_exact']} of "
               f"{s['captions']} captions exactly" + (f", {s['table_bodies_exact']} of {s['table_bodies']} table bodies as the same Markdown"
                                                      if how.startswith("typeset by pdflatex") and s.get('table_bodies') else ""))
        if 'recall' in r:
            c = r['recall']
            out += (f"; evidence recall on the PDF-derived chunks is {c['ratio']:.3f} of that on the JSON-derived ones ({c['pdf']} vs {c['json']}, "
                    f"`{c['config']}`, n={c['n']}; {c['ratio_reanchored']:.3f} with each gold string re-anchored to its PDF paragraph)")
        return out
    parts = [said(T[k], how) for k, how in (("latex", "typeset by pdflatex (TeX's hyphenation, floats at the tops of columns)"),
                                            ("reportlab", "typeset by reportlab (far more hyphenation)")) if k in T]
    n = next(iter(T.values()))['structure']['papers']
    text = (f"On the {n} shared papers typeset as two-column PDFs and read back (`benchmarks/pdf_roundtrip.py --out "
            f"reports/library/pdf_roundtrip.json`), " + "; ".join(parts) + ".\n")
    sections["pdf"] = "## Your PDFs read back\n" + text

order = ("results", "adapt", "speed", "library", "pdf")
results_md = (
    "# Results\n\nGenerated by `scripts/readme_results.py` from the committed run and benchmark files; every number with its n.\n"
    "The rendered report pages start at [reports/index.html](index.html) (or `reports/README.md`).\n\n"
    + "\n".join(sections[k] for k in order if k in sections))
if not CHECK: Path("reports/RESULTS.md").write_text(results_md)
# README: one small table, every number with its n, linking to the pages
m, te, tr, f = RUN["m"], RUN["te"], RUN["tr"], lambda x: f"{x:.3f}"
row = lambda name, x, key: f"| {name} | {f(x[key]['value'])} | {x['n_questions']} |"
table = "\n".join([
    f"| offline default ({m['run'].get('config', 'offline-2k')}, Qwen2.5-Coder-1.5B, two CPU cores; {answered_by(m['run'])}) | value | n |", "|---|---|---|",
    row("Answer-F1, shared test papers", te, "answer_f1"), row("Answer-F1, shared train papers", tr, "answer_f1"),
    row("Evidence-F1, shared test papers", te, "evidence_f1"), row("Evidence-F1, shared train papers", tr, "evidence_f1"),
    f"| evidence recall of the passages sent | {m['evidence_recall']['all']:.3f} | {m['evidence_recall']['n']['all']} |",
    *([f"| shown sentences supported and answering (independent labels) | {L['supported_and_answers']['share']:.3f} | {L['supported_and_answers']['n']} |"]
      if (L := RUN["L"]) and L.get('matched') and 'supported_and_answers' in L else []),
    f"| seconds per answer (median, two cores) | {m['seconds_per_question']['median']:.1f} | {m['seconds_per_question']['n']} |",
    *([f"| `--fast` preset: Answer-F1, shared train papers (default {FAST['answer_f1_before']:.3f}) | {FAST['answer_f1_after']:.3f} | {FAST['n']} |",
       f"| `--fast` preset: seconds per answer (median, two cores) | {FAST['seconds_median_after']:.1f} | {FAST['n']} |"] if FAST else []),
])
readme = Path("README.md").read_text()
begin, end = "<!-- results: generated by scripts/readme_results.py -->", "<!-- /results -->"
assert begin in readme and end in readme, f"README.md needs the markers {begin} ... {end}"
new_readme = readme[:readme.index(begin) + len(begin)] + "\n" + table + "\n" + readme[readme.index(end):]
if CHECK:
    stale = [n for n, old, new in (("README.md", readme, new_readme), ("reports/RESULTS.md", Path("reports/RESULTS.md").read_text(), results_md)) if old != new]
    if stale: sys.exit(f"{', '.join(stale)} differ from what the run and benchmark files give: run scripts/readme_results.py")
    print("README.md and reports/RESULTS.md agree with the run and benchmark files")
else:
    Path("README.md").write_text(new_readme)
    print(table)
