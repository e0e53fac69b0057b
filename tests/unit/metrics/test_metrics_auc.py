"""AUROC and AUPRC from per-label scores, one-vs-rest and macro-averaged, against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from biorab.common.records import Prediction
from biorab.metrics import score
from biorab.metrics.auc import auroc_binary, average_precision_binary
from biorab.tasks import get_task


def _scored(label: str, scores: dict[str, float]) -> Prediction:
    return Prediction(label=label, raw=label, ok=True, scores=scores)


def test_hand_computed_binary() -> None:
    # Positives at ranks 1 and 3 of 4: AUROC = (2 + 1) / 4 pairs; AP = (1/1 + 2/3) / 2.
    scores = np.array([0.9, 0.8, 0.7, 0.1])
    positive = np.array([True, False, True, False])
    assert auroc_binary(scores, positive) == 0.75
    assert average_precision_binary(scores, positive) == pytest.approx(5 / 6)
    assert np.isnan(auroc_binary(scores, np.zeros(4, dtype=bool)))
    assert np.isnan(average_precision_binary(scores, np.zeros(4, dtype=bool)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_with_ties_agrees_with_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    gold = rng.random(n) < 0.3
    # Rounded scores create many ties.
    p = np.round(np.clip(0.35 * gold + rng.random(n) * 0.7, 0, 1), 1)
    labels = ["1", "0"]
    golds = ["1" if g else "0" for g in gold]
    predictions = [_scored("1" if x >= 0.5 else "0", {"1": float(x), "0": float(1 - x)}) for x in p]
    report = score(get_task("classification"), golds, predictions, labels=labels, n_boot=0)
    expected_auroc = roc_auc_score(gold, p)  # class "0" has the same AUROC (complementary scores)
    expected_auprc = (average_precision_score(gold, p) + average_precision_score(~gold, 1 - p)) / 2
    assert report.metrics["auroc"].value == pytest.approx(expected_auroc, abs=1e-9)
    assert report.metrics["auprc"].value == pytest.approx(expected_auprc, abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1])
def test_multiclass_agrees_with_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = ["(A)", "(B)", "(C)", "(D)"]
    n = 250
    gold = rng.integers(0, 4, n)
    probs = rng.dirichlet(np.ones(4), n)
    probs[np.arange(n), gold] += 0.3
    probs /= probs.sum(axis=1, keepdims=True)
    predictions = [
        _scored(labels[int(row.argmax())], dict(zip(labels, map(float, row), strict=True))) for row in probs
    ]
    report = score(get_task("qa"), [labels[g] for g in gold], predictions, labels=labels, n_boot=0)
    onehot = np.eye(4)[gold]
    assert report.metrics["auroc"].value == pytest.approx(
        roc_auc_score(gold, probs, multi_class="ovr", average="macro", labels=[0, 1, 2, 3]), abs=1e-9
    )
    assert report.metrics["auprc"].value == pytest.approx(
        average_precision_score(onehot, probs, average="macro"), abs=1e-9
    )


def test_skipped_with_a_reason_when_scores_are_missing_or_incomplete() -> None:
    golds = ["y", "n"]
    partial = [_scored("y", {"y": -0.1, "n": -2.3}), Prediction("n", "n", True)]
    report = score(get_task("classification"), golds, partial, n_boot=0)
    assert report.skipped["auroc"] == "1 of 2 predictions have no per-label scores"
    assert "auroc" not in report.metrics and "auprc" not in report.metrics
    incomplete = [_scored("y", {"y": -0.1}), _scored("n", {"y": -3.0, "n": -0.1})]
    report = score(get_task("classification"), golds, incomplete, n_boot=0)
    assert report.skipped["auprc"] == "prediction 0 has no score for label(s) ['n']"


def test_label_without_gold_positives_is_left_out_of_the_average() -> None:
    # Gold has only "y" and "n"; label "maybe" has no positives, so it has no curve.
    golds = ["y", "n", "y"]
    predictions = [
        _scored("y", {"y": 0.9, "n": 0.1, "maybe": 0.0}),
        _scored("n", {"y": 0.2, "n": 0.8, "maybe": 0.0}),
        _scored("y", {"y": 0.6, "n": 0.4, "maybe": 0.0}),
    ]
    report = score(get_task("classification"), golds, predictions, labels=["y", "n", "maybe"], n_boot=0)
    assert report.metrics["auroc"].value == 1.0
    assert report.metrics["auprc"].value == 1.0
