"""A cell's axes, the columns the explorer sorts, groups and chooses cells by: model, dataset slice,
testbed, rate, retriever, k, method and template.

``summary.json`` names a cell's dataset, testbed and retriever only; the rest of its retrieval setting is
in the run's resolved ``config.yaml`` (written by `biorab run`), whose cells (`ExperimentConfig.cells`)
carry the same ids. A run without a readable config, or a cell it does not list, keeps the axes
``summary.json`` gives and shows the others as unknown (``None``), never guessed from the cell's name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biorab.common.errors import BioRABError

AXES = ("model", "slice", "testbed", "rate", "retriever", "k", "method", "template")
CONFIG = "config.yaml"  # the run's resolved config (biorab.runner.run)


def run_axes(run_dir: Path, *, sweep: bool) -> tuple[str, dict[str, dict[str, Any]]]:
    """The run's model (its folder name in a sweep, where each run is one model; else the backend's model)
    and per cell id the axes its config gives (empty when the config is missing or unreadable)."""
    from biorab.common.config_loading import load_config
    from biorab.experiment import ExperimentConfig

    try:
        config = load_config(ExperimentConfig, run_dir / CONFIG)
    except (BioRABError, OSError, ValueError):
        return run_dir.name, {}
    model = run_dir.name if sweep else str(config.backend.params.get("model") or config.backend.name)
    out: dict[str, dict[str, Any]] = {}
    for cell in config.cells():
        r, d = cell.retrieval, cell.dataset
        out[cell.cell_id] = {
            "slice": f"{d.name}-{d.split}" + (f"-{d.resample.tag}" if d.resample is not None else ""),
            "testbed": r.testbed,
            "rate": None if r.rate is None else f"{r.rate:g}",
            "retriever": r.retriever if r.retrieves else None, "k": str(r.k) if r.retrieves else None,
            "method": r.method, "template": r.template,
        }
    return model, out


def cell_axes(model: str, configured: dict[str, Any] | None, summary: dict[str, Any]) -> dict[str, Any]:
    """The axes of one cell: its config's when known, else what its ``summary.json`` entry says."""
    if configured is not None:
        return {"model": model, **configured}
    slice_name = "-".join(p for p in (summary.get("dataset"), summary.get("split")) if p)
    return {"model": model, "slice": slice_name, "testbed": summary.get("testbed") or "none", "rate": None,
            "retriever": summary.get("retriever"), "k": None, "method": None, "template": None}
