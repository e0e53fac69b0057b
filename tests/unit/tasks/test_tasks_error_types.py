"""`answer_items` and `error_types` of every task type, pinned with hand-made answers."""

from __future__ import annotations

import pytest

from biorab.tasks import get_task

TRIPLES = get_task("triple_extraction")
NONZERO = dict[str, int]


def errors(predicted: str | None, gold: str) -> NONZERO:
    """The non-zero counts only (every type is always present)."""
    counts = TRIPLES.error_types(predicted, gold)
    assert set(counts) == {"echoed_scaffold", "redundant_span", "wrong_head", "wrong_relation", "wrong_tail",
                           "error_generation", "missing_triple", "extra_triple"}
    return {name: n for name, n in counts.items() if n}


# ---- answer_items


def test_triple_items_are_normalized_as_the_metrics_compare_them() -> None:
    label = " Aspirin |Effect|  acute   Renal failure \n\naspirin|effect|acute renal failure\nx|dosage|Y"
    assert TRIPLES.answer_items(label) == {"aspirin|effect|acute renal failure", "x|dosage|y"}
    # the same answer written in another order and casing: equal item sets
    reordered = "X|dosage|y\naspirin|effect|acute renal failure"
    assert TRIPLES.answer_items(reordered) == TRIPLES.answer_items(label)
    assert TRIPLES.answer_items("") == frozenset()
    assert TRIPLES.answer_items(None) == frozenset()


def test_a_corrupted_triple_is_found_by_its_item() -> None:
    corrupted = TRIPLES.answer_items("aspirin|effect|Headache")
    assert TRIPLES.answer_items("Aspirin|effect|headache") <= corrupted
    assert not TRIPLES.answer_items("aspirin|dosage|headache") & corrupted


def test_malformed_triple_label_is_an_error_naming_the_line() -> None:
    with pytest.raises(ValueError, match="line 2 'a|b'"):
        TRIPLES.answer_items("a|r|b\na|b")


@pytest.mark.parametrize("task", ["link_prediction", "classification", "qa", "nli"])
def test_closed_label_items_are_the_label(task: str) -> None:
    kind = get_task(task)
    assert kind.answer_items("(A)") == {"(A)"}
    assert kind.answer_items("") == frozenset()
    assert kind.answer_items(None) == frozenset()
    # compared exactly, as the label metrics compare labels
    assert kind.answer_items("True") != kind.answer_items("true")


@pytest.mark.parametrize("task", ["link_prediction", "classification", "qa", "nli"])
def test_closed_label_error_type_is_error_generation(task: str) -> None:
    kind = get_task(task)
    none, wrong = {"echoed_scaffold": 0, "error_generation": 0}, {"echoed_scaffold": 0, "error_generation": 1}
    assert kind.error_types("positive", "negative") == wrong
    assert kind.error_types("negative", "negative") == none
    assert kind.error_types(None, "negative") == wrong
    assert kind.error_types("", "negative") == wrong
    # an echo is counted once, as an echo, right label or wrong
    echo = {"echoed_scaffold": 1, "error_generation": 0}
    assert kind.error_types("positive", "negative", raw="positive Response: the drug") == echo
    assert kind.error_types("negative", "negative", raw="negative. aspirin causes rash.",
                            echoes=["Aspirin causes rash."]) == echo
    assert kind.error_types("negative", "negative", raw="negative. aspirin causes",
                            echoes=["Aspirin causes rash."]) == none


# ---- triple error types, one slot wrong


