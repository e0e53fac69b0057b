"""Log a folder of files (the explorer of `biorab explore`) on the MLflow parent run of a run or sweep,
found by its key (`biorab.tracking.experiment.parent_key`)."""

from __future__ import annotations

from pathlib import Path

from biorab.tracking.preflight import check_server, is_server
from biorab.tracking.runs import KEY, find_runs


def log_folder_on_parent(uri: str, experiment: str, key: str, folder: Path, artifact_path: str) -> str | None:
    """Log every file under `folder` as ``<artifact_path>/...`` on the parent run keyed `key`; returns its
    run id, or ``None`` when the store holds no such experiment or run (never tracked: nothing is created,
    not even a local store)."""
    if uri.startswith("sqlite:///") and not Path(uri[len("sqlite:///"):]).is_file():
        return None
    if is_server(uri):
        check_server(uri)
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return None
    runs = find_runs(client, str(found.experiment_id), KEY, key)
    if not runs:
        return None
    run_id = str(runs[0].info.run_id)
    client.log_artifacts(run_id, str(folder), artifact_path)
    return run_id
