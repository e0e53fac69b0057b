"""A finished run's predictions and metrics, as read back from summary.json."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq


def outputs(run_dir: Path) -> tuple[dict[str, list[tuple[str, str]]], list[dict[str, object]]]:
    summary = json.loads((run_dir / "summary.json").read_text())
    preds = {}
    for cell in summary["cells"]:
        rows = pq.read_table(cell["predictions"]).to_pylist()
        preds[cell["cell"]] = [(r["id"], r["pred_label"]) for r in rows]
    return preds, [c["metrics"] for c in summary["cells"]]
