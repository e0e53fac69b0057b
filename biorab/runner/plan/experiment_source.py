"""The protocol of a kind of experiment: a source of cells that plans its cells and rows and scores them.

`biorab run` asks every registered source (`biorab.common.registry.EXPERIMENTS`: ``biorab`` for dataset ×
retrieval cells, ``drugmech`` for Drug Mechanisms query files) for its cells of a config; a source whose
section is absent plans none. The runner then executes and scores every cell the same way, so generic code
never branches on the kind: what differs (rows with a pre-rendered prompt, scoring from disk) is said by the
plans a source makes and by the source's own `score`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from biorab.experiment import ExperimentConfig
    from biorab.ral.specs.cell_records import CellResult, CellSlice


@dataclass(frozen=True)
class CellListing:
    """One cell as ``biorab validate`` lists it: its id and its row limit (``None``: all rows)."""

    cell_id: str
    limit: int | None


@dataclass
class ScoredCells:
    """A source's cell results and its run-level section (``summary.json[<source>]``; ``None``: none)."""

    results: list[CellResult]
    section: dict[str, Any] | None = None


class ExperimentSource(Protocol):
    """One kind of experiment (see the module docstring)."""

    name: str

    def check(self, config: ExperimentConfig, *, path: str | Path | None, check_data: bool) -> None:
        """Refuse what this source's cells of `config` cannot run (`biorab.common.errors.ConfigError`)."""

    def cells(self, config: ExperimentConfig, *, load_data: bool) -> list[CellListing] | None:
        """This source's cells of `config` for ``biorab validate``; ``None`` when they cannot be listed
        without loading data and `load_data` is false."""

    def plan(self, config: ExperimentConfig, cells_dir: Path) -> list[CellSlice]:
        """Every cell with its slice and its pending rows (instances without a successful row on disk)."""

    def score(self, slices: Sequence[CellSlice], config: ExperimentConfig, cells_dir: Path,
              run_dir: Path) -> ScoredCells:
        """Score every cell from the rows on disk, writing ``run_dir/predictions/<cell_id>.parquet``."""

    def report_section(self, section: dict[str, Any]) -> str:
        """Markdown appended to ``report.md`` for the source's run-level section."""

    def console_summary(self, section: dict[str, Any]) -> str:
        """What ``biorab run`` prints for the source's run-level section."""


def experiment_sources() -> list[ExperimentSource]:
    """Every registered source, in name order (BioRAB cells before DrugMech cells)."""
    from biorab.common.registry import EXPERIMENTS

    return [EXPERIMENTS.get(name)() for name in EXPERIMENTS.names()]


def run_cells(config: ExperimentConfig) -> list[CellListing]:
    """Every cell `config` runs, of every source (BioRAB cells first, then DrugMech's; the DrugMech query
    files are read, since each file's query type decides its cells): what a run or sweep counts as its
    cells."""
    out: list[CellListing] = []
    for source in experiment_sources():
        listed = source.cells(config, load_data=True)
        if listed is None:  # the protocol lets a source decline only without its data
            raise TypeError(f"experiment source {source.name!r} listed no cells with its data loaded")
        out += listed
    return out
