"""Executing a plan's pending rows: the executor seam (`executor`: `Executor`, `ExecutionRequest`,
`ExecutionStats`, the progress callbacks), the in-process executor (`local`), the rows a rerun finishes from
the cache alone (`cached_rows`), the backend built on its first cache miss (`deferred_backend`) and the
prompt-prefix order of rows (`prefix_order`). The Ray executor is `pipelines.ray_executor.RayExecutor`.
"""

from __future__ import annotations

from biorab.runner.execution.executor import (
    CellRowsFn,
    ExecutionRequest,
    ExecutionStats,
    Executor,
    ProgressFn,
    fan_out,
    rows_per_cell,
)

__all__ = ["CellRowsFn", "ExecutionRequest", "ExecutionStats", "Executor", "ProgressFn", "fan_out",
           "rows_per_cell"]
