"""`biorab run`, `biorab validate` and `biorab ls` as a user calls them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


def biorab(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BIORAB_CACHE_DIR": str(cache), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "biorab.cli.main", *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def config(tmp_path: Path, data_dir: Path, **override: object) -> Path:
    cfg = {
        "name": "cli",
        "data_dir": str(data_dir),
        "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "semclass", "limit": 4}],
        "retrieval": [{"testbed": "none"}],
        "backend": {"name": "fake", "params": {"mode": "fixed", "answer": "y"}},
        "n_boot": 20,
        **override,
    }
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def test_ls_lists_registered_components(tmp_path: Path) -> None:
    out = biorab("ls", "backends", cache=tmp_path)
    assert out.returncode == 0 and {"fake", "openai", "transformers"} <= set(out.stdout.split())
    bad = biorab("ls", "widgets", cache=tmp_path)
    assert bad.returncode == 2 and "unknown kind 'widgets'" in bad.stderr


def test_validate_ok_and_errors(tmp_path: Path, data_dir: Path) -> None:
    ok = biorab("validate", str(config(tmp_path, data_dir)), cache=tmp_path)
    assert ok.returncode == 0 and "defines 1 cell(s)" in ok.stdout and "semclass-test__none__" in ok.stdout
    for override, key, words in [
        ({"datasets": [{"name": "semclas"}]}, "datasets.0.name", "Did you mean 'semclass'"),
        ({"datasets": [{"name": "semclass", "split": "dev"}]}, "datasets.0.split", "no split 'dev'"),
        ({"backend": {"name": "fake", "params": {"mood": "x"}}}, "backend.params.mood", "unknown key"),
        ({"retrieval": [{"testbed": "labeled", "retriever": "bm26"}]}, "retrieval.0.retriever", "bm25"),
        ({"retrieval": [{"testbed": "none", "template": "fancy"}]}, "retrieval.0.template", "fancy"),
        ({"sampling": {"temperature": -1}}, "sampling.temperature", "greater than or equal"),
    ]:
        path = config(tmp_path, data_dir, **override)
        out = biorab("validate", str(path), cache=tmp_path)
        assert out.returncode == 2, out
        assert f"error: {path}, key '{key}'" in out.stderr and words in out.stderr


def test_invalid_config_fails_before_any_work(tmp_path: Path, data_dir: Path) -> None:
    path = config(tmp_path, data_dir, backend={"name": "fake", "params": {"mood": "x"}})
    out = biorab("run", str(path), "--no-ray", cache=tmp_path / "cache")
    assert out.returncode == 2 and "key 'backend.params.mood'" in out.stderr
    assert not (tmp_path / "runs").exists() and not (tmp_path / "cache").exists()


def test_bad_flags_are_usage_errors_not_tracebacks(tmp_path: Path, data_dir: Path) -> None:
    path = config(tmp_path, data_dir)
    for args, words in [(("run", str(path), "--limit", "0"), "Invalid value for '--limit'"),
                        (("run",), "Missing argument 'config'"),
                        (("run", str(path), "--resum"), "No such option: --resum")]:
        out = biorab(*args, cache=tmp_path / "cache")
        assert out.returncode == 2 and words in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_run_prints_table_and_mlflow_line(tmp_path: Path, data_dir: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the run dir's own store
    path = config(tmp_path, data_dir)
    out = biorab("run", str(path), "--no-ray", "--limit", "3", cache=tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    # the fixed answer "y" is right on 2 of the first 3 semclass rows (gold y, y, n): micro-F1 2/3
    row = next(line for line in out.stdout.splitlines() if "semclass-test__none" in line)
    assert "classification" in row and "micro_f1" in row and "0.667 [" in row
    assert "generated 3, from cache 0, failed 0" in out.stderr and "3/3" in out.stderr
    db = tmp_path / "runs" / "cli" / "mlflow.db"
    assert f"browse: mlflow ui --backend-store-uri sqlite:///{db}" in out.stdout and db.is_file()
    assert re.search(r"^wall time: \d+\.\d s$", out.stdout, re.MULTILINE)  # the job prints how long it took
    again = biorab("run", str(path), "--no-ray", "--limit", "3", cache=tmp_path / "cache")
    assert again.returncode == 0 and "nothing to compute" in again.stderr
    fresh = biorab("run", str(path), "--no-ray", "--limit", "3", "--fresh", cache=tmp_path / "cache")
    assert fresh.returncode == 0 and "generated 0, from cache 3, failed 0" in fresh.stderr
