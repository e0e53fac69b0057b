"""Duplicate and label counting of `biorab.datasets.stats`, and the entity-pair split of link prediction."""

from __future__ import annotations

import doctest

import pytest

import biorab.datasets.linkprediction as linkprediction
from biorab.common.records import Example
from biorab.datasets.linkprediction import question_text, split_pair
from biorab.datasets.stats import SplitStats, count_duplicates, label_counts, split_stats


def _ex(i: int, text: str, label: str, task: str = "classification") -> Example:
    return Example(id=f"d/test/{i}", task=task, dataset="d", split="test", text=text, label=label)


def test_duplicates_need_same_text_and_label() -> None:
    examples = [_ex(0, "a", "y"), _ex(1, "a", "n"), _ex(2, "a", "y"), _ex(3, "b", "y"), _ex(4, "a", "y")]
    # Rows 2 and 4 repeat row 0; row 1 has the same text but another label.
    assert count_duplicates(examples) == 2


def test_label_counts_order_and_triples() -> None:
    assert list(label_counts([_ex(0, "a", "n"), _ex(1, "b", "y"), _ex(2, "c", "y")]).items()) == [
        ("y", 2),
        ("n", 1),
    ]
    triples = [
        _ex(0, "s", "A|INHIBITS|B\nA|CAUSES|C", "triple_extraction"),
        _ex(1, "t", "D|INHIBITS|E", "triple_extraction"),
    ]
    assert label_counts(triples) == {"INHIBITS": 2, "CAUSES": 1}


def test_split_stats_json() -> None:
    stats = split_stats([_ex(0, "a", "y"), _ex(1, "a", "y")])
    assert stats == SplitStats(rows=2, labels={"y": 2}, duplicates=1)
    assert stats.to_json() == {"rows": 2, "labels": {"y": 2}, "duplicates": 1}
    assert split_stats([]).to_json() == {"rows": 0, "labels": {}, "duplicates": 0}


@pytest.mark.parametrize(("pair", "known", "expected"), [
    ("fosl1 and fosl2", set(), ("fosl1", "fosl2")),
    ("citalopram and head and neck neoplasms", {"citalopram"}, ("citalopram", "head and neck neoplasms")),
    ("head and neck neoplasms and isyna1", {"isyna1"}, ("head and neck neoplasms", "isyna1")),
    ("a and b and c", {"a and b", "c"}, ("a and b", "c")),
    ("a and b and c", set(), ("a", "b and c")),
    ("no separator", set(), None),
    (" and x", set(), None),
])  # fmt: skip
def test_split_pair(pair: str, known: set[str], expected: tuple[str, str] | None) -> None:
    assert split_pair(pair, known) == expected


def test_question_text_and_doctests() -> None:
    assert question_text("EBI3", "lymphocyte activation") == (
        "What is the relationship between EBI3 and lymphocyte activation ?"
    )
    assert doctest.testmod(linkprediction).failed == 0
