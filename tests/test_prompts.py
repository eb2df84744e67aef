"""Golden tests of output parsing and citation checks (hand-written replies of the kinds models give)."""
from qasper_rag.answer.prompts import check_citations, citation_report, parse_output, split_sentences, strip_citations


def test_parse_labels_in_any_dress():
    out = parse_output("## Reasoning:\nDoc 4 says so.\n\n**Final Answer**: The model is BERT-base [Doc 4].\n**Short answer:** \"BERT-base\"")
    assert (out.reasoning, out.answer, out.short_answer, out.ok) == ("Doc 4 says so.", "The model is BERT-base [Doc 4].", "BERT-base", True)


def test_parse_failures_are_recorded_not_raised():
    assert not parse_output("BERT.").ok
    assert parse_output(None).problems == ("empty output", "no 'Short answer:' in the output")


def test_citations_in_range_capped_and_per_sentence():
    s = check_citations("BLEU rose to 27.3 [Doc 2][Doc 5]. The gain holds on WMT14 [Doc 1, Doc 2, Doc 3, Doc 4]. "
                        "It is the best [Doc 0].", n_docs=4)
    assert [x.citations for x in s] == [(2,), (1, 2, 3), ()]
    assert [x.rejected for x in s] == [(5,), (), (0,)]
    rep = citation_report(s)
    assert (rep["uncited"], rep["rejected"], rep["capped"]) == (1, 2, 1)


def test_numbers_do_not_split_sentences():
    assert split_sentences("Accuracy is 87.3% on SST-2 [Doc 1]. It drops to 4.5 points lower [Doc 2].") == [
        "Accuracy is 87.3% on SST-2 [Doc 1].", "It drops to 4.5 points lower [Doc 2]."]
    assert strip_citations("Accuracy is 87.3% [Doc 1].") == "Accuracy is 87.3%."


def test_short_answer_follow_up_matches_the_question_form_and_shares_the_prefix():
    from qasper_rag.papers.chunking import Chunk
    from qasper_rag.answer.prompts import build_messages, context_block, short_answer_messages, usable_short_answer, yes_no_question
    assert yes_no_question("Does the paper report macro F1?") and not yes_no_question("What datasets are used?")
    ps = [Chunk("p:s0c0", "p", "text", "Intro", "Title: T. Section: Intro. We use BERT.", 10, 0, prefix_chars=26)]
    yn, span, main = short_answer_messages("Does it use BERT?", ps, "T"), short_answer_messages("Which model?", ps, "T"), build_messages("Which model?", ps, "T")
    assert "Yes or No only" in yn[1]["content"] and "shortest phrase" in span[1]["content"]
    prefix = main[0]["content"] + main[1]["content"][:len(context_block(ps, "T"))]
    assert span[0]["content"] + span[1]["content"][:len(context_block(ps, "T"))] == prefix and "[Doc 1] (Intro)\nWe use BERT." in prefix
    assert not usable_short_answer("Which model?", "Yes") and usable_short_answer("Which model?", "BERT")
    assert not usable_short_answer("Does it use BERT?", "BERT") and usable_short_answer("Does it use BERT?", "No")


# --- the answer grammar, read by llama.cpp's own grammar engine (SmolLM2's vocabulary) ----------------

import ctypes, math
import pytest


@pytest.fixture(scope="module")
def grammar_accepts():
    "accepts(grammar, text): whether llama.cpp's GBNF engine takes `text` as a whole reply of `grammar`."
    from qasper_rag.core.llama import _llama_cpp
    from qasper_rag.core.models import smollm2_gguf_path
    lc = _llama_cpp()
    llm = lc.Llama(model_path=str(smollm2_gguf_path()), vocab_only=True, verbose=False)
    vocab = lc.llama_model_get_vocab(llm._model.model)

    def accepts(grammar: str, text: str) -> bool:
        smpl = lc.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
        assert smpl, "llama.cpp cannot parse the grammar"
        try:
            for t in llm.tokenize(text.encode(), add_bos=False, special=False) + [llm.token_eos()]:
                cand = (lc.llama_token_data * 1)(lc.llama_token_data(t, 0.0, 0.0))
                lc.llama_sampler_apply(smpl, ctypes.byref(lc.llama_token_data_array(cand, 1, -1, False)))
                if math.isinf(cand[0].logit): return False  # the grammar forbids this token here
                if t != llm.token_eos(): lc.llama_sampler_accept(smpl, t)
            return True  # end of text allowed: the reply is complete
        finally: lc.llama_sampler_free(smpl)
    return accepts


def reply(answer: str, short: str = "7.3/4.6") -> str:
    return f"Reasoning: Doc 5 gives the margins.\nAnswer: {answer}\nShort answer: {short}"


def test_answer_grammar_every_sentence_cites(grammar_accepts):
    from qasper_rag.answer.prompts import NO_ANSWER, answer_grammar
    g = answer_grammar(7)
    assert grammar_accepts(g, reply("BLEU rose to 27.3 on WMT14 [Doc 2][Doc 5]. It is the best [Doc 1]."))
    assert grammar_accepts(g, reply(NO_ANSWER, "Unanswerable"))
    assert not grammar_accepts(g, reply("BLEU rose to 27.3 on WMT14."))  # no citation
    assert not grammar_accepts(g, reply("BLEU rose to 27.3 on WMT14 [Doc 8]."))  # no Doc 8 in this prompt
    assert not grammar_accepts(g, reply("BLEU rose to 27.3 on WMT14.1"))  # a decimal point instead of a citation
    assert not grammar_accepts(g, reply("One [Doc 1]. Two [Doc 2]. Three [Doc 3]."))  # at most two sentences


def test_answer_grammar_lets_a_sentence_end_after_a_number(grammar_accepts):
    """The period after a number may close the sentence, citations after it: the full offline run had a reply held to a
    decimal point after "MCTest-500." that ran on ("500.15.6/16.5 (accuracy/NDCG) on MCTest-150 ...") into the 200-token cut."""
    from qasper_rag.answer.prompts import answer_grammar, check_citations
    g = answer_grammar(7)
    a = "The margin is 15.6/16.5 on MCTest-150 and 7.3/4.6 on MCTest-500. [Doc 5]"
    assert grammar_accepts(g, reply(a))
    assert grammar_accepts(g, reply("It has 30 words in all 30. [Doc 2][Doc 3] Training took 2 days [Doc 4]."))
    assert grammar_accepts(g, reply("They use 2. [Doc 1]"))  # a one-digit last word
    assert not grammar_accepts(g, reply("They use BERT. [Doc 1]"))  # after a word the citation still comes first
    assert not grammar_accepts(g, reply("It ends at MCTest-500."))  # the exit still needs its citation
    s = check_citations(a, 7)
    assert [(x.citations, x.claim) for x in s] == [((5,), "The margin is 15.6/16.5 on MCTest-150 and 7.3/4.6 on MCTest-500.")]