def test_exact_answers_have_no_error() -> None:
    assert errors("Olanzapine|dosage|20-mg daily", "olanzapine|dosage|20-mg  daily") == {}
    assert errors("a|r|b\nc|r|d", "c|r|d\na|r|b") == {}
    assert errors("", "") == {}


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        ("alkaline phosphatase|inhibits|adrenaline", "adrenaline|inhibits|adrenaline", "wrong_head"),
        ("levodopa|effect|nausea", "carbidopa|effect|nausea", "wrong_head"),
        # made up (not the paper's): right entities, wrong relation
        ("tamoxifen|effect|high-dose", "tamoxifen|dosage|high-dose", "wrong_relation"),
        ("adrenaline|interacts with|alkaline phosphatase", "adrenaline|inhibits|alkaline phosphatase",
         "wrong_relation"),
        ("tamoxifen|effect|retinal changes", "tamoxifen|effect|macular edema", "wrong_tail"),
        # a shorter (truncated) entity with nothing redundant is a wrong entity, not a redundant one
        ("olanzapine|dosage|20-mg dail", "olanzapine|dosage|20-mg daily", "wrong_tail"),
        # a cut-off start shorter than half the gold entity is not read as the gold entity
        ("olanzapine|dosage|caused by a 20-m", "olanzapine|dosage|20-mg daily", "wrong_tail"),
        # the cut-off start must begin a word
        ("olanzapine|dosage|caused by a120-mg dail", "olanzapine|dosage|20-mg daily", "wrong_tail"),
        ("olanzapine|dosage|20-mg", "olanzapine|dosage|20-mg daily", "wrong_tail"),
    ],
)
def test_one_wrong_slot(predicted: str, gold: str, expected: str) -> None:
    assert errors(predicted, gold) == {expected: 1}


# ---- redundant spans (the paper's §2.8.3 examples are pinned with Table 7's, below)


@pytest.mark.parametrize(
    ("predicted", "gold"),
    [
        # the head too long, or both entities
        ("high-dose tamoxifen|effect|retinal changes", "tamoxifen|effect|retinal changes"),
        ("high-dose tamoxifen|effect|similar retinal changes", "tamoxifen|effect|retinal changes"),
        # containment is checked after normalization
        ("Nimodipine|effect|Hypoxemia and   HYPOTENSION", "nimodipine|effect|hypotension"),
    ],
)
def test_redundant_span(predicted: str, gold: str) -> None:
    assert errors(predicted, gold) == {"redundant_span": 1}


def test_redundant_span_needs_the_same_relation_and_no_other_wrong_entity() -> None:
    # relation wrong as well: one shared entity, the paper's "error generation"
    assert errors("nimodipine|dosage|hypoxemia and hypotension", "nimodipine|effect|hypotension") == {
        "error_generation": 1}
    # tail over-long but head wrong: no pair
    assert errors("aspirin|effect|hypoxemia and hypotension", "nimodipine|effect|hypotension") == {
        "extra_triple": 1, "missing_triple": 1}


# ---- extra and missing triples


def test_unrelated_prediction_is_extra_and_the_gold_missing() -> None:
    # no entity in common (in either slot): nothing pairs
    assert errors("tamoxifen|effect|retinal changes", "olanzapine|dosage|high-dose") == {
        "extra_triple": 1, "missing_triple": 1}


def test_parse_failure_misses_every_gold_triple() -> None:
    assert errors(None, "a|r|b\nc|r|d") == {"missing_triple": 2}
    assert errors("", "a|r|b") == {"missing_triple": 1}


def test_prediction_without_gold_is_extra() -> None:
    assert errors("a|r|b\nc|r|d", "") == {"extra_triple": 2}


# ---- multi-triple instances


def test_found_gold_triple_takes_no_second_pair() -> None:
    # a|r|b is found; a|r|c would be a wrong tail of it, but a found triple is set aside: extra
    assert errors("a|r|b\na|r|c", "a|r|b") == {"extra_triple": 1}


def test_several_predictions_may_pair_with_one_gold_triple() -> None:
    assert errors("a|r|c\na|r|d", "a|r|b") == {"wrong_tail": 2}
    assert errors("x|r|b\na|s|b\na|r|b c", "a|r|b") == {"wrong_head": 1, "wrong_relation": 1,
                                                         "redundant_span": 1}


def test_mixed_instance() -> None:
    predicted = "\n".join([
        "olanzapine|dosage|20-mg daily",                    # correct
        "olanzapine|effect|rls symptoms that were caused",  # redundant tail of the second gold triple
        "ropinirole|effect|rls symptoms",                   # wrong head of the second gold triple
        "ropinirole|dosage|daily",                          # shares no entity with a gold triple
    ])
    gold = "\n".join([
        "olanzapine|dosage|20-mg daily",
        "olanzapine|effect|rls symptoms",
        "haloperidol|effect|insomnia",                      # nothing predicted near it
    ])
    assert errors(predicted, gold) == {"redundant_span": 1, "wrong_head": 1, "extra_triple": 1,
                                       "missing_triple": 1}


