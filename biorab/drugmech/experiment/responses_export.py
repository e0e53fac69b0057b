"""The responses JSONL of ``biorab drugmech respond``, written from the rows of a DrugMech run.

``respond`` runs its query file through `biorab run`'s machinery (cells, generation cache, resume), then
writes one line per (run, query) from the cells' consolidated rows, in the format ``biorab drugmech score``
reads: ``{"query_file", "index", "response", "world" | "mode", "run", "finish_reason"}``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biorab.drugmech.experiment.spec import drugmech_info
from biorab.ral.specs.cell_records import CellResult


def response_rows(cells: Sequence[CellResult]) -> list[dict[str, Any]]:
    """One responses-file row per instance of every DrugMech cell, in cell order then query order."""
    import pyarrow.parquet as pq

    out = []
    for cell in cells:
        info = drugmech_info(cell.plan)
        for row in pq.read_table(cell.predictions_path).to_pylist():
            # A failed call is an incomplete answer: `score` counts it wrong, separately.
            finish = "error" if row["gen_error"] is not None else row["gen_finish_reason"]
            out.append({"query_file": info.query_file, "index": int(row["order"]),
                        "response": row["gen_text"] or "", **info.response_keys(), "finish_reason": finish})
    return out


def backend_errors(cells: Sequence[CellResult]) -> list[str]:
    """``run R, row I: <error>`` for every failed generation (the responses file has no error field)."""
    import pyarrow.parquet as pq

    errors = []
    for cell in cells:
        for row in pq.read_table(cell.predictions_path, columns=["order", "gen_error"]).to_pylist():
            if row["gen_error"] is not None:
                errors.append(f"run {drugmech_info(cell.plan).run}, row {row['order']}: {row['gen_error']}")
    return errors


def write_responses(rows: Sequence[dict[str, Any]], out: Path) -> None:
    """Write `rows` atomically (a partial file never stands in for a finished one)."""
    partial = out.with_name(out.name + ".partial")
    with partial.open("w", encoding="utf-8") as sink:
        for row in rows:
            sink.write(json.dumps(row) + "\n")
    partial.replace(out)
