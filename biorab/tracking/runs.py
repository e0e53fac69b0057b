"""MLflow runs found again by a stable key: one parent per sweep (or `biorab run`), one child per cell.

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

from biorab.errors import TrackingError

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


def open_run(client: Any, experiment_id: str, key: str, *, name: str, tags: Mapping[str, str],
             existing: Any = None) -> str:
    """The run with tag ``biorab.key == key`` (`existing`, or searched), reopened as RUNNING by this process;
    a new one when there is none."""
    if existing is None:
        runs = find_runs(client, experiment_id, KEY, key)
        existing = runs[0] if runs else None
    all_tags = {**tags, KEY: key, **owner_tags()}
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
