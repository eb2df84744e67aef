"""Golden tests of output parsing and citation checks (hand-written replies of the kinds models give)."""
from qasper_rag.prompts import check_citations, citation_report, parse_output, split_sentences, strip_citations


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
    from qasper_rag.chunking import Chunk
    from qasper_rag.prompts import build_messages, context_block, short_answer_messages, usable_short_answer, yes_no_question
    assert yes_no_question("Does the paper report macro F1?") and not yes_no_question("What datasets are used?")
    ps = [Chunk("p:s0c0", "p", "text", "Intro", "Title: T. Section: Intro. We use BERT.", 10, 0, prefix_chars=26)]
    yn, span, main = short_answer_messages("Does it use BERT?", ps, "T"), short_answer_messages("Which model?", ps, "T"), build_messages("Which model?", ps, "T")
    assert "Yes or No only" in yn[1]["content"] and "shortest phrase" in span[1]["content"]
    prefix = main[0]["content"] + main[1]["content"][:len(context_block(ps, "T"))]
    assert span[0]["content"] + span[1]["content"][:len(context_block(ps, "T"))] == prefix and "[Doc 1] (Intro)\nWe use BERT." in prefix
    assert not usable_short_answer("Which model?", "Yes") and usable_short_answer("Which model?", "BERT")
    assert not usable_short_answer("Does it use BERT?", "BERT") and usable_short_answer("Does it use BERT?", "No")
