"""The claim diagnostics of a retrieving cell, from its rows on disk (and its no-retrieval twin's): each
metric's mean over the instances where it is defined, with a 95% bootstrap CI (`biorab.metrics.bootstrap`,
the seeded resamples over instances every other metric uses), added to the cell's `CellResult` as
``claims/<metric>`` (so ``summary.json`` and MLflow carry them) with the per-metric instance counts in
``extra["claims"]``.

Called once per cell where the attribution rates are set
(`biorab.attribution.cell_attribution.attribute_cell`), so a
twin found in another run of a sweep (`biorab.sweep.twins`) updates the self-knowledge split too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from biorab.diagnostics.claims import NAMES, InstanceClaims, claim_scores
from biorab.metrics.bootstrap import metric_values
from biorab.ral.specs.cell_records import CellResult

#: The prefix of the claim metrics in ``summary.json`` and MLflow (MLflow groups them under it).
PREFIX = "claims/"
METRICS: tuple[str, ...] = tuple(PREFIX + name for name in NAMES)
#: Row columns the diagnostics read.
COLUMNS = ("id", "task", "label", "hits", "pred_label", "pred_ok")


def is_claim_metric(name: str) -> bool:
    return name.startswith(PREFIX)


def diagnosable(task: str) -> bool:
    """A registered task whose answer items mean the same in every instance (`TaskType.items_shared`)."""
    from biorab.common.registry import TASKS
    from biorab.tasks import get_task

    return task in TASKS and get_task(task).items_shared


def instance_claims(task: str, rows: Iterable[Mapping[str, Any]],
                    twin: Mapping[str, frozenset[str]] | None) -> list[tuple[str, InstanceClaims]]:
    """Each row's id and `InstanceClaims` (`twin`: the twin's answer items by instance id, or ``None``)."""
    import json

    from biorab.tasks import get_task

    kind = get_task(task)
    items, evidence = kind.answer_items, kind.evidence_items  # a hit's label may be malformed: still an item
    out = []
    for row in rows:
        hits = tuple(evidence(h.get("value")) for h in json.loads(row["hits"] or "[]"))
        out.append((row["id"], InstanceClaims(items(row["label"]), answer_items(task, row), hits,
                                              twin.get(row["id"]) if twin is not None else None)))
    return out


def answer_items(task: str, row: Mapping[str, Any]) -> frozenset[str]:
    """A row's answer as items: none for a parse failure (as `biorab.attribution.answers` reads it)."""
    from biorab.tasks import get_task

    return get_task(task).answer_items(row["pred_label"]) if row["pred_ok"] and row["pred_label"] \
        else frozenset()


def read_rows(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=list(COLUMNS)).to_pylist()


def add_claim_diagnostics(result: CellResult, twin: CellResult | None, *, n_boot: int, seed: int) -> None:
    """Set the claim metrics of a retrieving cell of a diagnosable task on `result` (replacing earlier
    ones: a sweep calls again with a twin from another run); nothing for any other cell."""
    if not result.plan.retrieves or not diagnosable(result.plan.task):
        return
    twin_items = None
    if twin is not None:
        twin_items = {r["id"]: answer_items(twin.plan.task, r) for r in read_rows(twin.predictions_path)}
    rows = read_rows(result.predictions_path)
    scores = [claim_scores(c) for _, c in instance_claims(result.plan.task, rows, twin_items)]
    values = claim_values(scores, n_boot=n_boot, seed=seed)
    for name in METRICS:
        result.metrics.pop(name, None)
    result.metrics.update({PREFIX + k: v for k, v in values.items()})
    result.extra["claims"] = {"instances": len(scores),
                              **{f"n_{k}": sum(s[k] is not None for s in scores) for k in NAMES}}


@dataclass(frozen=True, eq=False)
class ClaimTable:
    """Per instance, each metric's value and whether it is defined; weights as every metric table."""

    values: Mapping[str, tuple[np.ndarray, np.ndarray]]
    weights: np.ndarray

    @property
    def n(self) -> int:
        return int(self.weights.shape[0])

    def reweight(self, weights: np.ndarray) -> ClaimTable:
        return replace(self, weights=weights)


@dataclass(frozen=True)
class ClaimMean:
    """A claim metric's weighted mean over the instances where it is defined (``nan`` where none is)."""

    name: str

    def compute(self, table: ClaimTable) -> float:
        value, defined = table.values[self.name]
        below = float(table.weights[defined].sum())
        return float((table.weights[defined] * value[defined]).sum()) / below if below else float("nan")


def claim_values(scores: list[dict[str, float | None]], *, n_boot: int, seed: int) -> dict[str, dict[str,
                                                                                                   Any]]:
    """Each metric of `NAMES` that some instance defines, as ``{"value", "ci_low", "ci_high"}``.

    >>> claim_values([{"faithfulness": 1.0}, {"faithfulness": 0.5}, {"faithfulness": None}], n_boot=0,
    ...              seed=0)["faithfulness"]["value"]
    0.75
    """
    columns = {}
    for name in NAMES:
        got = [s.get(name) for s in scores]
        if any(v is not None for v in got):
            columns[name] = (np.array([v if v is not None else 0.0 for v in got], dtype=float),
                             np.array([v is not None for v in got], dtype=bool))
    if not columns:
        return {}
    table = ClaimTable(columns, np.ones(len(scores)))
    found = metric_values(table, [ClaimMean(name) for name in columns], n_boot=n_boot,  # type: ignore[misc]
                          seed=seed)
    return {name: value.to_json() for name, value in found.items()}
