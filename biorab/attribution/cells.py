"""Attribution at scoring time: ``<cell dir>/attribution.parquet`` for every dataset-slice cell of a run, and
the attribution rates (with CIs) added to each cell's `CellResult`.

Runs after every cell's rows are scored (the flip needs the twin's rows), from the consolidated predictions
on disk, the testbed's ledger and the test split: no model call, so a resumed, cached or re-tracked run
writes the same file.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from biorab.attribution.answers import answer_flags, error_types_json
from biorab.attribution.evidence import cell_evidence
from biorab.attribution.rates import rates
from biorab.attribution.twin import HELPED, HURT, find_twin, flip
from biorab.cells import CellPlan, CellResult
from biorab.diagnostics.cells import add_claim_diagnostics
from biorab.registry import TASKS

ATTRIBUTION_FILE = "attribution.parquet"

ATTRIBUTION_SCHEMA = pa.schema([
    ("id", pa.string()), ("correct", pa.bool_()), ("parse_failed", pa.bool_()),
    ("has_corrupted", pa.bool_()), ("followed_corruption", pa.bool_()), ("copied_evidence", pa.bool_()),
    ("copied_corrupted", pa.bool_()), ("leaked_evidence", pa.bool_()), ("flip", pa.string()),
    ("twin_cell_id", pa.string()), ("error_types", pa.string()), ("hit_tags", pa.string()),
])  # fmt: skip

#: The rates of a retrieving cell (docs/metrics.md), in report order, then those against its twin, and the
#: McNemar p-value of the flips (a p-value in the metric shape: no interval).
EVIDENCE_RATES: tuple[str, ...] = ("misled_rate", "resisted_rate", "copy_rate_clean", "copy_rate_corrupted")
FLIP_RATES: tuple[str, ...] = ("helped_rate", "hurt_rate")
MCNEMAR_P = "flip_mcnemar_p"
ATTRIBUTION_METRICS: tuple[str, ...] = (*EVIDENCE_RATES, *FLIP_RATES, MCNEMAR_P)
#: Prefix of the §2.8 error-type rates (``error_rate/wrong_head``...): MLflow groups them under it.
ERROR_RATE = "error_rate/"


def is_attribution_metric(name: str) -> bool:
    return name in ATTRIBUTION_METRICS or name.startswith(ERROR_RATE)


def attributable(plan: CellPlan) -> bool:
    """A dataset slice of a registered task whose rows the parse stage filled."""
    return plan.dataset is not None and plan.retrieval is not None and plan.parses and plan.task in TASKS


def attribute_cells(results: Sequence[CellResult], cells_dir: Path, *, n_boot: int, seed: int) -> None:
    """Write every attributable cell's ``attribution.parquet`` under ``cells_dir/<cell_id>/`` and add its
    rates to its result (`CellResult.metrics`) and its counts to ``extra["attribution"]``."""
    cells = [r for r in results if attributable(r.plan)]
    rows = AttributionRows()
    by_id = {r.plan.cell_id: r for r in cells}
    plans = [r.plan for r in cells]
    for result in cells:
        twin = find_twin(result.plan, plans)
        attribute_cell(result, by_id[twin.cell_id] if twin is not None else None, cells_dir, rows,
                       n_boot=n_boot, seed=seed)


class AttributionRows:
    """Each cell's attribution rows, read once (by predictions file: cells of several runs can share a cell
    id), with the ledgers and test splits they are tagged from read once too."""

    def __init__(self) -> None:
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._rows: dict[str, list[dict[str, Any]]] = {}

    def of(self, result: CellResult) -> list[dict[str, Any]]:
        key = str(result.predictions_path)
        if key not in self._rows:
            self._rows[key] = _cell_rows(result, self._memo)
        return self._rows[key]


def attribute_cell(result: CellResult, twin: CellResult | None, cells_dir: Path, rows: AttributionRows, *,
                   n_boot: int, seed: int) -> None:
    """Write ``cells_dir/<cell_id>/attribution.parquet`` of `result` with the flip of each instance against
    `twin` (paired by instance id; ``None``: no twin) and set its rates on `result` (replacing earlier
    ones)."""
    own = rows.of(result)
    twin_rows = {row["id"]: row for row in rows.of(twin)} if twin is not None else {}
    for row in own:
        other = twin_rows.get(row["id"])
        row["twin_cell_id"] = twin.plan.cell_id if twin is not None else None
        row["flip"] = flip(other["_right"], row["_right"]) if other is not None else None
    _write(cells_dir / result.plan.cell_id / ATTRIBUTION_FILE, own)
    _add_rates(result, own, twin_rows, n_boot=n_boot, seed=seed)
    add_claim_diagnostics(result, twin, n_boot=n_boot, seed=seed)


def read_attribution(cell_dir: Path) -> dict[str, dict[str, Any]]:
    """The cell's attribution rows by instance id (empty when the cell has no ``attribution.parquet``)."""
    import pyarrow.parquet as pq

    path = cell_dir / ATTRIBUTION_FILE
    return {r["id"]: r for r in pq.read_table(path).to_pylist()} if path.is_file() else {}


