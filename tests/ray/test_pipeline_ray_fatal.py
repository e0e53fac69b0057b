"""A refused API key on Ray: `biorab run` (local Ray, the openai backend against the faulty test server)
stops with the same one-line message and exit status 2 as ``--no-ray``, writes no error rows, and the same
command resumes once the key works. The same for `biorab sweep` (issue 45 item 2): the fatal error inside
its LLM actors ends it with that one line and exit 2, no MLflow run left RUNNING, and it resumes after the
fix, each row generated once."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.cli_runs import biorab, write_config
from tests.support.fault_openai_server import FaultServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as s:
        yield s


@pytest.fixture
def ray_temp() -> Iterator[str]:
    """A short temp dir for the local Ray's session files (its socket paths), removed afterwards."""
    path = tempfile.mkdtemp(prefix="rbf", dir="/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_refused_key_stops_the_ray_run_with_one_line(server: FaultServer, tmp_path: Path, data_dir: Path,
                                                       ray_temp: str) -> None:
    server.always = "401"
    backend = {"name": "openai", "params": {"base_url": server.base_url, "model": "gpt-4o", "max_retries": 2}}
    cfg = write_config(tmp_path, data_dir, backend=backend, sampling={"max_tokens": 2},
                       resources={"llm": {"batch_size": 2}, "temp_dir": ray_temp})
    out = biorab("run", str(cfg), cache=tmp_path / "cache")
    assert out.returncode == 2, out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ") and "refused the API key for model gpt-4o (HTTP 401" in line, line
    assert "to resume" in line, line
    assert "Traceback" not in out.stderr and "RayTaskError" not in out.stderr, out.stderr
    assert not list((tmp_path / "runs").glob("*/cells/*/part-*.parquet"))  # no error rows
    refused = len(server.log)
    server.always = None
    again = biorab("run", str(cfg), cache=tmp_path / "cache")
    assert again.returncode == 0, again.stderr
    assert len(server.log) == refused + 6  # each of the 6 rows once, now answered


def mlflow_statuses(db: Path) -> list[str]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    experiment = client.get_experiment_by_name("fatal")
    assert experiment is not None
    return sorted(r.info.status for r in client.search_runs([experiment.experiment_id]))


@pytest.mark.timeout(600)
def test_a_fatal_error_in_a_sweep_ends_with_one_line_and_resumes(server: FaultServer, tmp_path: Path,
                                                                 data_dir: Path, ray_temp: str) -> None:
    server.always = "401"
    db = tmp_path / "mlflow.db"
    sweep = {"name": "fatal", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
             "models": {"api": {"backend": "openai", "model": "gpt-4o",
                                "params": {"base_url": server.base_url, "max_retries": 2}}},
             "matrix": {"models": ["api"], "datasets": [{"name": "semclass", "limit": 3}],
                        "retrievers": ["none", "bm25"]},
             "sampling": {"max_tokens": 2}, "n_boot": 20,
             "resources": {"llm": {"batch_size": 2}, "temp_dir": ray_temp},
             "tracking": {"uri": f"sqlite:///{db}", "experiment": "fatal"}}
    path = tmp_path / "fatal.yaml"
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")

    out = biorab("sweep", str(path), "--ray", cache=tmp_path / "cache", timeout=400)
    assert out.returncode == 2, out.stderr[-3000:]
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ") and "refused the API key for model gpt-4o (HTTP 401" in line, line
    assert "to resume" in line, line
    assert "Traceback" not in out.stderr and "RayTaskError" not in out.stderr, out.stderr[-3000:]
    assert not list((tmp_path / "runs").glob("fatal/*/cells/*/part-*.parquet"))  # no error rows
    assert "RUNNING" not in mlflow_statuses(db)  # the parent (and any started cell) closed
    refused = len(server.log)

    server.always = None
    again = biorab("sweep", str(path), "--ray", cache=tmp_path / "cache", timeout=400)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(server.log) == refused + 6  # 2 cells x 3 rows, each once, now answered
    assert set(mlflow_statuses(db)) == {"FINISHED"}
