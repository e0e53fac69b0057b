"""Tracking of one `biorab run`: a parent run for the run, one child per cell (`biorab.tracking.session`)."""

from __future__ import annotations

from pathlib import Path

from biorab.experiment import ExperimentConfig
from biorab.generation.base import stable_digest
from biorab.ral.specs.cell_records import CellPlan, CellResult
from biorab.tracking.cell_runs import (
    cell_entry,
    cell_key,
    cell_metrics,
    ci_tags,
    predictions_table,
    write_ledger,
)
from biorab.tracking.flatten import mlflow_params
from biorab.tracking.live import CellRowsFn, LiveTracking, provenance_tags
from biorab.tracking.mlflow_tracker import artifact_root
from biorab.tracking.preflight import resolve_uri
from biorab.tracking.traces import sample_rows, with_attribution


def parent_key(kind: str, name: str, out_dir: Path) -> str:
    """Stable for reruns of the same run (or sweep) into the same output directory."""
    return f"{kind}:{name}:{stable_digest(str(out_dir.resolve()))[:10]}"


def model_digest(config: ExperimentConfig) -> str:
    """The generation-cache digest of the run's model, computed without loading it."""
    from biorab.common.errors import BioRABError
    from biorab.generation.model_info import model_info

    try:
        return model_info(config.backend).digest
    except BioRABError:
        return ""


def start_run_tracking(config: ExperimentConfig, run_dir: Path) -> LiveTracking:
    """Open the run's parent (the whole config as params); children open as their cells start
    (`watch_run_cells`)."""
    uri = resolve_uri(config.tracking.uri, run_dir)
    key = parent_key("run", config.name, run_dir)
    tracking = LiveTracking.start(
        results_dir=run_dir, uri=uri, experiment=config.tracking.experiment or config.name,
        artifact_location=artifact_root(uri, run_dir), parent_key=key, parent_name=config.name,
        params=mlflow_params(config.model_dump(mode="json")),
        tags={"biorab.kind": "run", **provenance_tags()})
    return tracking


def watch_run_cells(tracking: LiveTracking, config: ExperimentConfig, run_dir: Path,
                    plans: list[CellPlan]) -> CellRowsFn:
    """The children of a `biorab run`'s cells, opened as the executor reports each cell's first rows."""
    key = parent_key("run", config.name, run_dir)
    digest = model_digest(config)
    return tracking.watch_cells({p.cell_id: cell_entry(config, p, key, model_digest=digest) for p in plans})


def log_results(tracking: LiveTracking, key: str, config: ExperimentConfig, results: list[CellResult],
                run_dir: Path) -> None:
    """Each scored cell: metrics, CI tags, predictions (Parquet + UI table), ledger, the run's config."""
    for result in results:
        ledger = write_ledger(config, result.plan, run_dir)
        artifacts: list[tuple[Path, str | None]] = [(result.predictions_path, "predictions")]
        if ledger is not None:
            artifacts.append((ledger, "ledger"))
        if (run_dir / "config.yaml").is_file():
            artifacts.append((run_dir / "config.yaml", None))
        tracking.finish_cell(cell_key(key, result.plan), cell_metrics(result), ci_tags(result), artifacts,
                             predictions_table(result.predictions_path),
                             with_attribution(sample_rows(result.predictions_path, config.tracking.traces),
                                              run_dir / "cells" / result.plan.cell_id))


#: What a cell's MLflow child run shows: its metrics (`cell_metrics`) and CI tags (`ci_tags`).
Logged = tuple[dict[str, float], dict[str, str]]


def logged(result: CellResult) -> Logged:
    """The metrics and tags `log_results` logs for `result` (a snapshot to compare with later)."""
    return cell_metrics(result), ci_tags(result)


def log_twin_metrics(tracking: LiveTracking, key: str, results: list[CellResult],
                     before: dict[int, Logged]) -> None:
    """Log on each cell's existing child run what changed since `before` (by ``id(result)``: what was logged
    when its run finished): the rates against a twin found in another run of the sweep (flips, excesses,
    order and framing flip rates) and their CI tags (`biorab.sweep.twins`)."""
    for result in results:
        old_metrics, old_tags = before.get(id(result), ({}, {}))
        metrics, tags = logged(result)
        tracking.add_to_cell(cell_key(key, result.plan),
                             {k: v for k, v in metrics.items() if old_metrics.get(k) != v},
                             {k: v for k, v in tags.items() if old_tags.get(k) != v})


def finish_run_tracking(tracking: LiveTracking, config: ExperimentConfig, results: list[CellResult],
                        run_dir: Path, report: Path) -> str:
    log_results(tracking, parent_key("run", config.name, run_dir), config, results, run_dir)
    from biorab.tracking.ui_link import headline_metrics, runs_view

    files = [run_dir / "config.yaml", report, run_dir / "summary.json"]
    return tracking.finish([(f, None) for f in files if f.is_file()],
                           view=runs_view(headline_metrics(results)))
