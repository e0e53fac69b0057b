"""The DrugMech experiment source: each (query file × world or disease mode × run) of a config's
``drugmech:`` section is one cell.

Its plans say ``renders=False`` (rows carry the prompt rendered when planning) and ``parses=False`` (the
generations are scored from disk by `cell_metrics`), so the generic stages need no DrugMech branch.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biorab.experiment import ExperimentConfig
from biorab.ral.specs.cell_records import CellSlice
from biorab.runner.plan.experiment_source import CellListing, ScoredCells


class DrugMechSource:
    """Drug Mechanisms Counterfactuals cells (`biorab.runner.plan.experiment_source.ExperimentSource`)."""

    name = "drugmech"

    def check(self, config: ExperimentConfig, *, path: str | Path | None, check_data: bool) -> None:
        from biorab.drugmech.experiment.config_checks import check_drugmech

        check_drugmech(config, path=path, check_data=check_data)

    def cells(self, config: ExperimentConfig, *, load_data: bool) -> list[CellListing] | None:
        if config.drugmech is None:
            return []
        if not load_data:  # a cell per world or mode depends on each file's query type
            return None
        from biorab.drugmech.experiment.cell_slices import drugmech_cells

        return [CellListing(plan.cell_id, config.drugmech.limit) for _, plan in drugmech_cells(config)]

    def plan(self, config: ExperimentConfig, cells_dir: Path) -> list[CellSlice]:
        from biorab.drugmech.experiment.cell_slices import plan_drugmech

        return plan_drugmech(config, cells_dir)

    def score(self, slices: Sequence[CellSlice], config: ExperimentConfig, cells_dir: Path,
              run_dir: Path) -> ScoredCells:
        from biorab.drugmech.experiment.cell_metrics import score_drugmech

        results, report = score_drugmech(slices, config.drugmech, cells_dir, run_dir, model=_model(config))
        return ScoredCells(results, report)

    def report_section(self, section: dict[str, Any]) -> str:
        from biorab.drugmech.experiment.cell_metrics import render_drugmech_section

        return render_drugmech_section(section)

    def console_summary(self, section: dict[str, Any]) -> str:
        from biorab.drugmech.experiment.cell_metrics import drugmech_console_summary

        return drugmech_console_summary(section)


def _model(config: ExperimentConfig) -> str:
    """The model the run's chain-depth samples name (a sweep's pooled fit tells its models apart by it): the
    backend's ``model``, else its ``name`` (a rehearsal's fake: ``rehearsal:<profile>``), else the backend."""
    params = config.backend.params
    return str(params.get("model") or params.get("name") or config.backend.name)
