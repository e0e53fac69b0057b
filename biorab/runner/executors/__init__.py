"""Executing a plan's pending rows: the in-process executor (`local`) and the prompt-prefix order of rows
(`prefix_order`). The executor seam (`Executor`, `ExecutionRequest`, `ExecutionStats`, the progress
callbacks) is `biorab.execution`, re-exported here; the Ray executor is `pipelines.ray_executor.RayExecutor`.
"""

from __future__ import annotations

from biorab.execution import (
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
