"""What the batch stages read of a cell: `StagePlan`, the part of
`biorab.ral.specs.cell_records.CellPlan` they use.

The stages sit in the core, which knows no cells, runs or experiment kinds; a run's `CellPlan` (or any
object with these fields) tells them, per row, which template renders it, how it is parsed, whether and
where it retrieves, and whether it is probed.
"""

from __future__ import annotations

from typing import Any, Protocol


class StagePlan(Protocol):
    """One cell as the stages see it (field meanings: `biorab.ral.specs.cell_records.CellPlan`)."""

    @property
    def cell_id(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def task(self) -> str: ...

    @property
    def seed(self) -> int: ...

    @property
    def parser(self) -> str: ...

    @property
    def labels(self) -> tuple[str, ...] | None: ...

    @property
    def data_dir(self) -> str | None: ...

    @property
    def renders(self) -> bool: ...

    @property
    def parses(self) -> bool: ...

    @property
    def retrieves(self) -> bool: ...

    @property
    def probes(self) -> bool: ...

    @property
    def corpus_method(self) -> str: ...

    def dataset_setting(self) -> tuple[str, Any]:
        """(dataset, retrieval entry) of a dataset-slice cell; raises for other cells."""
        ...
