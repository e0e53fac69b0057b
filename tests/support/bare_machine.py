"""A machine with no data beside the checkout, no data overrides and no mirror: what `biorab` sees on a
fresh machine, shared by the fetch tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.common import paths


def bare_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Set it up under `tmp_path`; returns the fetched-data default folder (empty)."""
    for env in ("BIORAB_DATA_DIR", "BIORAB_DRUGMECHDB_DIR", "BIORAB_DRUGMECHCF_DIR", "BIORAB_DATA_MIRROR"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setattr(paths, "_REPO_ROOT", tmp_path / "checkout" / "repo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "biorab" / "data"
