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


def test_short_answer_follow_up_matches_the_question_form():
    from qasper_rag.prompts import short_answer_messages, yes_no_question
    assert yes_no_question("Does the paper report macro F1?") and not yes_no_question("What datasets are used?")
    assert "Yes or No only" in short_answer_messages("Does it use BERT?", "It uses BERT [Doc 1].")[0]["content"]
    assert "Copy the few words" in short_answer_messages("Which model?", "It uses BERT [Doc 1].")[0]["content"]
