"""Read a cell's evidence attribution (``<cell dir>/attribution.parquet``, one row per instance id),
written beside the row shards by the run. A cell without the file has no attribution: the explorer then
shows blank attribution columns and disables the filters that need them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from biorab.common.errors import DataError

ATTRIBUTION_FILE = "attribution.parquet"
# The columns the explorer reads, with their Arrow types (the file may hold more).
COLUMNS: dict[str, pa.DataType] = {
    "id": pa.string(), "correct": pa.bool_(), "parse_failed": pa.bool_(), "has_corrupted": pa.bool_(),
    "followed_corruption": pa.bool_(), "copied_evidence": pa.bool_(), "copied_corrupted": pa.bool_(),
    "leaked_evidence": pa.bool_(), "flip": pa.string(), "twin_cell_id": pa.string(),
    "error_types": pa.string(), "hit_tags": pa.string(),
}
FLIPS = ("helped", "hurt", "unchanged")


def read_attribution(cell_dir: Path) -> dict[str, dict[str, Any]] | None:
    """Attribution by instance id, with `error_types` and `hit_tags` decoded; ``None`` when the cell has
    no attribution file. A malformed file fails naming the file, the column or the row."""
    path = cell_dir / ATTRIBUTION_FILE
    if not path.is_file():
        return None
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as e:
        raise DataError(f"unreadable attribution ({e})", path=path) from e
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