def test_a_prediction_pairing_several_ways_takes_the_first_type() -> None:
    # a|r|b x contains a|r|b (redundant) and differs from a|s|b x in the relation only
    assert errors("a|r|b x", "a|r|b\na|s|b x") == {"redundant_span": 1}
    # wrong relation of one gold triple and wrong head of another: the relation wins
    assert errors("a|r|b", "a|s|b\nc|r|b") == {"wrong_relation": 1}
    # wrong head of one and wrong tail of another: the head wins
    assert errors("a|r|b", "c|r|b\na|r|d") == {"wrong_head": 1}


def test_gold_paired_through_a_type_not_taken_is_not_missing() -> None:
    # the prediction is a redundant span of the first gold triple and a wrong tail of the second: it
    # counts once (redundant), and neither gold triple is missing
    assert errors("a|r|b c", "a|r|b\na|r|d") == {"redundant_span": 1}


def test_counts_partition_both_sides() -> None:
    predicted = "a|r|b\na|r|b c\nx|r|y\nq|q|q\nm|s|n"
    gold = "a|r|b\nx|s|y\nm|s|o\nk|k|k"
    counts = TRIPLES.error_types(predicted, gold)
    correct = len(TRIPLES.answer_items(predicted) & TRIPLES.answer_items(gold))
    predicted_side = sum(counts[name] for name in ("echoed_scaffold", "redundant_span", "wrong_head",
                                                   "wrong_relation", "wrong_tail", "error_generation",
                                                   "extra_triple"))
    assert correct + predicted_side == len(TRIPLES.answer_items(predicted))
    # a|r|b c is extra (a|r|b is found); x|r|y wrong relation; m|s|n wrong tail; q|q|q extra; k|k|k missing
    assert {name: n for name, n in counts.items() if n} == {"wrong_relation": 1, "wrong_tail": 1,
                                                            "extra_triple": 2, "missing_triple": 1}


@pytest.mark.parametrize("name", ["task_types", "triple_errors", "triples", "template_catalog"])
def test_doctests(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"biorab.tasks.{name}"))
    assert result.attempted > 0
    assert result.failed == 0


# ---- the paper's own examples (Table 7 and §2.8), quoted verbatim from the paper, with the type the paper
# gives each. Table 7 writes a triple as "{head, relation, tail}" or "(head, relation, tail)".


def table7_triple(cell: str) -> str:
    """A Table 7 triple cell as a ``head|relation|tail`` label."""
    parts = cell.strip("{}()").split(", ")
    assert len(parts) == 3, cell
    return "|".join(parts)


@pytest.mark.parametrize(
    ("expected", "output", "paper_type"),
    [
        # Table 7, "Redundant information", ADE (the answer stops inside the gold tail)
        ("{olanzapine, dosage, 20-mg daily}",
         "{olanzapine, dosage, rls symptoms that were initially caused by a 20-mg dail}", "redundant_span"),
        # Table 7, "Error generation", ADE
        ("(tamoxifen, dosage, high-dose)", "(tamoxifen, effect, retinal changes.)", "error_generation"),
        # Table 7, "Error generation", GIT
        ("(adrenaline, inhibits, alkaline phosphatase)", "(alkaline phosphatase, interacts with, adrenaline)",
         "error_generation"),
    ],
)
def test_table7_triples(expected: str, output: str, paper_type: str) -> None:
    assert errors(table7_triple(output), table7_triple(expected)) == {paper_type: 1}


def test_table7_git_echo_of_the_retrieved_sentence() -> None:
    # Table 7, "Redundant information", GIT: the table gives the entity only ("glycerol dehydratase"); the
    # head and relation around it are ours, the same on both sides.
    expected, output = "glycerol dehydratase", "adenosylcobalamin.. retrieved sentence: glycerol dehydratase"
    assert errors(f"adocbl|interacts_with|{output}", f"adocbl|interacts_with|{expected}") == {
        "echoed_scaffold": 1}


