"""Paired significance of every cell against its no-retrieval baseline, Holm-corrected over the report.

The baseline of a cell is the cell of the same model, seed and dataset with retriever ``none``; both
predicted the same instances, so the test is paired (bootstrap on shared resamples, and McNemar; see
`biorab.metrics.paired`). Holm's step-down correction controls the family-wise error over all comparisons
of one report.
"""

from __future__ import annotations

from dataclasses import dataclass

from biorab.common.records import Prediction
from biorab.metrics.paired import holm
from biorab.sweep.collect import CellRecord

__all__ = ["Significance", "baseline_of", "holm", "versus_baselines"]


@dataclass(frozen=True)
class Significance:
    """A cell versus its baseline: delta of the headline metric, raw and Holm-adjusted p-values."""

    delta: float
    p_value: float
    p_holm: float
    mcnemar_p: float


def baseline_of(cell: CellRecord, cells: list[CellRecord]) -> CellRecord | None:
    """The same model, seed and dataset slice without retrieval. The slice includes a resampled split's
    ratio: a 1:5 resample of Ade-corpus-v2 is not paired with the plain test split (at a small ``--limit``
    their first rows share no instance, and a paired test on a few shared ones would not be the cell's)."""
    if cell.retriever == "none":
        return None
    return next((c for c in cells if c.retriever == "none" and c.model == cell.model and c.seed == cell.seed
                 and c.dataset == cell.dataset and c.ratio == cell.ratio and c.method == "none"), None)


def cell_name(cell: CellRecord) -> str:
    """A cell as the report names it: model / retriever / dataset (ratio) / corpus."""
    ratio = f" ({cell.ratio})" if cell.ratio else ""
    return f"{cell.model} / {cell.retriever} / {cell.dataset}{ratio} / {cell.corpus}"


def versus_baselines(cells: list[CellRecord], *, n_boot: int, seed: int = 0,
                     not_comparable: list[str] | None = None) -> dict[int, Significance]:
    """Index of a cell in `cells` → its test against its baseline (cells without one are left out).

    A cell that shares no instance with its baseline cannot be compared: it is left out too, and named in
    `not_comparable` (when given) with the reason, so one cell never ends the report."""
    from biorab.common.errors import BioRABError
    from biorab.common.labels import LABELS
    from biorab.metrics.predictions_scoring import triple_matching_for
    from biorab.tasks import get_task

    raw: dict[int, tuple[float, float, float]] = {}
    for i, cell in enumerate(cells):
        base = baseline_of(cell, cells)
        if base is None:
            continue
        golds, preds_a, preds_b = _aligned(base, cell)
        if not golds:
            _skip(not_comparable, cell, f"no instance in common with its baseline {cell_name(base)} "
                                        f"({cell.n} and {base.n} instances)")
            continue
        try:
            result = get_task(cell.task).compare(golds, preds_a, preds_b, metric=cell.metric,
                             labels=LABELS.get(cell.dataset), n_boot=n_boot, seed=seed,
                             triple_matching=triple_matching_for("robust"))
        except BioRABError as e:  # e.g. nothing to score on the shared instances
            _skip(not_comparable, cell, str(e))
            continue
        raw[i] = (result.delta, result.p_value if result.p_value is not None else 1.0, result.mcnemar.p_value)
    adjusted = holm([p for _, p, _ in raw.values()])
    pairs = zip(raw.items(), adjusted, strict=True)
    return {i: Significance(d, p, adj, mc) for (i, (d, p, mc)), adj in pairs}


def _skip(not_comparable: list[str] | None, cell: CellRecord, why: str) -> None:
    if not_comparable is not None:
        not_comparable.append(f"{cell_name(cell)}: {why}")


def _aligned(base: CellRecord, cell: CellRecord) -> tuple[list[str], list[Prediction], list[Prediction]]:
    """Golds and both prediction lists on the instances both cells have (the same slice, in order)."""
    import pyarrow.parquet as pq

    from biorab.ral.specs.rows import row_prediction

    rows_a = {r["id"]: r for r in pq.read_table(base.predictions).to_pylist()}
    rows_b = pq.read_table(cell.predictions).to_pylist()
    shared = [r for r in rows_b if r["id"] in rows_a]
    return ([r["label"] for r in shared], [row_prediction(rows_a[r["id"]]) for r in shared],
            [row_prediction(r) for r in shared])
