"""Seeded positive:negative resampling of a test split, its config option, and the positive-class
AUROC/AUPRC (checked against scikit-learn)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from biorab.common.errors import ConfigError
from biorab.common.records import Prediction
from biorab.datasets import load_dataset
from biorab.datasets.resample import positive_label, resample
from biorab.experiment import ExperimentConfig
from biorab.metrics.sampling_bias import binary_ranking, positive_probabilities

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data


def test_resample_keeps_the_ratio_exactly(data_dir: Path) -> None:
    test = load_dataset("ade_corpus_v2", "test", data_dir=data_dir)  # 143 positives, 357 negatives
    one_five = resample(test, (1, 5), seed=0, positive="1")
    assert Counter(e.label for e in one_five) == {"1": 71, "0": 355}  # 357 // 5 = 71 blocks
    assert Counter(e.label for e in resample(test, (1, 1), seed=0, positive="1")) == {"1": 143, "0": 143}
    small = resample(test, (1, 5), seed=0, positive="1", limit=24)
    assert [e.id for e in small][:5] == [f"ade_corpus_v2/test/{i}" for i in (25, 51, 64, 67, 97)]
    assert Counter(e.label for e in small) == {"1": 4, "0": 20}
    assert small == resample(test, (1, 5), seed=0, positive="1", limit=24)  # seeded
    assert small != resample(test, (1, 5), seed=1, positive="1", limit=24)
    # a limit below one block (1 + 5) draws one block: `--limit 2` of the whole grid still runs this cell
    assert Counter(e.label for e in resample(test, (1, 5), seed=0, positive="1", limit=2)) == {"1": 1, "0": 5}
    with pytest.raises(ConfigError, match="cannot draw"):  # a split with no negative has no block
        resample([e for e in test if e.label == "1"], (1, 5), seed=0, positive="1", limit=5)
    assert positive_label("semclass") == "y"
    with pytest.raises(ConfigError, match="binary classification"):
        positive_label("pharmkg")


def test_resample_enters_cell_id_only_when_set() -> None:
    # Unguided sampling is what configs meant before guided decoding became the default: the same id.
    base = {"name": "sb", "retrieval": [{"testbed": "none"}], "sampling": {"constrained": False}}
    plain = ExperimentConfig.model_validate({**base, "datasets": [{"name": "ade_corpus_v2"}]})
    assert plain.cells()[0].cell_id == "ade_corpus_v2-test__none__056c49431a"  # as before `resample`
    both = ExperimentConfig.model_validate({**base, "datasets": [
        {"name": "ade_corpus_v2"}, {"name": "ade_corpus_v2", "resample": {"ratio": "1:5", "seed": 0}}]})
    assert both.cells()[0].cell_id == plain.cells()[0].cell_id
    assert both.cells()[1].label == "ade_corpus_v2-test-1to5s0__none"
    assert both.cells()[1].fingerprint != both.cells()[0].fingerprint
    with pytest.raises(ValueError, match="ratio"):
        ExperimentConfig.model_validate({**base, "datasets": [{"name": "x", "resample": {"ratio": "1/5"}}]})


def test_method_enters_cell_id_only_when_set() -> None:
    base = {"name": "m", "datasets": [{"name": "ade_corpus_v2"}], "sampling": {"constrained": False}}
    cf = {"testbed": "counterfactual", "rate": 0.8}
    def cell(retrieval: dict[str, object]) -> Any:
        return ExperimentConfig.model_validate({**base, "retrieval": [retrieval]}).cells()[0]

    # The cell id computed by the code before `method` existed (main): the default keeps it (resume).
    assert cell(cf).cell_id == "ade_corpus_v2-test__counterfactual-0.8-bm25-k1__7c3405993a"
    assert cell({**cf, "method": "none"}).cell_id == cell(cf).cell_id
    dc = cell({**cf, "method": "detect_correct"})
    assert dc.label == "ade_corpus_v2-test__counterfactual-0.8-bm25-k1-detect_correct"
    assert dc.fingerprint != cell(cf).fingerprint
    with pytest.raises(ValueError, match="llm_label applies to the unlabeled testbed"):
        ExperimentConfig.model_validate({**base, "retrieval": [{**cf, "method": "llm_label"}]})


def test_binary_ranking_matches_sklearn() -> None:
    golds = ["1", "0", "1", "0", "0", "1", "0", "0"]
    logits = [(-0.1, -2.0), (-1.0, -0.5), (-0.7, -0.7), (-0.2, -1.9), (-3.0, -0.1), (-2.0, -0.2),
              (-0.9, -1.1), (-1.5, -0.3)]  # unnormalised (label "1", label "0") log-probs
    preds = [Prediction("1" if a > b else "0", "", True, {"1": a, "0": b}) for a, b in logits]
    p = positive_probabilities(preds, ("1", "0"), "1")
    assert p is not None
    np.testing.assert_allclose(p, [1 / (1 + np.exp(b - a)) for a, b in logits])
    y = [g == "1" for g in golds]
    out = binary_ranking(golds, preds, ("1", "0"), "1", n_boot=0)
    # P(positive) ranks like a - b: positives 1.9, 0.0, -1.8 beat 5, 3 and 1 of the 5 negatives
    # (-0.5, 1.7, -2.9, 0.2, -1.2): AUROC = 9 / 15.
    assert out["binary_auroc"].value == pytest.approx(roc_auc_score(y, p)) == pytest.approx(9 / 15)
    # Ranked: y n n y n n y n, so AP = (1/1 + 2/4 + 3/7) / 3.
    assert out["binary_auprc"].value == pytest.approx(average_precision_score(y, p))
    assert out["binary_auprc"].value == pytest.approx((1 + 2 / 4 + 3 / 7) / 3)
    assert binary_ranking(golds, [Prediction("1", "", True)] * 8, ("1", "0"), "1") == {}
