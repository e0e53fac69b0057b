"""Compare two runs of the same job for identical behaviour: rows (except their timestamps), cell ids,
cell metrics and execution counts (`summary.json`), and the keys (and values) of the hit and generation
caches they wrote.

Each side is a run folder (``<output_dir>/<name>``) and the cache root (``$BIORAB_CACHE_DIR``) it used, so
both runs must have started from empty caches of their own:

    python scripts/compare_runs.py --before RUN_A CACHE_A --after RUN_B CACHE_B

Prints one line per check and exits 1 on any difference (issue 34: "behaviour unchanged" of a refactor).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

#: Columns that differ between two runs of the same rows by design: the attempt id and the write time.
STAMPS = ("attempt", "written_at")


def cell_ids(run: Path) -> list[str]:
    return sorted(p.name for p in (run / "cells").iterdir() if p.is_dir())


def rows(run: Path) -> list[dict[str, Any]]:
    """Every row of every shard, without `STAMPS`, sorted by cell, id and order."""
    out = []
    for shard in sorted((run / "cells").glob("*/part-*.parquet")):
        for row in pq.read_table(shard).to_pylist():
            out.append({k: v for k, v in row.items() if k not in STAMPS})
    return sorted(out, key=lambda r: (r["cell_id"], str(r["id"]), r.get("order") or 0))


def summary(run: Path) -> dict[str, Any]:
    """`summary.json`'s cells, execution counts and completeness, with the run folder's own path (in the
    predictions' file names) made relative."""
    text = (run / "summary.json").read_text(encoding="utf-8").replace(str(run.resolve()), "<run>")
    data = json.loads(text)
    return {"cells": data["cells"], "execution": data["execution"], "complete": data["complete"]}


def store(path: Path) -> dict[str, str]:
    """key → value of a content store (`biorab.caches.ContentStore`: one ``kv`` table)."""
    if not path.exists():
        return {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return dict(conn.execute("SELECT key, value FROM kv").fetchall())


def compare(before: tuple[Path, Path], after: tuple[Path, Path]) -> list[str]:
    """One line per check, ``same`` or what differs."""
    lines = []

    def check(what: str, a: Any, b: Any, n: int | None = None) -> None:
        count = f" ({n})" if n is not None else ""
        lines.append(f"{'same' if a == b else 'DIFFERENT'}: {what}{count}")

    (run_a, cache_a), (run_b, cache_b) = before, after
    check("cell ids", cell_ids(run_a), cell_ids(run_b), len(cell_ids(run_a)))
    rows_a, rows_b = rows(run_a), rows(run_b)
    check("rows except attempt/written_at", rows_a, rows_b, len(rows_a))
    if rows_a != rows_b:
        for ra, rb in zip(rows_a, rows_b, strict=False):
            diff = sorted(k for k in ra.keys() | rb.keys() if ra.get(k) != rb.get(k))
            if diff:
                lines.append(f"  first differing row {ra['cell_id']}/{ra['id']}: {diff}")
                break
    check("summary.json cells, execution counts", summary(run_a), summary(run_b))
    for name in ("hits.sqlite", "generations.sqlite"):
        a, b = store(cache_a / "runner" / name), store(cache_b / "runner" / name)
        check(f"cache keys {name}", sorted(a), sorted(b), len(a))
        check(f"cache values {name}", a, b)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", nargs=2, type=Path, metavar=("RUN", "CACHE"), required=True)
    parser.add_argument("--after", nargs=2, type=Path, metavar=("RUN", "CACHE"), required=True)
    args = parser.parse_args(argv)
    lines = compare(tuple(args.before), tuple(args.after))
    print("\n".join(lines))
    return 1 if any(line.startswith("DIFFERENT") for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main())
