"""`biorab plan` as a user calls it: JSON fields, and every config error of every run before launch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def plan(path: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BIORAB_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "biorab.cli.main", "plan", str(path), *args], env=env,
                          cwd=REPO, capture_output=True, text=True, timeout=300)


def sweep_file(tmp_path: Path, data_dir: Path, datasets: list[str]) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "name": "s", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"a": {"backend": "fake"}, "b": {"backend": "fake", "params": {"seed": 1}}},
        "matrix": {"models": ["a", "b"], "datasets": [{"name": d, "limit": 3} for d in datasets],
                   "retrievers": ["none"]},
    }), encoding="utf-8")
    return path


def test_plan_json(tmp_path: Path, data_dir: Path) -> None:
    out = plan(sweep_file(tmp_path, data_dir, ["semclass", "medmcqa"]), tmp_path / "cache", "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    counts = (got["cells"], got["runs"], got["unique_generation_keys"], got["new_generations"])
    assert counts == (4, 2, 12, 12)
    assert got["estimated_prompts"] == 0 and got["gpu_hours"] == 0.0 and got["errors"] == []


def test_plan_lists_every_config_error(tmp_path: Path, data_dir: Path) -> None:
    out = plan(sweep_file(tmp_path, data_dir, ["semclas"]), tmp_path / "cache")
    assert out.returncode == 2
    # one error per run (both models' runs name the dataset), then the summary naming the file
    text = " ".join(out.stdout.split())  # the console wraps long lines
    assert text.count("key 'datasets.0.name'") == 2 and "Did you mean 'semclass'" in text
    assert "2 config error(s) found before launch" in out.stderr and "s.yaml" in out.stderr
