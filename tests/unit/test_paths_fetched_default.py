"""Data folders are also found where `biorab data fetch` puts them by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.common import paths
from biorab.common.errors import ConfigError


@pytest.fixture
def nothing_beside_the_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout with no data beside it, run from an empty folder, with no overrides."""
    for env in ("BIORAB_DATA_DIR", "BIORAB_DRUGMECHDB_DIR", "BIORAB_DRUGMECHCF_DIR"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setattr(paths, "_REPO_ROOT", tmp_path / "checkout" / "repo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "biorab" / "data"


def test_the_fetched_default_is_found_last(nothing_beside_the_checkout: Path) -> None:
    fetched = nothing_beside_the_checkout
    assert paths.fetched_data_dir() == fetched
    with pytest.raises(ConfigError, match=r"no biorab data folder found \(looked beside the checkout and in "
                       r".*\); run `biorab data fetch biorab`, pass --data-dir or set \$BIORAB_DATA_DIR"):
        paths.biorab_data_dir()
    (fetched / "biorab").mkdir(parents=True)
    (fetched / "drugmechdb").mkdir()
    assert paths.biorab_data_dir() == fetched / "biorab"
    assert paths.drugmechdb_dir() == fetched / "drugmechdb"
    beside = Path.cwd() / "data" / "biorab"  # ./data/biorab still wins over the fetched default
    beside.mkdir(parents=True)
    assert paths.biorab_data_dir() == beside


def test_home_default_without_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert paths.fetched_data_dir() == tmp_path / ".local" / "share" / "biorab" / "data"
