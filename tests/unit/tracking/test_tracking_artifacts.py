"""Where MLflow artifacts go: the run dir for a local store, the server's artifact store for a server."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

import biorab.tracking.flatten
import biorab.tracking.mlflow_tracker
from biorab.tracking.mlflow_tracker import artifact_root


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("sqlite:////r/runs/x/mlflow.db", "file:///r/runs/x/mlartifacts"),
        ("file:///somewhere/mlruns", "file:///r/runs/x/mlartifacts"),
        ("http://mlflow.internal:5000", None),
        ("HTTPS://mlflow.example.org", None),
        ("databricks", None),
    ],
)
def test_artifact_root(uri: str, expected: str | None) -> None:
    assert artifact_root(uri, Path("/r/runs/x")) == expected


@pytest.mark.parametrize("module", [biorab.tracking.mlflow_tracker, biorab.tracking.flatten])
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0
