"""The CPU-model replay measurement of docs/serve.md ("Replay: served == evaluated?"), reproducible.

`biorab run` of the smoke job's configuration (jobs/smoke.yaml: SmolLM2 through transformers, guided
decoding) on ADE-corpus-v2 (8 rows) and MedMCQA (4 rows), no retrieval and BM25 k=1 (4 cells, 24 rows);
then `biorab replay --write-serve-config` writes the serve config of those four cells (four RALs on one
engine), `biorab serve` serves it on a free 127.0.0.1 port, and `biorab replay` sends every scored row
through it, one request at a time. It prints the CPU flags, core count and load first (a shared machine's
timings vary), then the replay report (agreement per cell and field, each difference with its cause).

    python bench/replay.py                    # the table's first row (the run's LLM batches of 16)
    python bench/replay.py --batch-size 1     # its second row (each prompt alone in its forward pass)
    python bench/replay.py --no-ray           # the run without Ray (the table's first row used local Ray)

Everything runs in a temporary folder (removed at the end unless ``--keep DIR``); MLflow goes to a SQLite
file there. Loopback only; the server is stopped with SIGTERM and waited for.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from bench_host import free_port, machine_line

REPO = Path(__file__).resolve().parents[1]
KEY = "bench-replay-key"
READY = "Ctrl-C (or SIGTERM) stops the server."  # the banner's last line (tests/support/serving.READY_LINE)


def _config(out: Path, batch_size: int | None) -> dict[str, Any]:
    config = yaml.safe_load((REPO / "jobs" / "smoke.yaml").read_text(encoding="utf-8"))
    config.update(name="replay-bench", output_dir=str(out / "runs"),
                  datasets=[{"name": "ade_corpus_v2", "split": "test", "limit": 8},
                            {"name": "medmcqa", "split": "test", "limit": 4}])
    if batch_size is not None:
        config["backend"]["params"]["batch_size"] = batch_size
        config["resources"]["llm"]["batch_size"] = batch_size
    return config


def _cli(env: dict[str, str], *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "biorab.cli.main", *args], env=env, text=True,
                          capture_output=True, timeout=timeout, cwd=REPO)
    if done.returncode not in (0, 1):  # replay exits 1 when something differs: a result, not a failure
        raise SystemExit(f"biorab {args[0]} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return done


def _wait_ready(proc: subprocess.Popen[str], timeout: float) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        if line.startswith(READY):
            return
    proc.kill()
    raise SystemExit(f"biorab serve did not come up within {timeout:.0f} s (rc={proc.poll()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, help="the run's and the server's LLM batch size")
    parser.add_argument("--no-ray", action="store_true", help="run `biorab run --no-ray`")
    parser.add_argument("--data-dir", help="the staged data (default: the project's)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    print(machine_line(), flush=True)
    out = args.keep or Path(tempfile.mkdtemp(prefix="bench-replay-"))
    out.mkdir(parents=True, exist_ok=True)
    ray_temp = tempfile.mkdtemp(prefix="rr-", dir="/tmp")  # Ray's unix socket paths are limited
    env = {**os.environ, "PYTHONPATH": str(REPO), "BIORAB_API_KEYS": KEY,
           "MLFLOW_TRACKING_URI": f"sqlite:///{out / 'mlflow.db'}"}
    try:
        config_path = out / "run.yaml"
        config = _config(out, args.batch_size)
        config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        data = ["--data-dir", args.data_dir] if args.data_dir else []
        start = time.monotonic()
        _cli(env, "run", str(config_path), *data, *(["--no-ray"] if args.no_ray else []))
        print(f"biorab run: {time.monotonic() - start:.0f} s", flush=True)
        run_dir = out / "runs" / "replay-bench"
        serve_path = out / "serve.yaml"
        _cli(env, "replay", str(run_dir), "--write-serve-config", str(serve_path))
        served = yaml.safe_load(serve_path.read_text(encoding="utf-8"))
        served["ray"] = {"num_cpus": 2, "object_store_memory": 300_000_000, "temp_dir": ray_temp}
        serve_path.write_text(yaml.safe_dump(served, sort_keys=False), encoding="utf-8")
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "biorab.cli.main", "serve", str(serve_path), "--port",
                                 str(port)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        try:
            _wait_ready(proc, timeout=600)
            start = time.monotonic()
            endpoint = f"http://127.0.0.1:{port}"
            done = _cli(env, "replay", str(run_dir), "--endpoint", endpoint, "--api-key", KEY)
            print(f"biorab replay: {time.monotonic() - start:.0f} s", flush=True)
            print(done.stdout)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
    finally:
        shutil.rmtree(ray_temp, ignore_errors=True)
        if args.keep is None:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
