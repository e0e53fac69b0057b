"""The `ExecutionRequest` of a run's pending rows: the run's pipeline as data, and the runner's own
writing and ordering of rows as callables (an executor, in-process or on Ray, imports nothing of the
runner)."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from biorab.caches import default_store_paths
from biorab.common.paths import cache_dir
from biorab.execution import CellRowsFn, ExecutionRequest, ProgressFn
from biorab.experiment import ExperimentConfig
from biorab.ral import RALParts
from biorab.ral.row_stages.row_pipeline import RowPipeline
from biorab.ral.specs.cell_records import CellPlan
from biorab.runner.executors.prefix_order import order_by_prefix
from biorab.runner.plan.cell_slices import sampling_seeds
from biorab.runner.store.shards import write_rows


def execution_request(rows: Sequence[dict[str, Any]], plans: Mapping[str, CellPlan],
                      parts: Mapping[str, RALParts], config: ExperimentConfig, *, cells_dir: Path,
                      attempt: str, progress: ProgressFn | None = None,
                      cell_rows: CellRowsFn | None = None) -> ExecutionRequest:
    """The request for `rows` of the cells in `plans`, with their RAL `parts` (assembled once per cell by
    the runner, corpus methods included: `biorab.ral.assemble_cells`), the cache's hit and generation
    stores, shards under `cells_dir` stamped with `attempt`."""
    hits, generations = default_store_paths(cache_dir())
    pipeline = RowPipeline(dict(plans), dict(parts), hits, generations, config.backend.name,
                           dict(config.backend.params), config.sampling,
                           seeds=sampling_seeds(plans))  # DrugMech run r samples with seed + r
    return ExecutionRequest(rows, pipeline, config,
                            write=functools.partial(write_rows, cells_dir=cells_dir, attempt=attempt),
                            order=functools.partial(order_by_prefix, plans=dict(plans)),
                            progress=progress, cell_rows=cell_rows)
