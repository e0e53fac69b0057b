"""Negative-awareness rates t / l^t and f / l^f (paper, Testbed 4), with the original's bug fixed."""

from __future__ import annotations

import pytest

from biorab.common.build import build
from biorab.common.registry import METRICS
from biorab.metrics import negative_awareness
from biorab.metrics.awareness import awareness_table
from biorab.tasks import AWARENESS_NEGATIVE, AWARENESS_NOT_NEGATIVE, awareness_target

PAPER_WORDING = {"negative_answer": "True", "not_negative_answer": "False"}


def test_default_mapping_is_the_probes_own() -> None:
    # The probe says "If it is negative, please output False": a "False" on a true-noise instance (wrong
    # task output) is a correct judgement and counts toward the true negative-awareness rate.
    assert (AWARENESS_NEGATIVE, AWARENESS_NOT_NEGATIVE) == ("False", "True")
    report = negative_awareness([False, True], ["False", "True"], n_boot=0)
    assert report.counts == {"l_t": 1, "t": 1, "l_f": 1, "f": 1, "unparsed": 0}
    assert report.metrics["true_negative_awareness_rate"].value == 1.0
    assert report.metrics["false_negative_awareness_rate"].value == 1.0
    assert negative_awareness([False], ["True"], n_boot=0).counts["t"] == 0
    # The probe's training targets start with the answer the metric counts for that judgement.
    assert awareness_target(is_negative=True).startswith(AWARENESS_NEGATIVE + "-")
    assert awareness_target(is_negative=False).startswith(AWARENESS_NOT_NEGATIVE + "-")


def test_hand_computed_rates() -> None:
    # Wrong task outputs (true negatives): judged False (negative), True, unparseable -> t = 1 of l^t = 3.
    # Correct outputs (false negatives): judged True (not negative), False -> f = 1 of l^f = 2.
    correct = [False, False, False, True, True]
    judgments = ["False", "True", None, "True", "False"]
    report = negative_awareness(correct, judgments, n_boot=0)
    assert report.counts == {"l_t": 3, "t": 1, "l_f": 2, "f": 1, "unparsed": 1}
    assert report.metrics["true_negative_awareness_rate"].value == pytest.approx(1 / 3)
    assert report.metrics["false_negative_awareness_rate"].value == 0.5


def test_each_rate_reads_its_own_group() -> None:
    # The original computed both rates on the true-negative file: the false rate would be 0/3 there.
    # (Paper wording here: "True" = negative, as in 11_metric_na_rate.py.)
    correct = [False, False, False, True, True]
    judgments = ["False", "False", "False", "False", "False"]
    report = negative_awareness(correct, judgments, n_boot=0, **PAPER_WORDING)
    assert report.metrics["true_negative_awareness_rate"].value == 0.0
    assert report.metrics["false_negative_awareness_rate"].value == 1.0


def test_answer_words_are_configurable_and_exact() -> None:
    correct = [False, True]
    # "True-The retrieved example ..." is not the exact answer "True" (as in the original).
    assert negative_awareness(correct, ["False-The retrieved example", "True"], n_boot=0).counts["t"] == 0
    paper = negative_awareness(correct, ["True", "False"], n_boot=0, **PAPER_WORDING)
    assert paper.counts == {"l_t": 1, "t": 1, "l_f": 1, "f": 1, "unparsed": 0}
    swapped = negative_awareness(
        correct, ["neg", "pos"], negative_answer="neg", not_negative_answer="pos", n_boot=0
    )
    assert swapped.counts == {"l_t": 1, "t": 1, "l_f": 1, "f": 1, "unparsed": 0}


def test_empty_group_is_undefined_and_bootstrap_is_seeded() -> None:
    report = negative_awareness([True, True], ["False", "True"], n_boot=0)
    assert report.metrics["true_negative_awareness_rate"].value is None
    assert report.to_json()["metrics"]["true_negative_awareness_rate"]["value"] is None
    correct = [i % 3 == 0 for i in range(60)]
    judgments = ["True" if i % 2 else "False" for i in range(60)]
    first = negative_awareness(correct, judgments, n_boot=200, seed=4)
    assert first.to_json() == negative_awareness(correct, judgments, n_boot=200, seed=4).to_json()
    rate = first.metrics["false_negative_awareness_rate"]
    assert rate.ci_low is not None and rate.ci_high is not None
    assert rate.ci_low <= rate.value <= rate.ci_high  # type: ignore[operator]


def test_registered_metric_objects() -> None:
    metric = build(METRICS, "true_negative_awareness_rate")
    assert metric.compute(awareness_table([False, False, False], ["True", "False", "False"])) == 2 / 3
    with pytest.raises(ValueError, match="2 correctness flags but 1 judgements"):
        awareness_table([False, True], ["True"])
