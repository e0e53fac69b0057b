"""`biorab replay`: the smoke job run on the fake backend, served by `biorab serve` from the serve config
`biorab replay --write-serve-config` writes (its six cells as six named RALs behind one endpoint), and
replayed through that endpoint with the official openai client: 100% agreement on evidence, prompts,
answers and verdicts. The fake backend is batch-invariant by construction; the CPU model's measured
agreement is in docs/serve.md."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from tests.support.serving import free_port, wait_for_banner

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.full_data, pytest.mark.timeout(900)]
KEY = "replay-key"


def _cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "biorab.cli.main", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=600)


def test_replay_of_the_smoke_job_on_the_fake_backend_agrees_fully(tmp_path: Path, data_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "BIORAB_CACHE_DIR": str(tmp_path / "cache"),
           "BIORAB_API_KEYS": KEY, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}"}
    run = _cli("run", str(REPO / "jobs" / "smoke.yaml"), "--backend", "fake", "--no-ray", "--limit", "4",
               "--output-dir", str(tmp_path / "runs"), "--data-dir", str(data_dir), "--no-fetch",
               env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    run_dir = tmp_path / "runs" / "smoke"
    config = tmp_path / "serve.yaml"
    wrote = _cli("replay", str(run_dir), "--write-serve-config", str(config), env=env, cwd=tmp_path)
    assert wrote.returncode == 0, wrote.stderr
    served = yaml.safe_load(config.read_text(encoding="utf-8"))
    assert [r["name"] for r in served["rals"]] == [
        "ade-test__none__noexample", "ade-test__labeled-bm25-k1__bm25",
        "ade_corpus_v2-test__none__noexample", "ade_corpus_v2-test__labeled-bm25-k1__bm25",
        "medmcqa-test__none__noexample", "medmcqa-test__labeled-bm25-k1__bm25"]
    ray_temp = tempfile.mkdtemp(prefix="rp-", dir="/tmp")  # Ray's unix socket paths are limited
    served["ray"] = {"num_cpus": 2, "object_store_memory": 300_000_000, "temp_dir": ray_temp}
    served["deployments"] = {name: {"num_cpus": 0.1} for name in ("ingress", "retriever", "generator")}
    config.write_text(yaml.safe_dump(served), encoding="utf-8")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "biorab.cli.main", "serve", str(config), "--port",
                             str(port)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        wait_for_banner(proc, timeout=600)
        out = _cli("replay", str(run_dir), "--endpoint", f"http://127.0.0.1:{port}", "--api-key", KEY,
                   env=env, cwd=tmp_path)
        one = _cli("replay", str(run_dir), "--endpoint", f"http://127.0.0.1:{port}", "--api-key", KEY,
                   "--cells", "ade_corpus_v2-test__labeled-bm25-k1__bm25", env=env, cwd=tmp_path)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=120)
        finally:
            shutil.rmtree(ray_temp, ignore_errors=True)
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
    lines = out.stdout.splitlines()
    total = next(ln for ln in lines if ln.startswith("all "))
    assert total.split()[1:] == ["24", "100.0%", "100.0%", "100.0%", "100.0%"], out.stdout
    assert "0 difference(s)" in lines
    assert one.returncode == 0 and len([ln for ln in one.stdout.splitlines() if "100.0%" in ln]) == 2
