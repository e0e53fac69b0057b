"""Start the real `biorab` command as a subprocess (its own session, so signals reach only it) on a small
fake-backend config: shared by the reliability tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]


def write_config(tmp_path: Path, data_dir: Path, name: str = "rel", **override: Any) -> Path:
    cfg: dict[str, Any] = {
        "name": name,
        "data_dir": str(data_dir),
        "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "semclass", "limit": 6}],
        "retrieval": [{"testbed": "none"}],
        "backend": {"name": "fake", "params": {"mode": "choice"}},
        "sampling": {"max_tokens": 4},
        "n_boot": 20,
        "resources": {"llm": {"batch_size": 2}},
        "tracking": {"enabled": False},
        **override,
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def env_for(cache: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "BIORAB_CACHE_DIR": str(cache), "COLUMNS": "200", **extra}


def start(*args: str, cache: Path, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "biorab.cli.main", *args], env=env_for(cache, **extra),
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def biorab(*args: str, cache: Path, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "biorab.cli.main", *args], env=env_for(cache, **extra),
                          cwd=REPO, capture_output=True, text=True, timeout=timeout)


def shard_count(run_dir: Path) -> int:
    return len(list(run_dir.glob("cells/*/part-*.parquet")))
