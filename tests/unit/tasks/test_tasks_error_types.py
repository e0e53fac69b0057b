"""`answer_items` and `error_types` of every task type, pinned with hand-made answers."""

from __future__ import annotations

import pytest

from biorab.tasks import get_task

TRIPLES = get_task("triple_extraction")
NONZERO = dict[str, int]


def errors(predicted: str | None, gold: str) -> NONZERO:
    """The non-zero counts only (every type is always present)."""
    counts = TRIPLES.error_types(predicted, gold)
    assert set(counts) == {"wrong_head", "wrong_relation", "wrong_tail", "over_long_span", "missing_triple",
                           "extra_triple"}
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
def test_closed_label_error_type_is_wrong_label(task: str) -> None:
    kind = get_task(task)
    assert kind.error_types("positive", "negative") == {"wrong_label": 1}
    assert kind.error_types("negative", "negative") == {"wrong_label": 0}
    assert kind.error_types(None, "negative") == {"wrong_label": 1}
    assert kind.error_types("", "negative") == {"wrong_label": 1}


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
        # the paper's "error generation" (Table 7): right entities, wrong relation
        ("tamoxifen|effect|high-dose", "tamoxifen|dosage|high-dose", "wrong_relation"),
        ("adrenaline|interacts with|alkaline phosphatase", "adrenaline|inhibits|alkaline phosphatase",
         "wrong_relation"),
        ("tamoxifen|effect|retinal changes", "tamoxifen|effect|macular edema", "wrong_tail"),
        # a shorter (truncated) entity is a wrong entity, not an over-long one
        ("olanzapine|dosage|20-mg dail", "olanzapine|dosage|20-mg daily", "wrong_tail"),
        ("olanzapine|dosage|20-mg", "olanzapine|dosage|20-mg daily", "wrong_tail"),
    ],
)
def test_one_wrong_slot(predicted: str, gold: str, expected: str) -> None:
    assert errors(predicted, gold) == {expected: 1}


# ---- over-long spans


@pytest.mark.parametrize(
    ("predicted", "gold"),
    [
        # the paper's §2.8.3 example
        ("nimodipine|effect|hypoxemia and hypotension induced by nimodipine.",
         "nimodipine|effect|hypotension"),
        ("metronidazole|effect|clinical, spectroscopic, and imaging abnormalities resolved with"
         " discontinuation of metronidazole",
         "metronidazole|effect|clinical, spectroscopic, and imaging abnormalities"),
        # the head too long, or both entities
        ("high-dose tamoxifen|effect|retinal changes", "tamoxifen|effect|retinal changes"),
        ("high-dose tamoxifen|effect|similar retinal changes", "tamoxifen|effect|retinal changes"),
        # containment is checked after normalization
        ("Nimodipine|effect|Hypoxemia and   HYPOTENSION", "nimodipine|effect|hypotension"),
    ],
)
def test_over_long_span(predicted: str, gold: str) -> None:
    assert errors(predicted, gold) == {"over_long_span": 1}


def test_over_long_span_needs_the_same_relation_and_no_other_wrong_entity() -> None:
    # relation wrong as well: the entities match in one slot only, no pair
    assert errors("nimodipine|dosage|hypoxemia and hypotension", "nimodipine|effect|hypotension") == {
        "extra_triple": 1, "missing_triple": 1}
    # tail over-long but head wrong: no pair
    assert errors("aspirin|effect|hypoxemia and hypotension", "nimodipine|effect|hypotension") == {
        "extra_triple": 1, "missing_triple": 1}


# ---- extra and missing triples


def test_unrelated_prediction_is_extra_and_the_gold_missing() -> None:
    assert errors("tamoxifen|effect|retinal changes", "tamoxifen|dosage|high-dose") == {
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
                                                         "over_long_span": 1}


def test_mixed_instance() -> None:
    predicted = "\n".join([
        "olanzapine|dosage|20-mg daily",                    # correct
        "olanzapine|effect|rls symptoms that were caused",  # over-long tail of the second gold triple
        "ropinirole|effect|rls symptoms",                   # wrong head of the second gold triple
        "ropinirole|dosage|daily",                          # nothing
    ])
    gold = "\n".join([
        "olanzapine|dosage|20-mg daily",
        "olanzapine|effect|rls symptoms",
        "haloperidol|effect|insomnia",                      # nothing predicted near it
    ])
    assert errors(predicted, gold) == {"over_long_span": 1, "wrong_head": 1, "extra_triple": 1,
                                       "missing_triple": 1}


def test_a_prediction_pairing_several_ways_takes_the_first_type() -> None:
    # a|r|b x contains a|r|b (over-long) and differs from a|s|b x in the relation only
    assert errors("a|r|b x", "a|r|b\na|s|b x") == {"over_long_span": 1}
    # wrong relation of one gold triple and wrong head of another: the relation wins
    assert errors("a|r|b", "a|s|b\nc|r|b") == {"wrong_relation": 1}
    # wrong head of one and wrong tail of another: the head wins
    assert errors("a|r|b", "c|r|b\na|r|d") == {"wrong_head": 1}


def test_gold_paired_through_a_type_not_taken_is_not_missing() -> None:
    # the prediction is an over-long span of the first gold triple and a wrong tail of the second: it
    # counts once (over-long), and neither gold triple is missing
    assert errors("a|r|b c", "a|r|b\na|r|d") == {"over_long_span": 1}


def test_counts_partition_both_sides() -> None:
    predicted = "a|r|b\na|r|b c\nx|r|y\nq|q|q\nm|s|n"
    gold = "a|r|b\nx|s|y\nm|s|o\nk|k|k"
    counts = TRIPLES.error_types(predicted, gold)
    correct = len(TRIPLES.answer_items(predicted) & TRIPLES.answer_items(gold))
    predicted_side = sum(counts[name] for name in ("wrong_head", "wrong_relation", "wrong_tail",
                                                   "over_long_span", "extra_triple"))
    assert correct + predicted_side == len(TRIPLES.answer_items(predicted))
    # a|r|b c is extra (a|r|b is found); x|r|y wrong relation; m|s|n wrong tail; q|q|q extra; k|k|k missing
    assert {name: n for name, n in counts.items() if n} == {"wrong_relation": 1, "wrong_tail": 1,
                                                            "extra_triple": 2, "missing_triple": 1}


@pytest.mark.parametrize("name", ["task_types", "triple_errors", "triples"])
def test_doctests(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"biorab.tasks.{name}"))
    assert result.attempted > 0
    assert result.failed == 0
