"""Twins across a sweep's runs: a cell with no twin in its own run (a sweep runs each model × matrix block as
its own run) is paired with a twin in another run of the same model. Three kinds of twin:

- the **no-retrieval twin** of a retrieving cell (`biorab.attribution.twin`): the flips, the excesses and the
  attribution's other twin rates;
- the **order twin** of an ordered cell (`biorab.attribution.order`): ``order_flip_rate``;
- the **framing twin** of a framed cell (`biorab.attribution.framing`): the framing flip and followed rates.

Runs once every run of the sweep is scored (`biorab.sweep.run.run_sweep`): the twin may sit in a later
block. A twin from another run has the run's model, seed and sampling, the cell's dataset slice up to its
limit (`DatasetSpec.fingerprint_json`; up to its framing too for a framing twin, whose queries are as
written), and rows for every instance of the cell (a larger limit of the same slice covers a smaller one:
the slice is the split's first rows); among several, the one `twin_candidates` puts first (no-retrieval
twins; order and framing twins: the one their own run's rule picks), earlier runs first. The rates and the
run's ``summary.json`` and ``report.md`` are then rewritten as for a twin in the run
(`biorab.attribution.cell_attribution.attribute_cell`, `biorab.attribution.order.set_order_flips`,
`biorab.attribution.framing.set_framing`, `biorab.runner.run.write_run_files`), so a resumed sweep writes
the same files again; the sweep then logs the new rates on each such cell's MLflow child run
(`biorab.tracking.experiment.log_twin_metrics`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from biorab.ral.specs.cell_records import CellPlan, CellResult
from biorab.sweep.expand import SweepRun

if TYPE_CHECKING:
    from biorab.attribution.order import TwinFlips


@dataclass(frozen=True)
class _Candidate:
    result: CellResult
    key: str  # `_keys`


def attribute_across_runs(runs: Sequence[tuple[SweepRun, Any]]) -> list[CellResult]:
    """Pair every cell of `runs` (each sweep run with its `RunResult`) that has no no-retrieval, order or
    framing twin in its own run with one in another run of its model; rewrite the runs that changed.
    Returns the cells paired so (their metrics changed)."""
    from biorab.attribution.cell_attribution import AttributionRows, attributable, attribute_cell, twin_of
    from biorab.runner.run import write_run_files

    rows = AttributionRows()
    keyed = [[_Candidate(c, key) for c, key in _keys(run, result.cells) if attributable(c.plan)]
             for run, result in runs]
    pool = [c for cells in keyed for c in cells if not c.result.plan.retrieves]
    done: list[CellResult] = []
    for (run, result), cells in zip(runs, keyed, strict=True):
        own = [c.result for c in cells]
        changed: list[CellResult] = []
        for cell in cells:
            plan = cell.result.plan
            if not plan.retrieves or twin_of(cell.result, own, rows) is not None:
                continue
            twin = twin_of(cell.result, [c.result for c in pool if c.key == cell.key], rows)
            if twin is None:
                continue
            attribute_cell(cell.result, twin, result.run_dir / "cells", rows, n_boot=run.config.n_boot,
                           seed=run.config.seed)
            changed.append(cell.result)
        changed += _pair_flips_across_runs(runs, run, result)
        if changed:
            write_run_files(run.config, result.cells, result.stats, result.sections, result.run_dir)
        done += list({id(c): c for c in changed}.values())
    return done


def _pair_flips_across_runs(runs: Sequence[tuple[SweepRun, Any]], run: SweepRun, result: Any
                            ) -> list[CellResult]:
    """The ordered and framed cells of `run` without an order or framing twin in their own run, paired
    with one from another run (`_flip_twin`); returns those paired."""
    from biorab.attribution.framing import framing_twin, set_framing
    from biorab.attribution.order import order_twin, paired_flips, set_order_flips, twin_plans

    others = [(r, res) for r, res in runs if r is not run]
    own_plans = twin_plans(result.cells)
    cells_dir = result.run_dir / "cells"
    n_boot, seed = run.config.n_boot, run.config.seed
    kinds: list[tuple[TwinRule, Callable[[CellPlan], bool], Callable[[TwinFlips], None]]] = [
        (order_twin, lambda p: p.retrieval is not None and p.retrieval.order != "retrieved",
         lambda pair: set_order_flips(pair, n_boot=n_boot, seed=seed)),
        (framing_twin, lambda p: p.retrieval is not None and p.framing != "none",
         lambda pair: set_framing(pair, cells_dir, n_boot=n_boot, seed=seed))]
    keys = {id(c): k for c, k in _keys(run, result.cells, framing=False)}
    paired: list[CellResult] = []
    ids = _Ids()
    for cell in result.cells:
        if cell.plan not in own_plans or id(cell) not in keys:
            continue
        for twin_of, needs, apply in kinds:
            if not needs(cell.plan) or twin_of(cell.plan, own_plans) is not None:
                continue
            twin = _flip_twin(cell, keys[id(cell)], others, twin_of, ids)
            pair = paired_flips(cell, twin) if twin is not None else None
            if pair is not None:
                apply(pair)
                paired.append(cell)
    return paired


#: An order or framing twin rule (`biorab.attribution.order.order_twin`, `.framing.framing_twin`).
TwinRule = Callable[[CellPlan, Sequence[CellPlan]], CellPlan | None]


class _Ids:
    """The instance ids of a cell's predictions, read once per file."""

    def __init__(self) -> None:
        self._ids: dict[str, set[str]] = {}

    def of(self, result: CellResult) -> set[str]:
        import pyarrow.parquet as pq

        key = str(result.predictions_path)
        if key not in self._ids:
            self._ids[key] = {str(i) for i in pq.read_table(key, columns=["id"]).column("id").to_pylist()}
        return self._ids[key]


def _flip_twin(cell: CellResult, key: str, others: Sequence[tuple[SweepRun, Any]], twin_of: TwinRule,
               ids: _Ids) -> CellResult | None:
    """`cell`'s order or framing twin among the cells of `others` (earlier runs first): one `twin_of` picks
    among a run's cells, of the same model, seed, sampling and slice (`key`), holding every instance of
    `cell`."""
    from biorab.attribution.order import twin_plans

    want = ids.of(cell)
    for run, result in others:
        candidates = [c for c, k in _keys(run, result.cells, framing=False) if k == key and want <= ids.of(c)]
        by_plan = {id(c.plan): c for c in candidates}
        twin = twin_of(cell.plan, twin_plans(candidates))
        if twin is not None:
            return by_plan[id(twin)]
    return None


def _keys(run: SweepRun, cells: list[CellResult], *, framing: bool = True) -> list[tuple[CellResult, str]]:
    """Each dataset-slice cell of the run with what it and its twin from another run share besides the plan
    fields `twin_candidates` checks: the model (with its reasoning setting), seed, sampling and dataset
    slice without its limit (and without its framing when `framing` is false: a framing twin's queries are
    as written)."""
    slices = {c.cell_id: c.dataset for c in run.config.cells()}
    # the label holds the reasoning setting: a thinking-budget run's twin is never the budget-free run's
    common = [run.label, run.config.seed, run.config.sampling.model_dump(mode="json")]
    out = []
    for c in cells:
        if c.plan.cell_id not in slices:
            continue
        data = slices[c.plan.cell_id].fingerprint_json()
        if not framing:
            data.pop("framing", None)
        out.append((c, json.dumps([*common, data], sort_keys=True)))
    return out
