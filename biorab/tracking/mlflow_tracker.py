"""Where a run's MLflow data lives: the default store (``sqlite:///<run dir>/mlflow.db``) and the artifact
root (``<run dir>/mlartifacts`` for a local store, the server's own store for a tracking server).

A tracking server is one config line (``tracking.uri: http://host:5000``). What is logged, and how reruns
find their runs again, is `biorab.tracking.session` (one parent per run or sweep, one child per cell).
"""

from __future__ import annotations

from pathlib import Path


def default_tracking_uri(run_dir: Path) -> str:
    return f"sqlite:///{run_dir.resolve() / 'mlflow.db'}"


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
