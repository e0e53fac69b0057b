"""No-retrieval twins across a sweep's runs: a retrieving cell with no twin in its own run (a sweep runs each
model × matrix block as its own run) is attributed against a twin in another run of the same model.

Runs once every run of the sweep is scored (`biorab.sweep.run.run_sweep`): the twin may sit in a later
block. A twin from another run has the run's model, seed and sampling, the cell's dataset slice up to its
limit (`DatasetSpec.fingerprint_json`), and rows for every instance of the cell (a larger limit of the same
slice covers a smaller one: the slice is the split's first rows); among several, the one
`twin_candidates` puts first, earlier runs first (`biorab.attribution.cell_attribution.twin_of`). The flip,
its rates
and the run's ``summary.json`` and ``report.md`` are then rewritten as for a twin in the run
(`biorab.attribution.cell_attribution.attribute_cell`, `biorab.runner.run.write_run_files`), so a resumed
sweep
writes the same files again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from biorab.common.cell_records import CellResult
from biorab.sweep.expand import SweepRun


@dataclass(frozen=True)
class _Candidate:
    result: CellResult
    key: str  # `_keys`


def attribute_across_runs(runs: Sequence[tuple[SweepRun, Any]]) -> list[str]:
    """Attribute every retrieving cell of `runs` (each sweep run with its `RunResult`) that has no twin in
    its own run against one in another run of its model; rewrite the runs that changed. Returns the cell
    ids attributed so (``<run name>/<cell id>``)."""
    from biorab.attribution.cell_attribution import AttributionRows, attributable, attribute_cell, twin_of
    from biorab.runner.run import write_run_files

    rows = AttributionRows()
    keyed = [[_Candidate(c, key) for c, key in _keys(run, result.cells) if attributable(c.plan)]
             for run, result in runs]
    pool = [c for cells in keyed for c in cells if not c.result.plan.retrieves]
    done: list[str] = []
    for (run, result), cells in zip(runs, keyed, strict=True):
        own = [c.result for c in cells]
        changed = False
        for cell in cells:
            plan = cell.result.plan
            if not plan.retrieves or twin_of(cell.result, own, rows) is not None:
                continue
            twin = twin_of(cell.result, [c.result for c in pool if c.key == cell.key], rows)
            if twin is None:
                continue
            attribute_cell(cell.result, twin, result.run_dir / "cells", rows, n_boot=run.config.n_boot,
                           seed=run.config.seed)
            done.append(f"{run.config.name}/{plan.cell_id}")
            changed = True
        if changed:
            write_run_files(run.config, result.cells, result.stats, result.sections, result.run_dir)
    return done


def _keys(run: SweepRun, cells: list[CellResult]) -> list[tuple[CellResult, str]]:
    """Each dataset-slice cell of the run with what it and its twin from another run share besides the plan
    fields `twin_candidates` checks: the model (with its reasoning setting), seed, sampling and dataset
    slice without its limit."""
    slices = {c.cell_id: c.dataset for c in run.config.cells()}
    # the label holds the reasoning setting: a thinking-budget run's twin is never the budget-free run's
    common = [run.label, run.config.seed, run.config.sampling.model_dump(mode="json")]
    return [(c, json.dumps([*common, slices[c.plan.cell_id].fingerprint_json()], sort_keys=True))
            for c in cells if c.plan.cell_id in slices]
