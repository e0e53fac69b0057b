"""The in-process runner, content-keyed stores and resume logic behind `biorab run`.

`run_experiment(config)` plans the cells, executes the pending rows (Ray Data pipeline or in-process),
scores every cell from the rows on disk and logs to MLflow.
"""

from __future__ import annotations

from biorab.runner.run import RunResult, run_experiment

__all__ = ["RunResult", "run_experiment"]
