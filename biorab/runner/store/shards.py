"""Append-only Parquet output: one file per (cell, shard), written atomically.

A shard file is named after the run attempt and a digest of the instance ids it holds, and is written to a
temporary name then renamed: a kill leaves either the whole file or none, and a retried Ray task rewrites
the same file instead of adding a duplicate. Reading takes, per instance, its successful row (a failed
generation's row is kept as history and superseded by the retry's row).
"""

from __future__ import annotations

import errno
import os
import re
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from biorab.common.errors import DataError
from biorab.generation.base import stable_digest
from biorab.ral.specs.rows import ROW_SCHEMA, from_table, row_error, stamp, to_table

SHARD_GLOB = "part-*.parquet"


def write_shards(rows: Sequence[dict[str, Any]], cells_dir: Path, attempt: str) -> list[Path]:
    """Write `rows` as one shard file per cell under ``cells_dir/<cell_id>/``; returns the files."""
    by_cell: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_cell[row["cell_id"]].append(row)
    return [_write_one(cells_dir / cell_id, cell_rows, attempt) for cell_id, cell_rows in by_cell.items()]


def write_rows(rows: list[dict[str, Any]], cells_dir: Path, attempt: str) -> list[Path]:
    """Stamp finished rows with `attempt` and the time, then `write_shards` them: what every executor
    does with a finished batch."""
    stamp(rows, attempt)
    return write_shards(rows, cells_dir, attempt)


def _write_one(cell_dir: Path, rows: list[dict[str, Any]], attempt: str) -> Path:
    cell_dir.mkdir(parents=True, exist_ok=True)
    digest = stable_digest(sorted(r["id"] for r in rows))[:16]
    final = cell_dir / f"part-{attempt}-{digest}.parquet"
    tmp = cell_dir / f".tmp-{uuid.uuid4().hex}.parquet"
    try:
        pq.write_table(to_table(rows), tmp)
        with open(tmp, "rb") as f:  # make the bytes durable before the rename publishes them
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except OSError as e:
        tmp.unlink(missing_ok=True)  # give back the space of a half-written shard
        raise with_filename(e, final) from e
    return final


def with_filename(e: OSError, path: Path) -> OSError:
    """`e` with the file it concerns (Arrow's write errors name none, and carry the errno in the text).

    >>> str(with_filename(OSError("Error writing bytes. Detail: [errno 28] No space left"), Path("/r/x")))
    "[Errno 28] No space left on device: '/r/x'"
    """
    if e.filename is not None:
        return e
    found = re.search(r"\[errno (\d+)\]", str(e), re.IGNORECASE)
    code = e.errno or (int(found.group(1)) if found else None)
    if code is None:
        return OSError(errno.EIO, str(e), str(path))
    return OSError(code, os.strerror(code), str(path))


def shard_files(cell_dir: Path) -> list[Path]:
    return sorted(cell_dir.glob(SHARD_GLOB)) if cell_dir.is_dir() else []


def read_all_rows(cell_dir: Path) -> list[dict[str, Any]]:
    """Every row of every shard of a cell (history included), in file order."""
    table = read_all_table(cell_dir)
    return from_table(table) if table.num_rows else []


def read_all_table(cell_dir: Path) -> pa.Table:
    """`read_all_rows` as one Arrow table of `ROW_SCHEMA` (empty without shards): a caller that needs a few
    columns as Python objects converts only those."""
    tables = []
    for path in shard_files(cell_dir):
        try:
            tables.append(pq.read_table(path, schema=ROW_SCHEMA))
        except (pa.ArrowInvalid, OSError) as e:
            raise DataError(f"unreadable shard ({e}); delete it to recompute its rows", path=path) from e
    return pa.concat_tables(tables) if tables else ROW_SCHEMA.empty_table()


def latest_rows(
    rows: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], str] = lambda r: r["id"]
) -> dict[str, dict[str, Any]]:
    """One row per instance (`key`: its id, or its content key): a successful row beats a failed one;
    among equals the latest written."""
    best: dict[str, dict[str, Any]] = {}
    for row in rows:
        k = key(row)
        old = best.get(k)
        if old is None or _rank(row) >= _rank(old):
            best[k] = row
    return best


def _rank(row: dict[str, Any]) -> tuple[bool, float]:
    return (row_error(row) is None, row["written_at"] or 0.0)


def done_keys(cell_dir: Path, key: Callable[[dict[str, Any]], str]) -> set[str]:
    """Keys (see `biorab.runner.store.instance_key`) of the instances with a successful row in the cell."""
    return {key(r) for r in read_all_rows(cell_dir) if row_error(r) is None}


def done_ids(cell_dir: Path) -> set[str]:
    """Ids of the instances that already have a successful row in the cell."""
    return {r["id"] for r in read_all_rows(cell_dir) if row_error(r) is None}


def clean_temporaries(cell_dir: Path) -> None:
    """Remove the temp files a killed writer left behind (they were never published)."""
    for tmp in cell_dir.glob(".tmp-*.parquet") if cell_dir.is_dir() else []:
        tmp.unlink(missing_ok=True)
