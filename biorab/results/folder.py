"""`open_results`: a run's or a sweep's output folder as pandas DataFrames, for notebooks.

Every frame has the columns ``key`` (``<run>/<cell_id>``: a cell id repeats across a sweep's runs, one per
model), ``run`` and ``cell_id``; the per-instance frames add the instance ``id``, so any two of them join on
``["key", "id"]``. The folder is found and read as the explorer reads it (`biorab.explorer.sources`: a run
holds ``summary.json``, a sweep holds runs one level down; a cell's rows are its ``predictions/`` file,
else the latest row per instance of its shards), attribution from ``cells/<cell_id>/attribution.parquet``.
pandas is imported inside the methods, so importing `biorab` stays light.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biorab.common.errors import DataError
from biorab.explorer.compare import N_BOOT, SEED
from biorab.explorer.sources import SUMMARY, ExplorerCell, cell_rows, read_cells, run_dirs
from biorab.results.subset import SubsetComparison, compare_correct

if TYPE_CHECKING:
    import pandas as pd

#: The cell descriptors copied onto every per-instance frame (for filtering without a join).
DESCRIPTORS = ("key", "run", "cell_id", "cell", "dataset", "split", "task", "testbed", "retriever")


@dataclass(frozen=True)
class _Cell:
    view: ExplorerCell
    entry: dict[str, Any]  # the cell's summary.json entry

    @property
    def key(self) -> str:
        return f"{self.view.run}/{self.view.cell_id}"

    def descriptors(self) -> dict[str, Any]:
        v = self.view
        return {"key": self.key, "run": v.run, "cell_id": v.cell_id, "cell": v.label, "dataset": v.dataset,
                "split": v.split, "task": v.task, "testbed": v.testbed, "retriever": v.retriever}


class Results:
    """The runs under one folder (`open_results`)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.expanduser().resolve()
        self.runs = run_dirs(self.folder)
        self._entries = {run: _summary_cells(run) for run in self.runs}
        self._cells = [_Cell(view, self._entries[run][view.cell_id]) for run in self.runs
                       for view in read_cells(run)[0]]

    def cells(self) -> pd.DataFrame:
        """One row per cell of every run (DrugMech cells included): ``key``, ``run``, ``cell_id``, the
        scalar fields of its ``summary.json`` entry (``cell``, ``dataset``, ``task``, ``testbed``, ``n``,
        ``parse_failures``...), ``twin_cell_id`` (from its attribution) and, per metric, its value as
        ``<metric>`` and its CI as ``ci_low/<metric>``, ``ci_high/<metric>`` (MLflow's names)."""
        import pandas as pd

        records = []
        for run in self.runs:
            for cell_id, entry in self._entries[run].items():
                record: dict[str, Any] = {"key": f"{run.name}/{cell_id}", "run": run.name}
                record.update({k: v for k, v in entry.items() if not isinstance(v, dict | list)})
                record["twin_cell_id"] = (entry.get("attribution") or {}).get("twin_cell_id")
                for name, value in (entry.get("metrics") or {}).items():
                    record[name] = value.get("value")
                    record[f"ci_low/{name}"] = value.get("ci_low")
                    record[f"ci_high/{name}"] = value.get("ci_high")
                records.append(record)
        return pd.DataFrame.from_records(records)

    def rows(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """One row per (cell, instance) of every dataset cell: the cell descriptors (`DESCRIPTORS`) and the
        row's columns (`biorab.ral.specs.rows.ROW_SCHEMA`, or only `columns` of them), ``id`` among them."""
        import pandas as pd

        records = []
        for cell in self._cells:
            for row in cell_rows(cell.view):
                kept = row if columns is None else {c: row[c] for c in ("id", *columns) if c in row}
                records.append({**cell.descriptors(), **kept})
        return pd.DataFrame.from_records(records)

    def attribution(self) -> pd.DataFrame:
        """One row per (cell, instance) of every cell with an ``attribution.parquet``: the descriptors and
        its columns (docs/metrics.md, "Evidence attribution"), ``hit_tags`` and ``error_types`` decoded
        (a list of dicts, a dict or ``None``)."""
        import pandas as pd

        from biorab.explorer.attribution_file import read_attribution

        records = []
        for cell in self._cells:
            for row in (read_attribution(cell.view.cell_dir) or {}).values():
                records.append({**cell.descriptors(), **row})
        return pd.DataFrame.from_records(records)

    def samples(self) -> pd.DataFrame:
        """`rows` joined with `attribution` on ``key`` and ``id`` (a left join: a cell without attribution
        keeps its rows, with empty attribution columns): one frame, one row per (cell, instance), as
        Inspect's ``samples_df``."""
        rows, attribution = self.rows(), self.attribution()
        if attribution.empty:
            return rows
        extra = [c for c in attribution.columns if c not in rows.columns or c in ("key", "id")]
        return rows.merge(attribution[extra], on=["key", "id"], how="left", validate="one_to_one")

    def claims(self) -> pd.DataFrame:
        """The per-instance claim diagnostics (`biorab.diagnostics.claims.claim_scores`) of every
        retrieving cell of a task with shared items: the descriptors, ``id`` and one column per metric
        (``None`` where undefined). The self-knowledge split uses the twin named in the cell's attribution
        when that twin is in the same run (a twin a sweep found in another run is not looked up here: the
        split is then ``None``, while ``summary.json`` has it)."""
        import pandas as pd

        from biorab.diagnostics.cell_claims import answer_items, diagnosable, instance_claims
        from biorab.diagnostics.claims import claim_scores
        from biorab.explorer.attribution_file import read_attribution

        by_key = {c.key: c for c in self._cells}
        records = []
        for cell in self._cells:
            if not cell.view.retriever or not diagnosable(cell.view.task):  # retrieves nothing, or MedMCQA
                continue
            attribution = read_attribution(cell.view.cell_dir) or {}
            twin_id = next((a["twin_cell_id"] for a in attribution.values() if a["twin_cell_id"]), None)
            twin = by_key.get(f"{cell.view.run}/{twin_id}") if twin_id else None
            twin_items = None if twin is None else {r["id"]: answer_items(twin.view.task, r)
                                                     for r in cell_rows(twin.view)}
            for instance_id, claims in instance_claims(cell.view.task, cell_rows(cell.view), twin_items):
                records.append({**cell.descriptors(), "id": instance_id, **claim_scores(claims)})
        return pd.DataFrame.from_records(records)

    def compare(self, cell_a: str, cell_b: str, ids: Iterable[str] | None = None, *, n_boot: int = N_BOOT,
                seed: int = SEED) -> SubsetComparison:
        """Cell B against cell A (each a ``key``, ``<run>/<cell_id>``) on the instances both hold, or on
        those of `ids` both hold: n, accuracies, Δ accuracy with its paired bootstrap CI, McNemar's p.

        An instance is right in a cell when its attribution's ``correct`` is true (a parse failure is
        false there, an instance without gold null: both count as wrong, as in the attribution rates).
        The statistics are the explorer page's (`compare_correct`): with the defaults, the numbers the
        page shows for the same cells and subset."""
        correct = [self._correct(cell_a), self._correct(cell_b)]
        shared = correct[0].keys() & correct[1].keys()
        if ids is not None:
            shared &= set(ids)
        order = sorted(shared)
        return compare_correct([correct[0][i] for i in order], [correct[1][i] for i in order], n_boot=n_boot,
                               seed=seed)

    def _correct(self, key: str) -> dict[str, bool]:
        from biorab.explorer.attribution_file import read_attribution

        cell = next((c for c in self._cells if c.key == key), None)
        if cell is None:
            raise DataError(f"no cell {key!r} (a key is <run>/<cell_id>; keys: "
                            f"{', '.join(c.key for c in self._cells)})", path=self.folder)
        attribution = read_attribution(cell.view.cell_dir)
        if attribution is None:
            raise DataError(f"cell {key!r} has no attribution.parquet (score the run again)",
                            path=cell.view.cell_dir)
        return {i: a["correct"] is True for i, a in attribution.items()}


def open_results(path: str | Path) -> Results:
    """The run (a folder holding ``summary.json``) or sweep (runs one level down) at `path`.

    >>> open_results("/no/such/folder")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    biorab.common.errors.DataError: ...no such folder...
    """
    return Results(Path(path))


def _summary_cells(run: Path) -> dict[str, dict[str, Any]]:
    """The run's ``summary.json`` cells by cell id (`read_cells` has checked the dataset cells' fields)."""
    path = run / SUMMARY
    try:
        return {c["cell_id"]: c for c in json.loads(path.read_text(encoding="utf-8"))["cells"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise DataError(f"unreadable run summary ({e})", path=path) from e
