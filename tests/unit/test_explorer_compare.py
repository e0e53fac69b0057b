"""The pinned baseline's statistics in Python (`biorab.explorer.compare`, the page's scheme) and the cell
axes the explorer reads from a run's config (`biorab.explorer.axes`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from biorab.common.errors import DataError
from biorab.experiment import ExperimentConfig
from biorab.explorer.compare import SEED, bootstrap_delta, mulberry32, paired_accuracy, percentile
from biorab.explorer.sources import read_cells


def test_mulberry32_draws_the_javascript_values() -> None:
    # printed by Node.js from the reference JavaScript mulberry32 (Math.imul, >>> 0), not by this code
    draws = mulberry32(SEED)
    assert [next(draws) for _ in range(3)] == [0.35344086796976626, 0.02818377036601305, 0.6889668190851808]
    zero = mulberry32(0)
    assert [next(zero) for _ in range(2)] == [0.26642920868471265, 0.0003297457005828619]


def test_percentile_is_numpys_linear_interpolation_to_the_bit() -> None:
    rng = np.random.default_rng(7)
    for size in (1, 2, 37, 1000):
        values = sorted((rng.integers(-40, 40, size) / rng.integers(1, 50)).tolist())
        for q in (2.5, 50.0, 97.5):
            assert percentile(values, q) == float(np.percentile(values, q))


def test_bootstrap_by_hand() -> None:
    # n=3 pairs in canonical order (lost, tie, tie) with lost=1, gained=0; one resample draws
    # floor(3u) for the first three draws above: 1, 0, 2 -> tie, lost, tie -> delta -1/3
    assert bootstrap_delta(3, 0, 1, n_boot=1) == (-1 / 3, -1 / 3)
    # every pair gained, or every pair tied: no resample can differ
    assert bootstrap_delta(5, 5, 0) == (1.0, 1.0)
    assert bootstrap_delta(5, 0, 0) == (0.0, 0.0)
    with pytest.raises(DataError):
        bootstrap_delta(3, 2, 2)


def test_paired_accuracy_counts_delta_and_mcnemar() -> None:
    # b=3 baseline-only right, c=7 cell-only right, 10 ties right in both: McNemar exact
    # p = 2 * P(X <= 3), X ~ Binomial(10, 1/2) = 2 * 176 / 1024
    base = [True] * 3 + [False] * 7 + [True] * 10
    cell = [False] * 3 + [True] * 7 + [True] * 10
    got = paired_accuracy(base, cell)
    assert (got.n, got.gained, got.lost) == (20, 7, 3)
    assert (got.accuracy_base, got.accuracy_cell, got.delta) == (13 / 20, 17 / 20, 4 / 20)
    assert got.mcnemar_p == 2 * 176 / 1024
    assert got.ci_low is not None and got.ci_high is not None and got.delta is not None
    assert -1.0 <= got.ci_low <= got.delta <= got.ci_high <= 1.0
    assert paired_accuracy([], []).delta is None
    with pytest.raises(DataError, match="same instances"):
        paired_accuracy([True], [])


def _summary(run: Path, cells: list[tuple[str, str, str]]) -> None:
    entries = [{"cell_id": cid, "cell": label, "dataset": "ade_corpus_v2", "split": "test",
                "task": "classification", "testbed": testbed, "retriever": None, "n": 1}
               for cid, label, testbed in cells]
    (run / "summary.json").write_text(json.dumps({"cells": entries}), encoding="utf-8")


def test_axes_come_from_the_runs_config_else_from_the_summary(tmp_path: Path) -> None:
    config = ExperimentConfig.model_validate({
        "name": "run", "output_dir": str(tmp_path), "datasets": [{"name": "ade_corpus_v2"}],
        "retrieval": [{"testbed": "none"}, {"testbed": "counterfactual", "rate": 0.8, "retriever": "bm25",
                                            "k": 3, "method": "detect_correct", "template": "bm25"}],
        "backend": {"name": "fake", "params": {"model": "tiny-fake"}}})
    run = tmp_path / "run"
    run.mkdir()
    none, cf = config.cells()
    _summary(run, [(none.cell_id, none.label, "none"), (cf.cell_id, cf.label, "counterfactual"),
                   ("not-in-config__x", "ade_corpus_v2-test__other", "diverse")])
    (run / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json")), encoding="utf-8")
    cells, _ = read_cells(run)
    assert [c.axes for c in cells] == [
        {"model": "tiny-fake", "slice": "ade_corpus_v2-test", "testbed": "none", "rate": None,
         "retriever": None, "k": None, "method": "none", "template": "default"},
        {"model": "tiny-fake", "slice": "ade_corpus_v2-test", "testbed": "counterfactual", "rate": "0.8",
         "retriever": "bm25", "k": "3", "method": "detect_correct", "template": "bm25"},
        # a cell the config does not list: what summary.json says, the rest unknown (never guessed)
        {"model": "tiny-fake", "slice": "ade_corpus_v2-test", "testbed": "diverse", "rate": None,
         "retriever": None, "k": None, "method": None, "template": None},
    ]
    assert read_cells(run, sweep=True)[0][0].axes["model"] == "run"  # a sweep's run folder is its model
    (run / "config.yaml").unlink()
    assert read_cells(run)[0][1].axes == {"model": "run", "slice": "ade_corpus_v2-test",
                                          "testbed": "counterfactual", "rate": None, "retriever": None,
                                          "k": None, "method": None, "template": None}
