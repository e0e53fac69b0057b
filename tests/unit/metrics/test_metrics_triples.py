"""Triple-extraction metrics: exact, lower-cased set matching (micro P/R/F1 and head/relation/tail)."""

from __future__ import annotations

import pytest

from biorab.common.errors import ConfigError, DataError
from biorab.common.records import Prediction
from biorab.metrics import score
from biorab.metrics.triples import normalize_element, parse_triples
from biorab.tasks import get_task


def test_hand_computed_case() -> None:
    golds = ["Aspirin|effect|bleeding", "drugX|dosage|10 mg", "a|effect|b"]
    predictions = [
        # Two predicted triples, one right (casing differs): triple p=2 g=1 c=1.
        Prediction("aspirin|effect|Bleeding\nibuprofen|effect|rash", raw="...", ok=True),
        # Wrong relation; head right, tail right after whitespace collapsing.
        Prediction("drugx|effect|10  mg", raw="...", ok=True),
        # A parse failure predicts nothing.
        Prediction(None, raw="I cannot tell.", ok=False),
    ]
    report = score(get_task("triple_extraction"), golds, predictions, n_boot=0)
    values = {name: v.value for name, v in report.metrics.items()}
    expected = {
        "precision": 1 / 3, "recall": 1 / 3, "f1": 1 / 3,  # p=3 g=3 c=1
        "head_precision": 2 / 3, "head_recall": 2 / 3, "head_f1": 2 / 3,  # p=3 g=3 c=2
        "relation_precision": 1 / 2, "relation_recall": 1 / 3, "relation_f1": 0.4,  # p=2 g=3 c=1
        "tail_precision": 2 / 3, "tail_recall": 2 / 3, "tail_f1": 2 / 3,  # p=3 g=3 c=2
        "parse_failure_rate": 1 / 3,
    }  # fmt: skip
    assert list(values) == list(expected)
    for name, value in expected.items():
        assert values[name] == pytest.approx(value, abs=1e-12), name
    assert report.parse_failures == 1
    assert report.skipped == {}


def test_nothing_correct_gives_zero_and_duplicates_count_once() -> None:
    golds = ["a|r|b\na|r|b"]
    report = score(get_task("triple_extraction"), golds, [Prediction("x|r|y\nx|r|y", "", True)], n_boot=0)
    assert report.metrics["f1"].value == 0.0
    assert report.metrics["relation_f1"].value == 1.0  # relation sets {r} and {r}
    perfect = score(get_task("triple_extraction"), golds, [Prediction("A|R|B", "", True)], n_boot=0)
    assert perfect.metrics["precision"].value == perfect.metrics["recall"].value == 1.0


def test_several_gold_triples_per_instance() -> None:
    golds = ["a|r|b\nc|r|d"]
    report = score(get_task("triple_extraction"), golds, [Prediction("c|r|d", "", True)], n_boot=0)
    assert report.metrics["precision"].value == 1.0
    assert report.metrics["recall"].value == 0.5
    assert report.metrics["f1"].value == pytest.approx(2 / 3)


def test_parse_triples_and_normalisation() -> None:
    assert parse_triples(" A |Effect| b \n\nc|r|d\n") == {("a", "effect", "b"), ("c", "r", "d")}
    assert normalize_element("x\t\ty") == "x y"
    with pytest.raises(ValueError, match="line 2 'a|b' has 2 '|'-separated parts"):
        parse_triples("x|y|z\na|b")


def test_malformed_gold_or_prediction_names_the_instance() -> None:
    with pytest.raises(DataError, match=r"field 'gold': instance 1: triple line 1"):
        score(get_task("triple_extraction"), ["a|r|b", "a|r"], [Prediction("", "", True)] * 2)
    with pytest.raises(DataError, match=r"field 'prediction': instance 0"):
        score(get_task("triple_extraction"), ["a|r|b"], [Prediction("a|r|b|c", "", True)])


def test_original_matching_reproduces_5_metrics_with_the_strict_parser() -> None:
    from biorab.tasks import parse

    golds = ["Aspirin|effect|Bleeding", "x|dosage|y", "p|effect|q  "]
    outputs = ["aspirin|effect|bleeding", "x | dosage | y", "p|effect|q"]
    predictions = [parse("triple_extraction", o, mode="strict_original") for o in outputs]
    assert [p.label for p in predictions] == ["aspirin|effect|bleeding", "x| dosage |y", "p|effect|q"]
    original = score(get_task("triple_extraction"), golds, predictions, n_boot=0, triple_matching="original")
    values = {name: v.value for name, v in original.metrics.items()}
    # 5_metrics.py: the predicted relation " dosage " is not stripped, the gold tail "q  " is not stripped.
    assert values["f1"] == pytest.approx(1 / 3)
    assert values["head_f1"] == 1.0
    assert values["relation_f1"] == pytest.approx(2 / 3)
    assert values["tail_f1"] == pytest.approx(2 / 3)
    normalized = score(get_task("triple_extraction"), golds, predictions, n_boot=0)
    assert normalized.metrics["f1"].value == 1.0
    with pytest.raises(ConfigError, match="unknown triple matching 'exact'"):
        score(get_task("triple_extraction"), golds, predictions, triple_matching="exact")


def test_cached_parse_is_the_parse_and_still_refuses_bad_lines() -> None:
    from biorab.metrics.triples import _parsed, parse_triples

    text = "Aspirin | Effect |  Rash\naspirin|effect|rash\nB|r|C"
    first = parse_triples(text)
    assert first == frozenset({("aspirin", "effect", "rash"), ("b", "r", "c")})
    assert parse_triples(text) is first  # shared, not parsed again
    assert parse_triples(text, matching="original", side="prediction") == frozenset(
        {("aspirin ", " effect ", "  rash"), ("aspirin", "effect", "rash"), ("b", "r", "c")})
    for _ in range(2):  # an error is never cached as a result
        with pytest.raises(ValueError, match="has 2 '|'-separated parts"):
            parse_triples("a|b")
    assert _parsed.cache_info().maxsize is not None  # bounded
