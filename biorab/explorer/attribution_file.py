"""Read a cell's evidence attribution (``<cell dir>/attribution.parquet``, one row per instance id),
written beside the row shards by the run. A cell without the file has no attribution: the explorer then
shows blank attribution columns and disables the filters that need them.

The file, its schema and its reading are the attribution's (`biorab.attribution.cell_attribution`:
`ATTRIBUTION_FILE`, `ATTRIBUTION_SCHEMA`, `attribution_table`); here only which columns the explorer shows,
checked against that schema, and the JSON columns decoded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from biorab.attribution.cell_attribution import ATTRIBUTION_FILE, ATTRIBUTION_SCHEMA, attribution_table
from biorab.attribution.twin import HELPED, HURT, UNCHANGED
from biorab.common.errors import DataError

#: The columns the explorer reads (the file holds more), with their Arrow types from the writer's schema.
COLUMNS: dict[str, pa.DataType] = {
    name: ATTRIBUTION_SCHEMA.field(name).type
    for name in ("id", "correct", "parse_failed", "has_corrupted", "followed_corruption", "copied_evidence",
                 "copied_corrupted", "leaked_evidence", "flip", "twin_cell_id", "error_types", "hit_tags")
}
FLIPS = (HELPED, HURT, UNCHANGED)
__all__ = ["ATTRIBUTION_FILE", "COLUMNS", "FLIPS", "read_attribution"]


def read_attribution(cell_dir: Path) -> dict[str, dict[str, Any]] | None:
    """Attribution by instance id, with `error_types` and `hit_tags` decoded; ``None`` when the cell has
    no attribution file. A malformed file fails naming the file, the column or the row."""
    table = attribution_table(cell_dir)
    if table is None:
        return None
    path = cell_dir / ATTRIBUTION_FILE
    for name, kind in COLUMNS.items():
        if name not in table.column_names:
            raise DataError("missing column", path=path, field=name)
        if not table.schema.field(name).type.equals(kind) and table.column(name).null_count < len(table):
            raise DataError(f"column has type {table.schema.field(name).type}, expected {kind}", path=path,
                            field=name)
    out: dict[str, dict[str, Any]] = {}
    for line, row in enumerate(table.select(list(COLUMNS)).to_pylist(), start=1):
        if row["flip"] is not None and row["flip"] not in FLIPS:
            raise DataError(f"flip {row['flip']!r} is none of {', '.join(FLIPS)}", path=path, line=line,
                            field="flip")
        for name in ("error_types", "hit_tags"):
            try:
                row[name] = json.loads(row[name]) if row[name] else None
            except ValueError as e:
                raise DataError(f"not JSON ({e})", path=path, line=line, field=name) from e
        out[row["id"]] = row
    return out
