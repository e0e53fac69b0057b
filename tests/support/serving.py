"""What the module-scoped Serve fixtures share: a free loopback port and the staged data folder (a
module-scoped server cannot use the function-scoped ``data_dir`` fixture)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def staged_data() -> Path:
    """The full staged BioRAB data (``$BIORAB_DATA_DIR`` or ``../shared/data/biorab``); a failure when
    missing, as for every ``full_data`` test."""
    env = os.environ.get("BIORAB_DATA_DIR")
    path = Path(env) if env else REPO.parent / "shared" / "data" / "biorab"
    if not path.is_dir():
        pytest.fail(f"full_data test: {path} not found; stage ../shared/data or set BIORAB_DATA_DIR")
    return path
