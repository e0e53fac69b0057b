"""Abstention metrics (`biorab.metrics.selective`) on hand-built (probability, correct) sets whose numbers are
worked out by hand in the comments: a calibrated fake (ECE 0) and an overconfident one (ECE 0.45)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from biorab.metrics.selective import (
    AURC,
    ECE,
    GATED_ACCURACY,
    GATED_COVERAGE,
    PROBED_ACCURACY,
    abstention_report,
    top_label,
)


def binary(p_yes: float) -> dict[str, float]:
    return {"yes": math.log(p_yes), "no": math.log(1.0 - p_yes)}


def case(pairs: list[tuple[float, bool]]) -> tuple[list[bool], list[str], list[dict[str, float]]]:
    """Each pair: the top label "yes" at probability p, right (gold "yes") or wrong (gold "no")."""
    return [c for _, c in pairs], ["yes" if c else "no" for _, c in pairs], [binary(p) for p, _ in pairs]


# Calibrated: 10 instances at p = 0.8, 8 right: one bin (0.8-0.9), accuracy 0.8 = confidence -> ECE 0.
CALIBRATED = [(0.8, i < 8) for i in range(10)]
# Overconfident: 4 at 0.95 (right, wrong, right, wrong), 4 at 0.55 all right. Bin 9: accuracy 0.5, confidence
# 0.95; bin 5: accuracy 1.0, confidence 0.55. ECE = 4/8 × 0.45 + 4/8 × 0.45 = 0.45.
OVERCONFIDENT = [(0.95, True), (0.95, False), (0.95, True), (0.95, False)] + [(0.55, True)] * 4


def test_calibrated_fake_has_zero_ece() -> None:
    report = abstention_report(*case(CALIBRATED), None, n_boot=0, seed=0)
    assert report.metrics[ECE].value == pytest.approx(0.0)
    assert report.reliability == [pytest.approx({"low": 0.8, "high": 0.9, "n": 10.0, "confidence": 0.8,
                                                 "accuracy": 0.8})]


def test_overconfident_fake_ece_and_selective_accuracy_by_hand() -> None:
    report = abstention_report(*case(OVERCONFIDENT), None, n_boot=0, seed=0)
    m = {k: v.value for k, v in report.metrics.items()}
    assert m[ECE] == pytest.approx(0.45)
    # Ranked (ties in slice order): 1, 0, 1, 0, 1, 1, 1, 1.
    assert m["selective/accuracy@100"] == pytest.approx(6 / 8)
    assert m["selective/accuracy@75"] == pytest.approx(4 / 6)  # top ceil(6): 2 right of the first 4, + 2
    assert m["selective/accuracy@50"] == pytest.approx(2 / 4)
    assert m["selective/accuracy@25"] == pytest.approx(1 / 2)
    # Risk of the top k, k = 1..8: 0, 1/2, 1/3, 1/2, 2/5, 1/3, 2/7, 1/4; sum 1093/420; mean /8.
    assert m[AURC] == pytest.approx(1093 / 3360)
    assert report.counts == {"scored": 8, "top_is_gold": 6}


def test_a_confident_right_fake_gains_accuracy_as_coverage_drops() -> None:
    # Right exactly on the more confident half: accuracy 1 at 50% and 25%, 1/2 at 100%, 4/6 at 75%.
    pairs = [(0.9, True), (0.6, False), (0.85, True), (0.55, False), (0.95, True), (0.65, False),
             (0.7, True), (0.52, False)]
    m = {k: v.value for k, v in abstention_report(*case(pairs), None, n_boot=0, seed=0).metrics.items()}
    assert [m[f"selective/accuracy@{c}"] for c in (100, 75, 50, 25)] == pytest.approx([0.5, 4 / 6, 1.0, 1.0])
    assert m[AURC] == pytest.approx(np.mean([0, 0, 0, 0, 1 / 5, 2 / 6, 3 / 7, 4 / 8]))


def test_instances_without_label_scores_are_left_out() -> None:
    correct, golds, scores = case(OVERCONFIDENT)
    report = abstention_report([*correct, False], [*golds, "no"], [*scores, None], None, n_boot=0, seed=0)
    assert report.counts["scored"] == 8 and report.metrics[ECE].value == pytest.approx(0.45)


def test_bootstrap_intervals_hold_the_point_and_are_seeded() -> None:
    a = abstention_report(*case(OVERCONFIDENT), None, n_boot=200, seed=3)
    b = abstention_report(*case(OVERCONFIDENT), None, n_boot=200, seed=3)
    assert a == b
    for name in (ECE, AURC, "selective/accuracy@50"):
        v = a.metrics[name]
        assert v.ci_low is not None and v.ci_high is not None and v.value is not None
        assert v.ci_low <= v.value <= v.ci_high
        assert v.ci_low < v.ci_high  # the resamples vary


def test_probe_gate_by_hand() -> None:
    # Five instances; the fourth was not probed. Probed: right, right, wrong, right; the probe trusts
    # (answers "True") only the first, says "False" on the second and third, and is unparsable on the fifth.
    correct = [True, True, False, True, True]
    asked = [True, True, True, False, True]
    judgements = ["True", "False", "False", None, None]
    report = abstention_report(correct, ["y"] * 5, [None] * 5, (asked, judgements), n_boot=0, seed=0)
    m = {k: v.value for k, v in report.metrics.items()}
    assert m == {GATED_ACCURACY: 1.0, GATED_COVERAGE: 1 / 4, PROBED_ACCURACY: 3 / 4}
    assert report.counts == {"probed": 4, "trusted": 1}


def test_top_label_normalises_over_the_scored_labels() -> None:
    label, p = top_label({"a": math.log(0.1), "b": math.log(0.3), "c": math.log(0.1)})
    assert label == "b" and p == pytest.approx(0.6)
    with pytest.raises(ValueError, match="NaN"):
        top_label({"a": float("nan"), "b": 0.0})


def test_a_malformed_label_score_column_names_cell_row_and_field() -> None:
    from biorab.common.errors import BioRABError
    from biorab.runner.scoring.cell_metrics import _label_logprobs

    row = {"id": "x/1", "gen_label_logprobs": '{"0": -0.1}', "gen_error": None}
    assert _label_logprobs("cellA", row) == {"0": -0.1}
    assert _label_logprobs("cellA", {**row, "gen_error": "boom"}) is None  # a failed generation: not scored
    with pytest.raises(BioRABError, match=r"cell cellA, row 'x/2': field gen_label_logprobs"):
        _label_logprobs("cellA", {"id": "x/2", "gen_label_logprobs": "[1, 2]", "gen_error": None})


def test_ece_reads_the_top_label_and_selective_accuracy_the_answer() -> None:
    # The top-scored label "yes" (p 0.9) is the gold, but the parsed answer was wrong: ECE |1 - 0.9| = 0.1,
    # selective accuracy 0.
    report = abstention_report([False], ["yes"], [binary(0.9)], None, n_boot=0, seed=0)
    assert report.metrics[ECE].value == pytest.approx(0.1)
    assert report.metrics["selective/accuracy@100"].value == 0.0
