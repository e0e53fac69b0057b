"""The BioRAB experiment source: every dataset slice × retrieval setting of a config is one cell.

Its rows are rendered from the task template and parsed by the stages, and each cell is scored from disk
with `biorab.metrics` (`biorab.runner.scoring.cell_metrics`). Checks of names, params and splits are
`biorab.runner.checks.validate.check_experiment`'s, which every config passes through.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biorab.experiment import ExperimentConfig
from biorab.ral.specs.cell_records import CellSlice
from biorab.runner.plan.cell_slices import plan_run
from biorab.runner.plan.experiment_source import CellListing, ScoredCells
from biorab.runner.scoring.cell_metrics import score_cell


class BioRABSource:
    """Dataset × retrieval-setting cells (`biorab.runner.plan.experiment_source.ExperimentSource`)."""

    name = "biorab"

    def check(self, config: ExperimentConfig, *, path: str | Path | None, check_data: bool) -> None:
        return None  # the generic checks of biorab.runner.checks.validate cover these cells

    def cells(self, config: ExperimentConfig, *, load_data: bool) -> list[CellListing]:
        return [CellListing(cell.cell_id, cell.dataset.limit) for cell in config.cells()]

    def plan(self, config: ExperimentConfig, cells_dir: Path) -> list[CellSlice]:
        return plan_run(config, cells_dir)

    def score(self, slices: Sequence[CellSlice], config: ExperimentConfig, cells_dir: Path,
              run_dir: Path) -> ScoredCells:
        return ScoredCells([score_cell(s.plan, s.examples, cells_dir, run_dir, n_boot=config.n_boot,
                                       seed=config.seed) for s in slices])

    def report_section(self, section: dict[str, Any]) -> str:
        return ""

    def console_summary(self, section: dict[str, Any]) -> str:
        return ""
