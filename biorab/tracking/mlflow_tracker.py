"""Log one MLflow run per cell: config params, metrics with CI bounds, artifacts and tags.

The default store is ``sqlite:///<run dir>/mlflow.db`` with artifacts under ``<run dir>/mlartifacts``; a
tracking server is one config line (``tracking.uri: http://host:5000``).

A cell has one active MLflow run: a rerun whose numbers are unchanged logs nothing, one with new numbers
(more rows, a recomputed row) deletes the cell's old run and logs a new one, so resumed and repeated runs
never pile up duplicates. An incomplete cell (failed rows) logs its counts and the tag ``incomplete``, never
its metric values: they are not scores.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml

from biorab.cells import CellResult
from biorab.experiment import ExperimentConfig
from biorab.tracking.flatten import mlflow_params
from biorab.tracking.sqlite_store import TrackingStoreError, ensure_sqlite_store, fix_hint, sqlite_path


def default_tracking_uri(run_dir: Path) -> str:
    return f"sqlite:///{run_dir.resolve() / 'mlflow.db'}"


def cell_metrics(result: CellResult) -> dict[str, float]:
    """``{"f1": .., "f1_ci_low": .., "f1_ci_high": .., "n": .., "parse_failures": ..}``."""
    out: dict[str, float] = {"n": float(result.n), "parse_failures": float(result.parse_failures),
                             "generation_failures": float(result.generation_failures)}
    if "n_incomplete" in result.extra:  # DrugMech cells: answers cut off or failed (counted as wrong)
        out["n_incomplete"] = float(result.extra["n_incomplete"])
    if result.incomplete:  # metrics over a partial cell are not measurements: keep them out of MLflow
        return out
    for name, value in result.metrics.items():
        key = name.replace("@", "_at_")
        # An undefined value or bound (None) is left out: MLflow metrics are numbers.
        for suffix, field in (("", "value"), ("_ci_low", "ci_low"), ("_ci_high", "ci_high")):
            number = value[field]
            if number is not None:
                out[key + suffix] = float(number)
    return out


def cell_tags(config: ExperimentConfig, result: CellResult) -> dict[str, str]:
    plan = result.plan
    if result.tags is not None:  # the experiment source says what the cell is (e.g. a DrugMech query file)
        return {**result.tags, "task": plan.task, "backend": config.backend.name, "cell_id": plan.cell_id,
                "biorab.run_name": config.name}
    rate = plan.retrieval.rate
    return {
        "dataset": plan.dataset,
        "split": plan.split,
        "task": plan.task,
        "retriever": plan.retrieval.retriever if plan.retrieves else "none",
        "corpus": plan.retrieval.testbed + (f"@{rate:g}" if rate is not None else ""),
        "backend": config.backend.name,
        "cell_id": plan.cell_id,
        "biorab.run_name": config.name,
    }


def artifact_root(uri: str, run_dir: Path) -> str | None:
    """Where a new experiment keeps its artifacts: ``<run dir>/mlartifacts`` for a local store; for a
    tracking server (``http(s)://``, ``databricks``) ``None``, i.e. the server's own artifact store, so that
    artifacts do not end up on the disk of whichever node ran the driver.

    >>> artifact_root("http://mlflow.internal:5000", Path("/r"))
    >>> artifact_root("sqlite:////r/mlflow.db", Path("/r"))
    'file:///r/mlartifacts'
    """
    if uri.split(":", 1)[0].lower() in ("http", "https", "databricks"):
        return None
    return (run_dir.resolve() / "mlartifacts").as_uri()


def _experiment_id(client: Any, name: str, artifact_location: str | None) -> str:
    found = client.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    return str(client.create_experiment(name, artifact_location=artifact_location))


def track_run(
    config: ExperimentConfig, results: list[CellResult], *, run_dir: Path, report_path: Path
) -> str:
    """Log every cell as one MLflow run; returns the tracking URI (for ``mlflow ui --backend-store-uri``).

    Raises:
        TrackingStoreError: the store cannot be created, opened or written (the message names the file
            and the fix). Called after the results are written, so they never depend on the store.
    """
    from mlflow.exceptions import MlflowException
    from sqlalchemy.exc import SQLAlchemyError

    uri = config.tracking.uri or default_tracking_uri(run_dir)
    where = sqlite_path(uri) or uri
    try:
        ensure_sqlite_store(uri, artifact_root(uri, run_dir))
        _log_cells(config, results, uri, run_dir, report_path)
    except (MlflowException, SQLAlchemyError, OSError) as e:
        fix = fix_hint(where) if isinstance(where, Path) else "check the tracking server, then run again"
        raise TrackingStoreError(f"{where}: cannot record the run in MLflow ({_first_line(e)}); the results "
                                 f"are written under {run_dir} (summary.json, report.md); {fix}") from e
    return uri


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:300] if text else type(e).__name__


def _log_cells(
    config: ExperimentConfig, results: list[CellResult], uri: str, run_dir: Path, report_path: Path
) -> None:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    name = config.tracking.experiment or config.name
    experiment = _experiment_id(client, name, artifact_root(uri, run_dir))
    params = mlflow_params(config.model_dump(mode="json"))
    resolved = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
    for result in results:
        metrics, tags = cell_metrics(result), cell_tags(config, result)
        if result.incomplete:
            tags["incomplete"] = "true"
        if _already_logged(client, experiment, result.plan.cell_id, metrics, params, tags):
            continue
        run = client.create_run(experiment, tags=tags, run_name=result.plan.label)
        run_id = run.info.run_id
        _log_batched(client, run_id, params, metrics)
        client.log_artifact(run_id, str(result.predictions_path), "predictions")
        client.log_artifact(run_id, str(report_path))
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "config.yaml").write_text(resolved, encoding="utf-8")
            client.log_artifact(run_id, str(Path(tmp) / "config.yaml"))
        client.set_terminated(run_id, "FINISHED")


def _already_logged(
    client: Any, experiment: str, cell_id: str, metrics: dict[str, float], params: dict[str, str],
    tags: dict[str, str],
) -> bool:
    """True when the cell's one finished run already holds these numbers; otherwise delete the cell's old
    runs (stale numbers, or a run a kill left unfinished) so that the new one is the only one."""
    found = client.search_runs([experiment], filter_string=f"tags.cell_id = '{cell_id}'")
    same = [r for r in found if r.info.status == "FINISHED" and r.data.metrics == metrics
            and r.data.params == params and r.data.tags.get("incomplete") == tags.get("incomplete")]
    if len(found) == 1 and same:
        return True
    for run in found:
        client.delete_run(run.info.run_id)
    return False


def _log_batched(client: Any, run_id: str, params: dict[str, str], metrics: dict[str, float]) -> None:
    import time

    from mlflow.entities import Metric, Param

    now = int(time.time() * 1000)
    items = [Param(k, v) for k, v in params.items()]
    for start in range(0, len(items), 100):  # MLflow caps a batch at 100 params
        client.log_batch(run_id, params=items[start : start + 100])
    client.log_batch(run_id, metrics=[Metric(k, v, now, 0) for k, v in metrics.items()])
