"""Shared fixtures. Every test writes caches, indexes and runs to a temp dir and reads data from the shared
folder (read-only in CI)."""

from __future__ import annotations

import os
import signal
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
    "RAY_USAGE_STATS_ENABLED": "0",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "true",
    "TOKENIZERS_PARALLELISM": "false",
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
    "OMP_WAIT_POLICY": "PASSIVE",  # as `biorab` sets it: no spinning torch threads beside Ray's processes
}.items():
    os.environ.setdefault(_key, _value)

# Ray's token auth on, as `biorab` runs it: one random token for the session's Rays (in-process ones, the
# `ray start` heads, and the `biorab` subprocesses, which inherit RAY_AUTH_TOKEN_PATH), in a 0600 file of
# a temp folder, so that no `ray.init` writes $HOME/.ray/auth_token. Set before Ray is imported.
from pipelines.ray_auth import local_ray_token  # noqa: E402

local_ray_token(None)


ENV = {"biorab": "BIORAB_DATA_DIR", "drugmechdb": "BIORAB_DRUGMECHDB_DIR",
       "drugmechcf": "BIORAB_DRUGMECHCF_DIR"}
#: Small fixtures cut by the project (tests/data/make_fixtures.py): the default data of every test.
FIXTURES = {sub: REPO / "tests" / "data" / sub for sub in ENV}
#: The full staged data (``../shared/data`` or the environment), read once before any test changes the env.
SHARED = {sub: Path(os.environ[env]) if os.environ.get(env) else REPO.parent / "shared" / "data" / sub
          for sub, env in ENV.items()}
ALLOW_MISSING = os.environ.get("BIORAB_ALLOW_MISSING_DATA") == "1"


def pytest_configure(config: pytest.Config) -> None:
    # A runner that starts the tests in the background (`cmd &` in a script) leaves SIGINT ignored, and an
    # ignored signal stays ignored in every child: the tests that press Ctrl-C on a `biorab` subprocess need
    # it delivered. Handled here (not ignored), it is back to the default in each child after exec.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.addinivalue_line("markers", "full_data: needs the full staged data (../shared/data); fails "
                            "when it is missing unless BIORAB_ALLOW_MISSING_DATA=1")


def _needs_full_data(node: Any) -> bool:
    return node.get_closest_marker("full_data") is not None


def _data(sub: str, full: bool) -> Path:
    """Where a test reads `sub` from: the fixtures, or (``full_data`` tests) the full staged data, which
    must be there: a missing data dir fails the test loudly, never skips it, unless allowed."""
    if not full:
        return FIXTURES[sub]
    path = SHARED[sub]
    if not path.is_dir():
        message = (f"full_data test: {path} not found; stage ../shared/data or set {ENV[sub]} "
                   "(BIORAB_ALLOW_MISSING_DATA=1 skips these tests instead)")
        if ALLOW_MISSING:
            pytest.skip(message)
        pytest.fail(message, pytrace=False)
    return path


def _data_fixture(sub: str, what: str) -> Any:
    @pytest.fixture
    def fixture(request: pytest.FixtureRequest) -> Path:
        return _data(sub, _needs_full_data(request.node))

    fixture.__doc__ = f"{what}: ``tests/data/{sub}``, or ``../shared/data/{sub}`` for ``full_data`` tests."
    return fixture


data_dir = _data_fixture("biorab", "the staged BioRAB datasets")
drugmechdb_dir = _data_fixture("drugmechdb", "DrugMechDB")
drugmechcf_dir = _data_fixture("drugmechcf", "the Drug Mechanisms Counterfactuals release")


@pytest.fixture(scope="session")
def full_data_dir() -> Path:
    """The full staged BioRAB data, for module- or session-scoped fixtures of ``full_data`` modules (the
    function-scoped `data_dir` cannot serve them)."""
    return _data("biorab", True)


@pytest.fixture(autouse=True)
def _data_env(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Code that finds its data by itself (defaults, CLI subprocesses) sees the same data as the test."""
    full = _needs_full_data(request.node)
    for sub, env in ENV.items():
        path = SHARED[sub] if full else FIXTURES[sub]
        monkeypatch.setenv(env, str(path))


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caches (and the fetched-data default) go to a per-session temp dir unless a test sets its own."""
    cache = tmp_path_factory.getbasetemp() / "biorab-cache"
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(cache))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.getbasetemp() / "xdg-data"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path_factory.getbasetemp() / 'mlflow.db'}")


@pytest.fixture(scope="module")
def drugmechdb(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DrugMechDB]:
    """DrugMechDB loaded once per test module (its parse cache in the session temp dir, as above): the
    fixture slice, or the full DrugMechDB for a module marked ``full_data``."""
    from biorab.drugmech.graph.drugmechdb import load_drugmechdb  # networkx: only for the tests that use it

    with pytest.MonkeyPatch.context() as mp:  # module scope cannot use the function-scoped `monkeypatch`
        mp.setenv("BIORAB_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "biorab-cache"))
        yield load_drugmechdb(_data("drugmechdb", _needs_full_data(request.node)))
