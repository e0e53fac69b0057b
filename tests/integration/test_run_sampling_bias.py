"""Sampling-bias cells (1:1 and 1:5 positive:negative resamples of the Ade-corpus-v2 test split) on the fake
backend with label scores: weighted P/R/F1, AUROC and AUPRC pinned and checked against scikit-learn."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from sklearn.metrics import average_precision_score, precision_recall_fscore_support, roc_auc_score

from biorab.datasets import load_dataset
from biorab.experiment import ExperimentConfig
from biorab.runner import run_experiment

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data

# Pinned: (weighted P, R, F1, binary AUROC, binary AUPRC) per cell, fake backend, seed 0.
# 1:1 draws 10 + 10 instances, 14 answered right; 1:5 draws 4 + 20, 18 right.
PINNED = {
    "ade_corpus_v2-test-1to1s0__none": (0.7, 0.7, 0.7, 0.65, 0.7192063492063492),
    "ade_corpus_v2-test-1to5s0__none": (0.84375, 0.75, 0.7777777777777778, 0.6375, 0.32916666666666666),
}


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))


def answers(data_dir: Path) -> dict[str, str]:
    """The gold label, except every third test instance (by row number) gets the other label."""
    out = {}
    for i, ex in enumerate(load_dataset("ade_corpus_v2", "test", data_dir=data_dir)):
        out[ex.id] = ex.label if i % 3 else ("0" if ex.label == "1" else "1")
    return out


def test_sampling_bias_cells(tmp_path: Path, data_dir: Path) -> None:
    cfg = ExperimentConfig.model_validate({
        "name": "sb", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "limit": 20, "resample": {"ratio": "1:1", "seed": 0}},
                     {"name": "ade_corpus_v2", "limit": 24, "resample": {"ratio": "1:5", "seed": 0}}],
        "retrieval": [{"testbed": "none"}],
        "backend": {"name": "fake", "params": {"mode": "map", "answers": answers(data_dir)}},
        "sampling": {"max_tokens": 4, "score_labels": True}, "n_boot": 100, "tracking": {"enabled": False},
    })
    result = run_experiment(cfg)
    got = {}
    for cell in result.cells:
        rows = pq.read_table(cell.predictions_path).to_pylist()
        y = [r["label"] for r in rows]
        pred = [r["pred_label"] for r in rows]
        scores = [np.exp([r_s["1"], r_s["0"]]) for r_s in (eval_scores(r) for r in rows)]
        p_pos = [s[0] / s.sum() for s in scores]
        prec, rec, f1, _ = precision_recall_fscore_support(y, pred, labels=["1", "0"], average="weighted",
                                                           zero_division=0)
        m = {k: v["value"] for k, v in cell.metrics.items()}
        assert m["weighted_precision"] == pytest.approx(prec)
        assert m["weighted_recall"] == pytest.approx(rec)
        assert m["weighted_f1"] == pytest.approx(f1)
        assert m["binary_auroc"] == pytest.approx(roc_auc_score([v == "1" for v in y], p_pos))
        assert m["binary_auprc"] == pytest.approx(average_precision_score([v == "1" for v in y], p_pos))
        counts = cell.extra["resample"]
        assert counts["positives"] + counts["negatives"] == len(rows) == cell.n
        got[cell.plan.label] = (m["weighted_precision"], m["weighted_recall"], m["weighted_f1"],
                                m["binary_auroc"], m["binary_auprc"])
        assert counts["positives"] * int(counts["ratio"].split(":")[1]) == counts["negatives"]
    assert got.keys() == PINNED.keys()
    for label, values in PINNED.items():
        assert got[label] == pytest.approx(values)


def eval_scores(row: dict[str, object]) -> dict[str, float]:
    scores: dict[str, float] = json.loads(str(row["pred_scores"]))
    return scores
