"""Shared fixtures. Every test writes caches, indexes and runs to a temp dir and reads data from the shared
folder (read-only in CI)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from biorab.drugmech.graph.drugmechdb import DrugMechDB

REPO = Path(__file__).resolve().parent.parent

# Set before any test imports transformers/ray/mlflow, so nothing reaches a hub or writes to $HOME.
for _key, _value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "true",
    "TOKENIZERS_PARALLELISM": "false",
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
}.items():
    os.environ.setdefault(_key, _value)


def _shared(sub: str) -> Path:
    env = {
        "biorab": "BIORAB_DATA_DIR",
        "drugmechdb": "BIORAB_DRUGMECHDB_DIR",
        "drugmechcf": "BIORAB_DRUGMECHCF_DIR",
    }
    if os.environ.get(env[sub]):
        return Path(os.environ[env[sub]])
    return REPO.parent / "shared" / "data" / sub


def _shared_fixture(sub: str, what: str) -> Any:
    @pytest.fixture(scope="session")
    def fixture() -> Path:
        path = _shared(sub)
        if not path.is_dir():
            pytest.skip(f"{what} not found at {path}")
        return path

    fixture.__doc__ = f"{what} (``../shared/data/{sub}``)."
    return fixture


data_dir = _shared_fixture("biorab", "the staged BioRAB datasets")
drugmechdb_dir = _shared_fixture("drugmechdb", "DrugMechDB")
drugmechcf_dir = _shared_fixture("drugmechcf", "the Drug Mechanisms Counterfactuals release")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caches go to a per-session temp dir unless a test sets its own."""
    cache = tmp_path_factory.getbasetemp() / "biorab-cache"
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(cache))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path_factory.getbasetemp() / 'mlflow.db'}")


@pytest.fixture(scope="module")
def drugmechdb(drugmechdb_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DrugMechDB]:
    """DrugMechDB loaded once per test module (its parse cache in the session temp dir, as above)."""
    from biorab.drugmech.graph.drugmechdb import load_drugmechdb  # networkx: only for the tests that use it

    with pytest.MonkeyPatch.context() as mp:  # module scope cannot use the function-scoped `monkeypatch`
        mp.setenv("BIORAB_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "biorab-cache"))
        yield load_drugmechdb(drugmechdb_dir)