def test_table7_bionli() -> None:
    nli = get_task("nli")
    labels = ("positive", "negative")  # Table 7's BioNLI labels
    # "Redundant information": the label is right, the answer echoes the prompt's scaffold
    answer = nli.parse_robust("negative retrieved sentence..", labels, None)
    assert answer.label == "negative"
    assert nli.error_types(answer.label, "negative", raw=answer.raw) == {"echoed_scaffold": 1,
                                                                         "error_generation": 0}
    # "Error generation"
    assert nli.error_types("negative", "positive", raw="negative") == {"echoed_scaffold": 0,
                                                                       "error_generation": 1}


@pytest.mark.parametrize(
    ("expected_tail", "output_tail"),
    [
        # §2.8.3 (ADE, Diversity-labeled corpus): "the expected tail entity is "hypotension", while RAL
        # regarded the "hypoxemia and hypotension induced by nimodipine." as the entity"
        ("hypotension", "hypoxemia and hypotension induced by nimodipine."),
        # §2.8.3: the gold entity and "the entire sentence" taken as one entity
        ("clinical, spectroscopic, and imaging abnormalities",
         "clinical, spectroscopic, and imaging abnormalities resolved with discontinuation of metronidazole"),
    ],
)
def test_section_2_8_3_redundancy(expected_tail: str, output_tail: str) -> None:
    # the paper gives the entities only; head and relation (ours) are the same on both sides
    assert errors(f"nimodipine|effect|{output_tail}", f"nimodipine|effect|{expected_tail}") == {
        "redundant_span": 1}


@pytest.mark.parametrize(
    ("task", "gold", "generated"),
    [
        ("link_prediction", "Interactions", "Chemical-Gene"),  # §2.8.2, PharmKG (ethanol and GABRA1)
        ("classification", "True", "False"),                   # §2.8.2, SemClass
        ("qa", "A", "D"),                                      # §2.8.3, MedMCQA: "misjudgment"
    ],
)
def test_section_2_8_misjudgments_are_error_generation(task: str, gold: str, generated: str) -> None:
    assert get_task(task).error_types(generated, gold, raw=generated) == {"echoed_scaffold": 0,
                                                                          "error_generation": 1}


# ---- echoes


def test_echo_of_a_scaffold_label_or_a_retrieved_sentence() -> None:
    # the wrapper's and the templates' labels, and a whole retrieved sentence, in any element
    assert errors("aspirin|effect|### Response: rash", "aspirin|effect|rash") == {"echoed_scaffold": 1}
    assert errors("context: aspirin|effect|rash", "aspirin|effect|rash") == {"echoed_scaffold": 1}
    sentence = "Aspirin  caused a rash in two patients."
    counts = TRIPLES.error_types("aspirin|effect|aspirin caused a rash in two patients.",
                                 "aspirin|effect|rash", echoes=[sentence])
    assert {name: n for name, n in counts.items() if n} == {"echoed_scaffold": 1}
    # part of a retrieved sentence is no echo: that is a redundant span
    counts = TRIPLES.error_types("aspirin|effect|a rash in two", "aspirin|effect|rash", echoes=[sentence])
    assert {name: n for name, n in counts.items() if n} == {"redundant_span": 1}


def test_an_echo_with_no_gold_near_it_is_still_an_echo_and_the_gold_missing() -> None:
    assert errors("x|r|retrieved sentence: y", "a|s|b") == {"echoed_scaffold": 1, "missing_triple": 1}


def test_origins_and_paper_classes_cover_every_type() -> None:
    from biorab.tasks.triple_errors import ERROR_TYPE_ORIGIN, PAPER_CLASS, TRIPLE_ERROR_TYPES

    assert set(ERROR_TYPE_ORIGIN) == set(PAPER_CLASS) == set(TRIPLE_ERROR_TYPES)
    assert {n for n, o in ERROR_TYPE_ORIGIN.items() if o == "paper"} == {
        "echoed_scaffold", "redundant_span", "error_generation"}
    for task, answer in (("triple_extraction", "a|r|b"), ("nli", "a"), ("multilabel_classification", "a")):
        kind = get_task(task)
        assert set(kind.error_type_origin) == set(kind.error_types(answer, answer))
