"""MLflow tracking of `biorab run`: one MLflow run per cell. Importing this package does not import mlflow."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from biorab.cells import CellResult
    from biorab.experiment import ExperimentConfig


def track_run(
    config: ExperimentConfig, results: list[CellResult], *, run_dir: Path, report_path: Path
) -> str:
    """Log every cell as one MLflow run (see `biorab.tracking.mlflow_tracker.track_run`)."""
    from biorab.tracking.mlflow_tracker import track_run as _track

    return _track(config, results, run_dir=run_dir, report_path=report_path)


__all__ = ["track_run"]
