"""One function starts or joins Ray for every command (`pipelines.ray_setup.start_ray`), and each command's
`ray.init` call is the one it made with its own copy before (pinned from main): `biorab run` (`init_ray`:
quiet, no worker output, reaper for a local Ray), `biorab serve` (always a fresh local Ray) and the tune
jobs (workers' environment; a local Ray with the loopback dashboard Ray Train needs). `ray.init` is
recorded here, not run; the real starts are run by tests/ray/test_pipeline_ray.py,
tests/integration/test_cli_serve.py and tests/ray/test_tune_kill_resume.py."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from biorab.experiment import ResourcesConfig
from pipelines import ray_setup
from pipelines.ray_setup import RaySettings, init_ray, short_temp_dir, start_ray

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    import ray

    made: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: made.append(("init", kw)))
    monkeypatch.setattr(ray_setup, "start_reaper", lambda: made.append(("reaper", {})))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv("RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S", raising=False)
    return made


def test_a_run_starts_a_quiet_local_ray_with_its_reaper_or_joins_quietly(calls: list[Any]) -> None:
    assert init_ray(ResourcesConfig(num_cpus=3, object_store_memory=100_000_000)) is True
    assert init_ray(ResourcesConfig(address="auto")) is True
    assert calls == [
        # workers kept: 1 retrieval + 1 LLM actor, Ray Data's 3 actors, 3 task workers (one per CPU)
        ("init", {"num_cpus": 3, "include_dashboard": False, "object_store_memory": 100_000_000,
                  "_temp_dir": short_temp_dir(), "_system_config": {"num_workers_soft_limit": 8},
                  "log_to_driver": False, "logging_level": logging.WARNING}),
        ("reaper", {}),
        ("init", {"address": "auto", "log_to_driver": False, "logging_level": logging.WARNING}),
    ]


def test_serve_asks_for_a_fresh_local_ray_and_joins_with_nothing_else(
        calls: list[Any], tmp_path: Path) -> None:
    temp = str(tmp_path / "ray")
    start_ray(RaySettings(num_cpus=2, object_store_memory=500_000_000, temp_dir=temp), fresh=True)
    start_ray(RaySettings(address="ray://head:10001"), fresh=True)
    # (main passed include_dashboard=False when joining too; Ray 2.60 ignores it for an existing cluster)
    assert calls == [
        ("init", {"address": "local", "num_cpus": 2, "include_dashboard": False,
                  "object_store_memory": 500_000_000, "_temp_dir": temp}),
        ("init", {"address": "ray://head:10001"}),
    ]


def test_a_tune_job_hands_its_workers_the_env_and_gets_the_train_dashboard(
        calls: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from training.config import load_tune_config
    from training.job import start_ray as start_tune_ray

    cfg = load_tune_config(REPO / "jobs" / "tune_encoder.yaml")
    gcs_port: list[str | None] = []
    monkeypatch.setattr("ray.init", lambda **kw: (calls.append(("init", kw)),
                                                  gcs_port.append(os.environ.get("RAY_GCS_SERVER_PORT"))))
    monkeypatch.delenv("RAY_GCS_SERVER_PORT", raising=False)
    assert start_tune_ray(cfg) is True
    assert "RAY_GCS_SERVER_PORT" not in os.environ  # set for the start only
    (_, local), = calls
    env = local.pop("runtime_env")["env_vars"]
    assert env["RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S"] == "600" and set(env) == {
        "RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S", "RAY_ADDRESS"}
    assert env["RAY_ADDRESS"].endswith(f":{gcs_port[0]}")  # the workers' address is the GCS port chosen
    dashboard_port = local.pop("dashboard_port")
    assert isinstance(dashboard_port, int) and str(dashboard_port) != gcs_port[0]
    assert local == {"include_dashboard": True, "dashboard_host": "127.0.0.1", "num_cpus": 2,
                     "object_store_memory": 500_000_000, "_temp_dir": None, "log_to_driver": False}
    calls.clear()
    joined = cfg.model_copy(update={"ray": cfg.ray.model_copy(update={"address": "auto"})})
    assert start_tune_ray(joined) is True
    assert calls == [("init", {"address": "auto", "runtime_env": {
        "env_vars": {"RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S": "600"}}})]


def test_a_ray_that_is_up_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    import ray

    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    monkeypatch.setattr(ray, "init", lambda **kw: pytest.fail("ray.init called on a running Ray"))
    assert start_ray(RaySettings(), fresh=True) is False
    assert init_ray(ResourcesConfig()) is False
