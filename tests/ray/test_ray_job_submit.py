"""`ray job submit -- biorab run jobs/smoke.yaml` on a real local Ray head (started with ``ray start``):
the driver joins the cluster Ray names in ``$RAY_ADDRESS`` (passing it no resources), reads the data
folder given through the runtime env, runs the code from Ray's working-dir copy, and `ray job logs`
shows plain progress lines."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import requests

from tests.support.ray_head import LocalRayHead

pytestmark = [pytest.mark.slow, pytest.mark.timeout(480)]

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def test_submitted_smoke_job_joins_the_cluster_and_logs_progress(tmp_path: Path, data_dir: Path) -> None:
    # Token auth on (conftest: RAY_AUTH_MODE=token, RAY_AUTH_TOKEN_PATH): the head and `ray job submit`
    # read the same token file, as a cluster's nodes and its submitters would.
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
           "RAY_USAGE_STATS_ENABLED": "0"}
    assert env["RAY_AUTH_MODE"] == "token"
    env.pop("RAY_ADDRESS", None)
    ray = str(VENV_BIN / "ray")
    runtime_env = {"excludes": [".venv"], "env_vars": {
        "BIORAB_DATA_DIR": str(data_dir), "BIORAB_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "xdg"), "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}"}}
    job_id = f"biorab-smoke-{os.getpid()}"
    with LocalRayHead(ray, env) as head:
        # The dashboard's job API refuses a submission without the token (401) or with a wrong one (403).
        for headers, status in (({}, 401), ({"Authorization": "Bearer not-the-token"}, 403)):
            refused = requests.post(f"{head.dashboard_url}/api/jobs/", json={"entrypoint": "true"},
                                    headers=headers, timeout=30)
            assert refused.status_code == status, refused.text
        submit = subprocess.run(
            [ray, "job", "submit", "--address", head.dashboard_url, "--submission-id", job_id,
             "--working-dir", str(REPO), "--runtime-env-json", json.dumps(runtime_env), "--",
             "biorab", "run", "jobs/smoke.yaml", "--limit", "2", "--backend", "fake",
             "--output-dir", str(tmp_path / "runs")],
            env=env, capture_output=True, text=True, timeout=360)
        assert submit.returncode == 0, submit.stdout[-4000:] + submit.stderr[-2000:]
        logs = subprocess.run([ray, "job", "logs", "--address", head.dashboard_url, job_id],
                              env=env, capture_output=True, text=True, timeout=60, check=True).stdout

    # 3 datasets x 2 retrieval settings x 2 rows; the last progress line is the final count.
    progress = re.findall(r"^progress: (\d+)/(\d+) rows \((\d+)%\), [\d.]+ rows/s, eta \d+s$", logs, re.M)
    assert progress and progress[-1] == ("12", "12", "100")
    assert "generated 12, from cache 0, failed 0" in logs
    assert f"outputs: {tmp_path / 'runs' / 'smoke'}" in logs
    # The code that ran is the working-dir copy (only it has --backend), reading the data given above.
    shards = (tmp_path / "runs" / "smoke" / "cells").rglob("part-*.parquet")  # not attribution.parquet
    rows = [pq.read_table(p).num_rows for p in shards]
    assert sum(rows) == 12
