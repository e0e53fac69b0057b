"""What an explorer shows: the runs under a folder, their cells (from each run's ``summary.json``), and
each cell's rows: the consolidated predictions the run scored, else (a run killed before scoring) the
latest row per instance of its shards."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from biorab.common.errors import DataError
from biorab.explorer.axes import cell_axes, run_axes
from biorab.ral.specs.rows import ROW_SCHEMA, from_table
from biorab.runner.store.shards import latest_rows, read_all_rows

SUMMARY = "summary.json"
SWEEP_FILE = "sweep.yaml"  # written by `biorab sweep` into the sweep folder (biorab.sweep.run.SWEEP_FILE)


@dataclass(frozen=True)
class ExplorerCell:
    """One dataset cell of one run: `run` is the run's folder name (a sweep's model, with its seed)."""

    run: str
    cell_id: str
    label: str
    dataset: str
    split: str
    task: str
    testbed: str
    retriever: str | None
    n: int
    cell_dir: Path
    predictions: Path  # the rows the run scored, one per instance (may be missing: then the shards)
    axes: dict[str, str | None]  # `biorab.explorer.axes.AXES`: what the explorer sorts, groups, chooses by

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "cell_id": self.cell_id, "label": self.label, "dataset": self.dataset,
                "split": self.split, "task": self.task, "testbed": self.testbed, "retriever": self.retriever,
                "n": self.n, "axes": self.axes}


def run_dirs(folder: Path) -> list[Path]:
    """`folder` itself when it is a run (holds ``summary.json``), else its runs one level down (a sweep)."""
    if not folder.is_dir():
        raise DataError("no such folder (give a run's or a sweep's output folder)", path=folder)
    if (folder / SUMMARY).is_file():
        return [folder]
    runs = sorted(p.parent for p in folder.glob(f"*/{SUMMARY}"))
    if not runs:
        raise DataError(f"neither a run ({SUMMARY}) nor a sweep (runs holding {SUMMARY} one level down); "
                        "run `biorab run` or `biorab sweep` first", path=folder)
    return runs


def read_cells(run_dir: Path, *, sweep: bool = False) -> tuple[list[ExplorerCell], int]:
    """The dataset cells of a run, in ``summary.json`` order, and how many other cells it has (DrugMech
    cells: no dataset instances, left out of the explorer). `sweep`: the run is one model of a sweep (its
    folder name is then the cells' model axis)."""
    path = run_dir / SUMMARY
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise DataError(f"unreadable run summary ({e})", path=path) from e
    model, configured = run_axes(run_dir, sweep=sweep)
    out: list[ExplorerCell] = []
    for i, cell in enumerate(cells):
        if not cell.get("dataset"):
            continue
        try:
            out.append(ExplorerCell(
                run=run_dir.name, cell_id=cell["cell_id"], label=cell.get("cell") or cell["cell_id"],
                dataset=cell["dataset"], split=cell.get("split") or "", task=cell["task"],
                testbed=cell.get("testbed") or "none", retriever=cell.get("retriever"), n=int(cell["n"]),
                cell_dir=run_dir / "cells" / cell["cell_id"],
                # by name under this run folder: the folder may have been moved since the run wrote it
                predictions=run_dir / "predictions" / Path(cell.get("predictions") or "-").name,
                axes=cell_axes(model, configured.get(cell["cell_id"]), cell)))
        except (KeyError, TypeError, ValueError) as e:
            raise DataError(f"cell {i} lacks {e}", path=path, field="cells") from e
    return out, len(cells) - len(out)


def cell_rows(cell: ExplorerCell) -> list[dict[str, Any]]:
    """The cell's rows: what the run scored (``predictions/<cell id>.parquet``, written with
    ``summary.json``), else the latest row per instance of its shards."""
    if not cell.predictions.is_file():
        return list(latest_rows(read_all_rows(cell.cell_dir)).values())
    try:
        return from_table(pq.read_table(cell.predictions, schema=ROW_SCHEMA))
    except (pa.ArrowInvalid, OSError) as e:
        raise DataError(f"unreadable predictions ({e})", path=cell.predictions) from e
