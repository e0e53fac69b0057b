"""Which cluster the driver joins: the config's address, else the one Ray gives a job in $RAY_ADDRESS;
a dashboard URL (what `ray job submit` uses) means the cluster on this machine."""

from __future__ import annotations

import pytest

from biorab.experiment import ResourcesConfig
from pipelines.ray_setup import cluster_address


@pytest.mark.parametrize(("configured", "env", "expected"), [
    (None, None, None),  # start a local Ray
    (None, "10.0.0.5:6379", "10.0.0.5:6379"),  # inside `ray job submit`: Ray's GCS address
    ("auto", "10.0.0.5:6379", "auto"),  # the config wins
    (None, "http://127.0.0.1:8265", "auto"),  # an exported dashboard address
    (None, "", None),
])
def test_cluster_address(configured: str | None, env: str | None, expected: str | None,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    if env is None:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    else:
        monkeypatch.setenv("RAY_ADDRESS", env)
    assert cluster_address(ResourcesConfig(address=configured)) == expected
