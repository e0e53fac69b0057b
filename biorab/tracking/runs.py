"""MLflow runs found again by a stable key: one parent per sweep (or `biorab run`), one child per cell; and
for the tune jobs (`training.tracking`) one parent per job, one child per trial, keyed by their own tags.

A rerun or resume of the same sweep opens the *same* runs (tag ``biorab.key``) instead of adding
duplicates. A run left RUNNING by a process that is gone (tags ``biorab.pid`` / ``biorab.host``) is
taken over; one whose process is still alive on this host is refused, so that two processes never write
into one run. Params are immutable in MLflow: a param already logged is not logged again, and a changed
value is recorded as a ``biorab.changed.<key>`` tag instead of failing the run.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

from biorab.common.errors import TrackingError

KEY = "biorab.key"
PARENT_KEY = "biorab.parent_key"
PID = "biorab.pid"
HOST = "biorab.host"
MLFLOW_PARENT = "mlflow.parentRunId"  # the UI nests children under their parent with this tag


def owner_tags() -> dict[str, str]:
    return {PID: str(os.getpid()), HOST: socket.gethostname()}


def owner_alive(tags: Mapping[str, str]) -> bool:
    """Whether the process recorded in a run's tags still runs (on another host: assumed gone, since a
    sweep's driver is one process and a restarted driver takes over its runs)."""
    if tags.get(HOST) != socket.gethostname():
        return False
    try:
        pid = int(tags.get(PID, "0"))
    except ValueError:
        return False
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def key_filter(tag: str, value: str) -> str:
    if "'" in value:
        raise TrackingError(f"a tracking key may not contain a quote: {value!r}")
    return f"tags.`{tag}` = '{value}'"


def find_runs(client: Any, experiment_id: str, tag: str, value: str) -> list[Any]:
    """Every run of the experiment whose `tag` equals `value`, oldest first."""
    found: list[Any] = []
    token = None
    while True:
        page = client.search_runs([experiment_id], filter_string=key_filter(tag, value), max_results=1000,
                                  order_by=["attributes.start_time ASC"], page_token=token)
        found += list(page)
        token = page.token
        if not token:
            return found


def open_experiment(client: Any, name: str, artifact_location: str | None,
                    tags: Mapping[str, str] | None = None) -> str:
    """The id of experiment `name`, created (artifacts at `artifact_location`) when missing; `tags` it lacks
    are set (a value chosen in the UI is kept)."""
    found = client.get_experiment_by_name(name)
    if found is None:
        return str(client.create_experiment(name, artifact_location=artifact_location, tags=dict(tags or {})))
    for tag, value in (tags or {}).items():
        if tag not in found.tags:
            client.set_experiment_tag(found.experiment_id, tag, value)
    return str(found.experiment_id)


def open_run(client: Any, experiment_id: str, key: str, *, name: str, tags: Mapping[str, str],
             existing: Any = None) -> str:
    """The run with tag ``biorab.key == key`` (`existing`, or searched), reopened as RUNNING by this process
    (its owner tags); a new one when there is none."""
    return open_tagged_run(client, experiment_id, KEY, key, name=name, tags={**tags, **owner_tags()},
                           existing=existing)


def open_tagged_run(client: Any, experiment_id: str, tag: str, value: str, *, name: str,
                    tags: Mapping[str, str], existing: Any = None) -> str:
    """The run whose `tag` is `value` (`existing`, or the oldest found), reopened as RUNNING with `tags` set;
    a new one named `name` when there is none. A RUNNING run whose owner tags name a live process on this
    host is refused (a run without owner tags never is)."""
    if existing is None:
        runs = find_runs(client, experiment_id, tag, value)
        existing = runs[0] if runs else None
    all_tags = {**tags, tag: value}
    if existing is None:
        return str(client.create_run(experiment_id, tags=all_tags, run_name=name).info.run_id)
    run_id = str(existing.info.run_id)
    if existing.info.status == "RUNNING" and owner_alive(existing.data.tags):
        raise TrackingError(f"MLflow run {run_id} ({name}) is being written by pid "
                            f"{existing.data.tags.get(PID)} on this host; wait for it or stop it first")
    client.update_run(run_id, status="RUNNING")
    for k, v in all_tags.items():
        if existing.data.tags.get(k) != v:
            client.set_tag(run_id, k, v)
    return run_id


def log_params_once(client: Any, run: Any, run_id: str, params: Mapping[str, str]) -> None:
    """Log `params` not yet on `run` (a `mlflow.entities.Run` or ``None`` for a new run); changed values
    become ``biorab.changed.<key>`` tags (MLflow refuses to change a param)."""
    from mlflow.entities import Param, RunTag

    have: Mapping[str, str] = run.data.params if run is not None else {}
    new = [Param(k, v) for k, v in params.items() if k not in have]
    changed = [RunTag(f"biorab.changed.{k}"[:250], v)
               for k, v in params.items() if k in have and have[k] != v]
    for start in range(0, len(new), 100):  # MLflow caps a batch at 100 params
        client.log_batch(run_id, params=new[start : start + 100])
    if changed:
        client.log_batch(run_id, tags=changed)


def close_stale_children(client: Any, experiment_id: str, parent_key: str, keep: set[str]) -> int:
    """Children of `parent_key` left RUNNING by a dead process and not reopened now: marked KILLED."""
    closed = 0
    for run in find_runs(client, experiment_id, PARENT_KEY, parent_key):
        if run.info.status == "RUNNING" and run.info.run_id not in keep and not owner_alive(run.data.tags):
            client.set_terminated(run.info.run_id, "KILLED")
            closed += 1
    return closed
