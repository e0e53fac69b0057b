"""Single-label metrics: pinned hand-computed values and agreement with scikit-learn to 1e-9."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from biorab.common.errors import DataError, UnknownNameError
from biorab.common.records import Prediction
from biorab.metrics import score
from biorab.tasks import get_task

LABELS = ("a", "b", "c")


def _pred(label: str | None) -> Prediction:
    return Prediction(label=label, raw=label or "???", ok=label is not None)


def test_hand_computed_case() -> None:
    # Confusion (rows gold a,b,c; columns a,b,c,no-answer): a: 2,1,0,0  b: 0,1,0,1  c: 0,1,0,0.
    golds = ["a", "a", "a", "b", "b", "c"]
    predictions = [_pred(x) for x in ["a", "a", "b", "b", None, "b"]]
    report = score(get_task("classification"), golds, predictions, labels=LABELS, n_boot=0)
    values = {name: v.value for name, v in report.metrics.items()}
    expected = {
        "accuracy": 0.5,
        # precision / recall / f1: the micro values under the names triple extraction uses too.
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "micro_precision": 0.5,
        "micro_recall": 0.5,
        "micro_f1": 0.5,
        "macro_precision": 4 / 9,  # (1 + 1/3 + 0) / 3
        "macro_recall": 7 / 18,  # (2/3 + 1/2 + 0) / 3
        "macro_f1": 0.4,  # (0.8 + 0.4 + 0) / 3
        "weighted_precision": 11 / 18,  # (3*1 + 2/3) / 6
        "weighted_recall": 0.5,
        "weighted_f1": 8 / 15,  # (3*0.8 + 2*0.4) / 6
        "parse_failure_rate": 1 / 6,
    }
    assert list(values) == list(expected)
    for name, value in expected.items():
        assert values[name] == pytest.approx(value, abs=1e-12), name
    assert report.n == 6 and report.parse_failures == 1
    assert set(report.skipped) == {"auroc", "auprc"}
    assert "6 of 6 predictions have no per-label scores" in report.skipped["auroc"]


def test_label_outside_set_is_wrong_but_not_a_parse_failure() -> None:
    report = score(get_task("qa"), ["(A)", "(B)"], [_pred("(A)"), _pred("(Z)")], labels=["(A)", "(B)"],
                   n_boot=0)
    assert report.metrics["accuracy"].value == 0.5
    assert report.metrics["parse_failure_rate"].value == 0.0
    assert report.parse_failures == 0
    # Class (B): no correct prediction, so precision 0 (nothing predicted) and recall 0.
    assert report.metrics["macro_recall"].value == 0.5


def test_default_label_set_is_sorted_gold_labels() -> None:
    # Gold labels {y, n}; the prediction "maybe" is outside them and counts as wrong.
    report = score(get_task("classification"), ["y", "n", "y"], [_pred("y"), _pred("maybe"), _pred("n")],
                   n_boot=0)
    assert report.metrics["accuracy"].value == pytest.approx(1 / 3)
    # Label n: precision 0/1, recall 0/1; label y: precision 1/1, recall 1/2 -> F1 2/3.
    assert report.metrics["macro_f1"].value == pytest.approx(1 / 3)


def test_bad_inputs_are_errors() -> None:
    with pytest.raises(DataError, match=r"instance 1: gold label 'x' is not in the label set"):
        score(get_task("classification"), ["a", "x"], [_pred("a"), _pred("a")], labels=LABELS)
    with pytest.raises(DataError, match="2 gold labels but 1 predictions"):
        score(get_task("classification"), ["a", "b"], [_pred("a")])
    with pytest.raises(DataError, match="no instances"):
        score(get_task("classification"), [], [])
    with pytest.raises(UnknownNameError, match="Did you mean 'classification'"):
        score(get_task("clasification"), ["a"], [_pred("a")])
    with pytest.raises(DataError, match="more than once"):
        score(get_task("classification"), ["a"], [_pred("a")], labels=["a", "a"])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n_labels", [2, 5])
def test_agrees_with_sklearn_on_random_data(seed: int, n_labels: int) -> None:
    rng = np.random.default_rng(seed)
    labels = [f"L{i}" for i in range(n_labels)]
    n = 400
    golds = [labels[i] for i in rng.integers(0, n_labels, n)]
    raw = [labels[i] for i in rng.integers(0, n_labels, n)]
    # Make predictions informative, and add parse failures and out-of-set answers.
    raw = [g if rng.random() < 0.4 else p for g, p in zip(golds, raw, strict=True)]
    kinds = rng.random(n)
    predictions = [
        _pred(None) if k < 0.08 else _pred("other") if k < 0.12 else _pred(p)
        for k, p in zip(kinds, raw, strict=True)
    ]
    report = score(get_task("link_prediction"), golds, predictions, labels=labels, n_boot=0)
    values = {name: v.value for name, v in report.metrics.items()}
    # scikit-learn view: failures and out-of-set answers are one "no answer" class outside the label set.
    sk_pred = [p.label if p.ok and p.label in labels else "__none__" for p in predictions]
    assert values["accuracy"] == pytest.approx(accuracy_score(golds, sk_pred), abs=1e-9)
    micro = precision_recall_fscore_support(
        golds, sk_pred, labels=[*labels, "__none__"], average="micro", zero_division=0
    )
    for average in ("macro", "weighted"):
        expected = precision_recall_fscore_support(
            golds, sk_pred, labels=labels, average=average, zero_division=0
        )
        for stat, value in zip(("precision", "recall", "f1"), expected[:3], strict=True):
            assert values[f"{average}_{stat}"] == pytest.approx(value, abs=1e-9), (average, stat)
    for stat, value in zip(("precision", "recall", "f1"), micro[:3], strict=True):
        assert values[f"micro_{stat}"] == pytest.approx(value, abs=1e-9)
        assert values[stat] == pytest.approx(value, abs=1e-9)
    assert values["parse_failure_rate"] == pytest.approx(np.mean(kinds < 0.08), abs=1e-12)
