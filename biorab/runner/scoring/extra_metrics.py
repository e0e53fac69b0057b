"""Metrics some cells add to their task metrics: the corpus method's scores (detection, correction,
labeling) and, for resampled slices, the positive-class AUROC/AUPRC of the sampling-bias study."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from biorab.experiment import ExperimentConfig
from biorab.ral.specs.cell_records import CellSlice
from biorab.runner.scoring.cell_metrics import CellResult


def add_extra_results(results: Sequence[CellResult], slices: Sequence[CellSlice],
                      methods: Mapping[str, Any], config: ExperimentConfig) -> None:
    """Update `results` in place (cells of neither kind are left as they are)."""
    from biorab.methods.apply import add_method_results

    add_method_results(results, dict(methods))
    resampled = {s.plan.cell_id for s in slices if _resample(config, s.plan.cell_id) is not None}
    for result in results:
        if result.plan.cell_id in resampled:
            _add_sampling_bias(result, config)


def _resample(config: ExperimentConfig, cell_id: str) -> Any:
    cell = next((c for c in config.cells() if c.cell_id == cell_id), None)
    return None if cell is None else cell.dataset.resample


def _add_sampling_bias(result: CellResult, config: ExperimentConfig) -> None:
    import pyarrow.parquet as pq

    from biorab.common.labels import LABELS
    from biorab.datasets.resample import positive_label
    from biorab.metrics.sampling_bias import binary_ranking
    from biorab.ral.specs.rows import row_prediction

    spec = _resample(config, result.plan.cell_id)
    dataset, _ = result.plan.dataset_setting()
    positive = positive_label(dataset, spec.positive)
    # only what `row_prediction` and the gold need: not the prompt, which is most of a row's bytes
    rows = pq.read_table(result.predictions_path, columns=["label", "gen_text", "pred_label", "pred_ok",
                                                          "pred_scores"]).to_pylist()
    labels = LABELS.get(dataset) or tuple(sorted({r["label"] for r in rows}))
    ranking = binary_ranking([r["label"] for r in rows], [row_prediction(r) for r in rows], labels, positive,
                             n_boot=config.n_boot, seed=config.seed)
    result.metrics.update({k: v.to_json() for k, v in ranking.items()})
    pos = sum(r["label"] == positive for r in rows)
    result.extra["resample"] = {**spec.model_dump(mode="json"), "positive": positive, "positives": pos,
                                "negatives": len(rows) - pos}
