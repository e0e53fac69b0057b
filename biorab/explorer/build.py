"""`write_explorer`: a run's or a sweep's rows as the explorer's static files.

Layout of ``<folder>/explorer/``::

    index.html, explorer.js, explorer.css   the page (copied from this package's assets)
    data/manifest.js                        the cells, the datasets, the chunk counts
    data/index-00000.js ...                 per instance its list entry, per row (instance, cell, code)
    data/detail-00000.js ...                per instance its text and gold, per cell its row in full

Every data file is a script that hands its payload to ``BIORAB_EXPLORER`` (browsers run local scripts
but refuse ``fetch()`` of local files). The index chunks are all loaded when the page opens (the filters
count every row); a detail chunk only when one of its instances is opened. Instances are read one dataset
slice at a time (an instance's cells all share its dataset and split), so the builder holds one slice's
rows, never the sweep's.
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from biorab.explorer.attribution_file import read_attribution
from biorab.explorer.axes import AXES
from biorab.explorer.entries import row_code, row_detail
from biorab.explorer.sources import ExplorerCell, cell_rows, read_cells, run_dirs
from biorab.tasks import AWARENESS_LABELS

ASSETS = ("index.html", "explorer.js", "explorer-stats.js", "explorer.css")
DETAIL_BYTES = 1_500_000  # a detail chunk's target size: one opened instance loads about this much
INDEX_ROWS = 25_000  # rows per index chunk
SNIPPET = 160  # characters of an instance's text in the list


@dataclass(frozen=True)
class ExplorerBuild:
    index_html: Path
    cells: int
    rows: int
    instances: int
    attributed_cells: int
    index_chunks: int
    detail_chunks: int
    skipped_cells: int  # cells without dataset instances (DrugMech), not shown
    seconds: float


@dataclass
class _Chunks:
    """The chunk files being written: the open index and detail chunks, flushed at their sizes."""

    data: Path
    detail_bytes: int
    index_rows: int
    index_no: int = 0
    detail_no: int = 0
    instances: list[list[Any]] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    first_instance: int = 0
    details: list[str] = field(default_factory=list)
    details_size: int = 0

    def add(self, number: int, entry: list[Any], codes: list[tuple[int, int]], detail: str) -> None:
        if self.details and self.details_size + len(detail) > self.detail_bytes:
            self.flush_detail()
        if self.instances and len(self.rows) // 3 + len(codes) > self.index_rows:
            self.flush_index(number)
        self.instances.append([*entry, self.detail_no])
        for cell, code in codes:
            self.rows += [number, cell, code]
        self.details.append(detail)
        self.details_size += len(detail)

    def flush_index(self, next_instance: int) -> None:
        payload = {"first": self.first_instance, "instances": self.instances, "rows": self.rows}
        _write_js(self.data / f"index-{self.index_no:05d}.js", f"index({self.index_no}, ", payload)
        self.index_no += 1
        self.instances, self.rows, self.first_instance = [], [], next_instance

    def flush_detail(self) -> None:
        text = f"BIORAB_EXPLORER.detail({self.detail_no}, [{','.join(self.details)}]);\n"
        (self.data / f"detail-{self.detail_no:05d}.js").write_text(text, encoding="utf-8")
        self.detail_no += 1
        self.details, self.details_size = [], 0

    def close(self, next_instance: int) -> None:
        if self.instances:
            self.flush_index(next_instance)
        if self.details:
            self.flush_detail()


def write_explorer(folder: Path, *, out: Path | None = None, detail_bytes: int = DETAIL_BYTES,
                   index_rows: int = INDEX_ROWS) -> ExplorerBuild:
    """Build the explorer of the run or sweep in `folder` into `out` (default ``<folder>/explorer``),
    replacing an older one only once the new one is complete."""
    started = time.perf_counter()
    folder = folder.expanduser().resolve()
    out = (out or folder / "explorer").expanduser().resolve()
    cells: list[ExplorerCell] = []
    skipped = 0
    runs = run_dirs(folder)
    for run in runs:
        found, other = read_cells(run, sweep=runs != [folder])
        cells += found
        skipped += other
    tmp = out.with_name(f".{out.name}-tmp-{uuid.uuid4().hex[:8]}")
    try:
        build = _write(folder, cells, tmp, detail_bytes=detail_bytes, index_rows=index_rows)
        _replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ExplorerBuild(index_html=out / "index.html", skipped_cells=skipped,
                         seconds=time.perf_counter() - started, **build)


def _write(folder: Path, cells: list[ExplorerCell], root: Path, *, detail_bytes: int,
           index_rows: int) -> dict[str, int]:
    data = root / "data"
    data.mkdir(parents=True)
    for name in ASSETS:
        (root / name).write_bytes(resources.files("biorab.explorer").joinpath("assets", name).read_bytes())
    datasets = sorted({c.dataset for c in cells})
    chunks = _Chunks(data, detail_bytes, index_rows)
    attributed: dict[int, bool] = {}
    twins: dict[int, str | None] = {}
    number = rows = 0
    for group in _slices(cells):
        by_instance: dict[str, dict[str, Any]] = {}
        for index, cell in group:
            attribution = read_attribution(cell.cell_dir)
            attributed[index] = attribution is not None
            twins[index] = next((a["twin_cell_id"] for a in (attribution or {}).values()
                                 if a["twin_cell_id"]), None)
            for row in cell_rows(cell):
                entry = by_instance.setdefault(row["id"], {"row": row, "order": row["order"], "cells": []})
                entry["order"] = min(entry["order"], row["order"])
                entry["cells"].append((index, row, (attribution or {}).get(row["id"])))
        for entry in sorted(by_instance.values(), key=lambda e: (e["order"], e["row"]["id"])):
            first = entry["row"]
            codes = [(i, row_code(r, a)) for i, r, a in entry["cells"]]
            detail = {"instance": number, "id": first["id"], "dataset": first["dataset"],
                      "split": first["split"], "task": first["task"], "text": first["text"],
                      "gold": first["label"], "rows": [row_detail(i, r, a) for i, r, a in entry["cells"]]}
            listed = [datasets.index(first["dataset"]), first["id"], (first["text"] or "")[:SNIPPET]]
            chunks.add(number, listed, codes, json.dumps(detail))
            number += 1
            rows += len(codes)
    chunks.close(number)
    manifest = _manifest(folder, cells, datasets, attributed, twins, chunks, rows, number)
    _write_js(data / "manifest.js", "manifest(", manifest)
    return {"cells": len(cells), "rows": rows, "instances": number,
            "attributed_cells": sum(attributed.values()), "index_chunks": chunks.index_no,
            "detail_chunks": chunks.detail_no}


def _slices(cells: list[ExplorerCell]) -> Iterator[list[tuple[int, ExplorerCell]]]:
    """The cells grouped by dataset slice (dataset, split), in dataset order; each keeps its index."""
    groups: dict[tuple[str, str], list[tuple[int, ExplorerCell]]] = defaultdict(list)
    for i, cell in enumerate(cells):
        groups[(cell.dataset, cell.split)].append((i, cell))
    for key in sorted(groups):
        yield groups[key]


def _manifest(folder: Path, cells: list[ExplorerCell], datasets: list[str], attributed: dict[int, bool],
              twins: dict[int, str | None], chunks: _Chunks, rows: int, instances: int) -> dict[str, Any]:
    index_of = {(c.run, c.cell_id): i for i, c in enumerate(cells)}
    described = []
    for i, cell in enumerate(cells):
        twin = twins.get(i)
        described.append({**cell.to_json(), "attributed": attributed.get(i, False),
                          "twin": index_of.get((cell.run, twin)) if twin else None})
    return {"source": str(folder), "built": time.strftime("%Y-%m-%d %H:%M:%S"), "cells": described,
            "runs": sorted({c.run for c in cells}), "datasets": datasets, "rows": rows,
            "instances": instances, "index_chunks": chunks.index_no, "detail_chunks": chunks.detail_no,
            "probe_labels": list(AWARENESS_LABELS), "axes": list(AXES)}


def _write_js(path: Path, call: str, payload: Any) -> None:
    # ASCII-only JSON is a valid JavaScript literal (no raw U+2028/U+2029 line separators in strings)
    path.write_text(f"BIORAB_EXPLORER.{call}{json.dumps(payload)});\n", encoding="utf-8")


def _replace(tmp: Path, out: Path) -> None:
    """Swap the new explorer in: the old one is moved aside first, then removed."""
    old = out.with_name(f".{out.name}-old-{uuid.uuid4().hex[:8]}")
    if out.exists():
        out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)
