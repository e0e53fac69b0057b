"""`biorab serve` (fake backend) with nothing about Ray's auth in its environment: its local Ray has token
auth with a token of its own, so while it serves, no port of its Ray runs a job or answers a control call
without the token; the token is a 0600 file in the command's temp dir (nothing under $HOME); the plaintext
API key never reaches a Ray process; the Serve app still answers with the key.

Every listening TCP socket of the command's process tree is probed (what ``ss -ltnp`` lists for it): an
HTTP job submission to each, and a read-only call of each Ray gRPC control service. Each probe is also made
with the token, and must then succeed somewhere, so a refusal cannot come from a probe that never reaches
Ray."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from tests.integration.test_cli_serve import REPO, _free_port
from tests.support import ray_ports
from tests.support.ray_ports import Listener
from tests.support.serving import stop_server, wait_for_banner

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

KEY = "plain-key-never-in-ray-9f3c"


def test_serve_ray_refuses_jobs_and_control_calls_without_the_token(tmp_path: Path, data_dir: Path) -> None:
    smoke = yaml.safe_load((REPO / "serve" / "smoke.yaml").read_text(encoding="utf-8"))
    smoke.update(data_dir=str(data_dir), backend={"name": "fake", "params": {"mode": "choice"}},
                 ray={"num_cpus": 2, "object_store_memory": 200_000_000})  # temp dir: the command's own
    smoke["deployments"]["generator"]["num_cpus"] = 0.25
    config = tmp_path / "serve.yaml"
    config.write_text(yaml.safe_dump(smoke), encoding="utf-8")
    short_tmp = tempfile.mkdtemp(prefix="rs-", dir="/tmp")  # Ray's unix socket paths are limited
    home = tmp_path / "home"
    home.mkdir()
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "BIORAB_CACHE_DIR": str(tmp_path / "cache"),
           "BIORAB_API_KEYS": KEY, "TMPDIR": short_tmp, "HOME": str(home)}
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):  # the command's own choice
        env.pop(name, None)
    cmd = [sys.executable, "-m", "biorab.cli.main", "serve", str(config), "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        wait_for_banner(proc, timeout=300)
        (token_file,) = Path(short_tmp).glob("biorab-ray-*/auth-*/auth_token")
        token = token_file.read_text(encoding="ascii")
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and len(token) == 64
        assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700

        from openai import OpenAI

        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, max_retries=0, timeout=120)
        answer = client.chat.completions.create(model="biorab-smoke", messages=[
            {"role": "user", "content": "Severe rash after methotrexate."}])
        assert answer.choices[0].message.content

        pids = ray_ports.tree(proc.pid)
        ports = [lst for lst in ray_ports.listeners(pids) if lst.port != port]
        assert len({lst.port for lst in ports}) >= 5, ports  # GCS, raylet x2, agent, a worker at least
        bearer = {"Authorization": f"Bearer {token}"}
        refused: dict[int, int] = {}
        accepted: dict[int, int | None] = {}
        metrics, grpc_refused, grpc_ok = set(), set(), set()
        probes: dict[Listener, tuple[dict[str, str], dict[str, str]]] = {}
        for lst in ports:
            host = ray_ports.reach(lst)
            status = ray_ports.http_job_submission(host, lst.port, {})
            if status is not None:
                refused[lst.port] = status
                accepted[lst.port] = ray_ports.http_job_submission(host, lst.port, bearer)
                metrics |= {lst.port} if ray_ports.serves_metrics(host, lst.port) else set()
                continue
            without = ray_ports.grpc_codes(host, lst.port, None)
            with_token = ray_ports.grpc_codes(host, lst.port, token)
            probes[lst] = (without, with_token)
            assert "OK" not in without.values(), (lst, without)
            guarded = {m for m, code in without.items() if code == "UNAUTHENTICATED"}
            grpc_refused |= {lst.port} if guarded else set()
            # The same calls with the token pass the check (OK, or the service's own error on an empty
            # request), so the refusal above came from Ray's auth and nothing else.
            passed = guarded and all(with_token[m] != "UNAUTHENTICATED" for m in guarded)
            grpc_ok |= {lst.port} if passed else set()

        # The job agent (52365 unless taken) and the runtime-env agent (on the node's IP) refuse a job
        # submission without the token; every other HTTP port is a Prometheus endpoint (read-only
        # metrics; no POST, so no job either).
        control = set(refused) - metrics
        assert control and all(refused[p] == 401 for p in control), (refused, metrics, ports)
        assert all(refused[p] >= 400 and (accepted[p] or 0) >= 400 for p in metrics), (refused, accepted)
        # With the token the same request passes the auth check (200, or 404 where this agent runs no job
        # module: Ray without the dashboard).
        assert all(accepted[p] in (200, 404) for p in control), accepted
        # Every gRPC port refused every control call without the token and took one with it.
        grpc_ports = {lst.port for lst in ports} - set(refused)
        assert grpc_ports and grpc_refused == grpc_ports == grpc_ok, probes

        # Only digests reach Ray: no Ray process has the plaintext key in its environment (the command's
        # own process had it from its caller; /proc shows the environment it started with).
        for pid in pids - {proc.pid}:
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes()
            except (FileNotFoundError, ProcessLookupError):
                continue
            assert KEY.encode() not in environ, pid
        assert not (home / ".ray").exists()  # Ray wrote no token under $HOME
    finally:
        stop_server(proc)
        shutil.rmtree(short_tmp, ignore_errors=True)
