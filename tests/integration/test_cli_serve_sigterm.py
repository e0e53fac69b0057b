"""`biorab serve` (fake backend, 3 s per batch) gets SIGTERM while it serves requests: it stops
admitting, lets the in-flight requests finish within graceful_shutdown_timeout_s, prints one account line
that agrees with what the clients got, and exits 143 without Ray's stack dump."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
import yaml

from tests.integration.test_cli_serve import REPO, _free_port
from tests.support.serving import wait_for_banner

pytestmark = [pytest.mark.slow, pytest.mark.full_data, pytest.mark.timeout(600)]
# 12 requests in flight take up to 4 batches of 3 s when they reach the generator spread out (on a
# loaded machine the first batch may hold one or two): the grace must hold all four.
GRACE_S = 20


def test_sigterm_under_load_drains_and_exits_143_with_one_line(tmp_path: Path, data_dir: Path) -> None:
    smoke = yaml.safe_load((REPO / "serve" / "smoke.yaml").read_text(encoding="utf-8"))
    ray_temp = tempfile.mkdtemp(prefix="rt-", dir="/tmp")  # Ray's unix socket paths are limited
    fake = {"name": "fake", "params": {"mode": "choice", "delay_s": 3.0}}
    smoke.update(data_dir=str(data_dir), backend=fake,
                 ray={"num_cpus": 2, "object_store_memory": 200_000_000, "temp_dir": ray_temp})
    smoke["deployments"]["ingress"]["graceful_shutdown_timeout_s"] = GRACE_S
    smoke["deployments"]["generator"].update(num_cpus=0.25, batch_wait_timeout_s=0.01, max_batch_size=8,
                                             max_ongoing_requests=16, max_queued_requests=16)
    config = tmp_path / "serve.yaml"
    config.write_text(yaml.safe_dump(smoke), encoding="utf-8")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "BIORAB_CACHE_DIR": str(tmp_path / "cache"),
           "BIORAB_API_KEYS": "sig-key"}
    cmd = [sys.executable, "-m", "biorab.cli.main", "serve", str(config), "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        wait_for_banner(proc, timeout=300)
        # Keep reading both pipes: Ray forwards the replicas' logs to them, and a full pipe blocks the log
        # thread `ray.shutdown()` joins (the stop would never end; seen with bench/serve_drain.py).
        err_lines: list[str] = []
        threading.Thread(target=proc.stdout.read if proc.stdout else None, daemon=True).start()
        reader = threading.Thread(target=lambda: err_lines.extend(proc.stderr or []), daemon=True)
        reader.start()
        url = f"http://127.0.0.1:{port}/v1/ral"

        def call(i: int) -> int | str:
            try:
                return requests.post(url, json={"input": f"in flight {i}"}, timeout=60,
                                     headers={"Authorization": "Bearer sig-key"}).status_code
            except requests.RequestException as e:
                return type(e).__name__

        with ThreadPoolExecutor(12) as pool:
            inflight = [pool.submit(call, i) for i in range(12)]
            time.sleep(1.5)  # in the ingress, the first batch generating (a request not yet in is refused)
            proc.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            time.sleep(0.3)
            late = pool.submit(call, 99)
            rc = proc.wait(timeout=GRACE_S + 60)
            took = time.monotonic() - signalled
            codes = [f.result() for f in inflight]
            late_code = late.result()
        reader.join(30)
        stderr = "".join(err_lines)
    finally:
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(ray_temp, ignore_errors=True)
    assert rc == 143, stderr[-3000:]
    assert took < GRACE_S + 5, took
    # In flight at the signal: finished (up to four batches of 3 s fit the grace); not yet admitted:
    # refused with 503, or (on a loaded machine, a request whose connection was not yet made) by the closed
    # port.
    assert set(codes) <= {200, 503, "ConnectionError"} and codes.count(200) >= 1, (codes, stderr[-6000:])
    assert late_code in (503, "ConnectionError"), late_code
    accounts = [ln for ln in stderr.splitlines() if ln.startswith("biorab serve: stopped on SIGTERM")]
    assert len(accounts) == 1, stderr[-3000:]
    print(f"{accounts[0]}  (exit {rc} {took:.1f} s after SIGTERM)")
    found = re.search(r"(\d+) in-flight request\(s\) finished, (\d+) dropped after .*, (\d+) refused",
                      accounts[0])
    assert found is not None, accounts[0]
    finished, dropped, refused = (int(g) for g in found.groups())
    assert (finished, dropped) == (codes.count(200), 0), accounts[0]
    assert refused == codes.count(503) + (late_code == 503), accounts[0]
    assert "PC: @" not in stderr and "Traceback" not in stderr and "SIGTERM received" not in stderr