def _cell_rows(result: CellResult, memo: dict[tuple[Any, ...], Any]) -> list[dict[str, Any]]:
    """One attribution row per instance of the cell, in slice order (``_right``, ``_clean``: helpers)."""
    import pyarrow.parquet as pq

    from biorab.labels import LABELS
    from biorab.metrics.predictions_scoring import triple_matching_for
    from biorab.metrics.tables import instance_table
    from biorab.ral.rows import row_hits, row_prediction

    plan = result.plan
    evidence = cell_evidence(plan, memo=memo)
    table = pq.read_table(result.predictions_path).to_pylist()
    preds = [row_prediction(r) for r in table]
    golds = [r["label"] for r in table]
    right = instance_table(plan.task, golds, preds, labels=LABELS.get(evidence.dataset),
                           triple_matching=triple_matching_for(plan.parser)).correct
    out = []
    for row, pred, ok in zip(table, preds, right, strict=True):
        hits = row_hits(row)
        tags = evidence.tags(hits)
        flags = answer_flags(plan.task, row["label"], pred, hits, tags)
        failed = not pred.ok
        out.append({
            "id": row["id"], "correct": None if failed or not row["label"] else bool(ok),
            "parse_failed": failed, "has_corrupted": flags.has_corrupted,
            "followed_corruption": flags.followed_corruption, "copied_evidence": flags.copied_evidence,
            "copied_corrupted": flags.copied_corrupted, "leaked_evidence": any(t["leaked"] for t in tags),
            "flip": None, "twin_cell_id": None, "error_types": error_types_json(flags.error_types),
            "hit_tags": json.dumps(tags, ensure_ascii=False), "_right": bool(ok),
            "_clean": flags.clean_evidence, "_errors": flags.error_types,
        })
    return out


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow.parquet as pq

    from biorab.atomic_files import atomic_path

    path.parent.mkdir(parents=True, exist_ok=True)
    columns = ATTRIBUTION_SCHEMA.names
    with atomic_path(path) as tmp:
        pq.write_table(pa.Table.from_pylist([{c: r[c] for c in columns} for r in rows],
                                            schema=ATTRIBUTION_SCHEMA), tmp)


def _add_rates(result: CellResult, rows: list[dict[str, Any]], twin_rows: dict[str, dict[str, Any]], *,
               n_boot: int, seed: int) -> None:
    from biorab.metrics.paired import mcnemar

    everyone = [True] * len(rows)
    corrupted = [r["has_corrupted"] for r in rows]
    columns: dict[str, tuple[list[bool], list[bool]]] = {}
    extra: dict[str, Any] = {"instances": len(rows), "with_corrupted": sum(corrupted),
                             "misled": sum(r["followed_corruption"] for r in rows),
                             "with_clean_evidence": sum(r["_clean"] for r in rows),
                             "leaked_evidence": sum(r["leaked_evidence"] for r in rows)}
    if result.plan.retrieves:
        columns.update({
            "misled_rate": ([r["followed_corruption"] for r in rows], corrupted),
            "resisted_rate": ([r["_right"] for r in rows], corrupted),
            "copy_rate_clean": ([r["copied_evidence"] for r in rows], [r["_clean"] for r in rows]),
            "copy_rate_corrupted": ([r["copied_corrupted"] for r in rows], corrupted),
        })
    paired = [r["flip"] is not None for r in rows]
    if any(paired):
        columns["helped_rate"] = ([r["flip"] == HELPED for r in rows], paired)
        columns["hurt_rate"] = ([r["flip"] == HURT for r in rows], paired)
        pairs = [(twin_rows[r["id"]]["_right"], r["_right"]) for r in rows if r["flip"] is not None]
        test = mcnemar([a for a, _ in pairs], [b for _, b in pairs])
        extra.update(twin_cell_id=rows[0]["twin_cell_id"], paired=len(pairs),
                     helped=test.only_b, hurt=test.only_a,
                     mcnemar={"statistic": test.statistic, "p_value": test.p_value, "method": test.method})
    errors = [r["_errors"] for r in rows]
    if any(e is not None for e in errors):
        names = sorted({name for e in errors if e for name in e})
        totals = sum((Counter(e) for e in errors if e), Counter())
        extra["error_types"] = {name: totals.get(name, 0) for name in names}
        for name in names:
            columns[ERROR_RATE + name] = ([bool(e and e.get(name)) for e in errors], everyone)
    if not columns:
        return
    result.metrics.update({k: v.to_json() for k, v in rates(columns, n_boot=n_boot, seed=seed).items()})
    if "mcnemar" in extra:
        result.metrics[MCNEMAR_P] = {"value": extra["mcnemar"]["p_value"], "ci_low": None, "ci_high": None}
    result.extra["attribution"] = extra
