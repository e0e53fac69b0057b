"""Which tracking store a run uses, and a fast check that a tracking server answers.

The store is ``tracking.uri`` if the config sets one, else ``$MLFLOW_TRACKING_URI``, else the run dir's own
SQLite file. A server is checked with one ``GET /health`` and a short timeout before any MLflow call, so an
unreachable server costs seconds (not minutes of MLflow's HTTP retries after all the compute) and ends in a
`TrackingError` that says how to log the results later.
"""

from __future__ import annotations

import os
from pathlib import Path

from biorab.common.errors import TrackingError

CHECK_TIMEOUT_S = 3.0
#: MLflow's own HTTP client: fail after one short retry instead of its default ~7 retries with backoff.
def resolve_uri(configured: str | None, run_dir: Path) -> str:
    """`configured`, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///<run dir>/mlflow.db``."""
    default = f"sqlite:///{run_dir.resolve() / 'mlflow.db'}"
    return configured or os.environ.get("MLFLOW_TRACKING_URI") or default


def is_server(uri: str) -> bool:
    return uri.split(":", 1)[0].lower() in ("http", "https")


def check_server(uri: str, *, timeout: float = CHECK_TIMEOUT_S) -> None:
    """Raise `TrackingError` unless the server at `uri` answers ``/health`` within `timeout` seconds
    (a local store needs no check)."""
    import urllib.error
    import urllib.request

    if not is_server(uri):
        return
    url = uri.rstrip("/") + "/health"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (http(s) only, checked)
            if response.status != 200:
                raise TrackingError(f"MLflow tracking server {uri} answered {response.status} on /health")
    except (urllib.error.URLError, OSError, TimeoutError) as e:
        raise TrackingError(f"MLflow tracking server {uri} is not reachable ({e}); check tracking.uri / "
                            "$MLFLOW_TRACKING_URI") from e
