"""The environment `biorab` and the bench scripts start with: defaults only where the user set nothing."""

from __future__ import annotations

import os

import pytest

from biorab.cli.support.process_env import PROCESS_ENV_DEFAULTS, apply_process_env_defaults


def test_defaults_fill_only_what_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in PROCESS_ENV_DEFAULTS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")  # a dedicated machine's choice (docs/pipeline.md)
    apply_process_env_defaults()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert "RAY_AUTH_MODE" not in PROCESS_ENV_DEFAULTS  # token auth for every local Ray (pipelines.ray_auth)
    assert os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == "1"


def test_the_default_wait_policy_is_passive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    apply_process_env_defaults()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"


def test_arrow_uses_malloc_even_when_imported_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrow's mimalloc kept freed Parquet pages, so the driver grew with the rows scored (issue 45)."""
    import pyarrow as pa

    before = pa.default_memory_pool()
    try:
        monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "mimalloc")  # the user's choice stays
        pa.set_memory_pool(pa.mimalloc_memory_pool())
        apply_process_env_defaults()
        assert pa.default_memory_pool().backend_name == "mimalloc"
        monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL")
        apply_process_env_defaults()  # pyarrow is imported already: switched now
        assert pa.default_memory_pool().backend_name == "system"
    finally:
        pa.set_memory_pool(before)
