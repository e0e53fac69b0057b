"""`biorab run` on a machine with no data folder fetches what the config reads (here from a local HTTP
mirror of the staged data), then runs; `--no-fetch` fails naming the fix; `biorab validate` names a
missing data file and the fetch command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biorab.cli.main import app
from tests.support.bare_machine import bare_machine as make_bare_machine
from tests.support.range_http_server import RangeServer

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def bare_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No data beside the checkout, no overrides; returns the fetched-data default (empty)."""
    return make_bare_machine(tmp_path, monkeypatch)


def test_run_fetches_the_configs_data_when_none_is_found(
    bare_machine: Path, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["run", str(REPO / "jobs" / "smoke.yaml"), "--limit", "1", "--backend", "fake", "--no-ray",
            "--output-dir", str(tmp_path / "runs")]
    refused = CliRunner().invoke(app, [*args, "--no-fetch"])
    assert "no biorab data folder found" in str(refused.exception)
    assert "run `biorab data fetch biorab`" in str(refused.exception)

    with RangeServer(data_dir.parent) as server:
        monkeypatch.setenv("BIORAB_DATA_MIRROR", server.url)
        first = CliRunner().invoke(app, args)
        assert first.exit_code == 0, first.output
        assert (f"no data for ade, ade_corpus_v2, medmcqa on this machine: fetching into {bare_machine}"
                in " ".join(first.output.split()))
        fetched = sorted(p for p, _ in server.requests)
        assert {p.split("/")[1] for p in fetched} == {"ade", "ade_corpus_v2", "medmcqa"}
        assert len(fetched) == 12  # the originals of the three datasets; their derived files are rebuilt
        assert (bare_machine / "biorab" / "ade" / "test.derived.jsonl").is_file()
        assert "progress: 6/6 rows (100%)" in first.output  # plain lines: the runner's output is no TTY

        server.requests.clear()
        again = CliRunner().invoke(app, args)
        assert again.exit_code == 0 and server.requests == [] and "fetching" not in again.output


def test_validate_names_the_missing_file_and_the_fix(tmp_path: Path, data_dir: Path) -> None:
    partial = tmp_path / "biorab" / "ade"
    partial.mkdir(parents=True)
    (partial / "test.derived.jsonl").write_bytes((data_dir / "ade" / "test.derived.jsonl").read_bytes())
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    smoke = str(REPO / "jobs" / "smoke.yaml")
    result = subprocess.run([sys.executable, "-m", "biorab.cli.main", "validate", smoke,
                             "--data-dir", str(tmp_path / "biorab")], capture_output=True, text=True, env=env)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"error: {REPO / 'jobs' / 'smoke.yaml'}, key 'datasets.0.name': data file "
        f"{partial / 'triplet_extraction_ade_train.json'} not found (ade train split) (and 4 more); run "
        "`biorab data fetch ade` or pass --data-dir DIR (or set $BIORAB_DATA_DIR, or data_dir: in the "
        "config)")
