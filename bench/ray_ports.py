"""Which ports a running `biorab serve` (fake backend) listens on, and what each answers without Ray's token:
the table of docs/serve.md "Security".

    PYTHONPATH=. .venv/bin/python bench/ray_ports.py            # as `biorab serve` runs: token auth on
    PYTHONPATH=. .venv/bin/python bench/ray_ports.py --before   # RAY_AUTH_MODE=disabled (what main set)

For each listening TCP socket of the command's process tree (what ``ss -ltnp`` shows for it): an HTTP job
submission without the token (``POST /api/job_agent/jobs/``, then ``/api/jobs/``), ``GET /metrics``, and
one read-only call of each Ray gRPC service (tests/support/ray_ports.py), without and with the token.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support import ray_ports  # noqa: E402
from tests.support.serving import free_port, staged_data, stop_server, wait_for_banner  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", action="store_true", help="RAY_AUTH_MODE=disabled (no token)")
    args = parser.parse_args()
    smoke = yaml.safe_load((REPO / "serve" / "smoke.yaml").read_text(encoding="utf-8"))
    smoke.update(data_dir=str(staged_data()), backend={"name": "fake", "params": {"mode": "choice"}},
                 ray={"num_cpus": 2, "object_store_memory": 200_000_000})
    short_tmp = tempfile.mkdtemp(prefix="rp-", dir="/tmp")
    config = Path(short_tmp) / "serve.yaml"
    config.write_text(yaml.safe_dump(smoke), encoding="utf-8")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "BIORAB_API_KEYS": "bench-key", "TMPDIR": short_tmp}
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        env.pop(name, None)
    if args.before:
        env["RAY_AUTH_MODE"] = "disabled"
    cmd = [sys.executable, "-m", "biorab.cli.main", "serve", str(config), "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, cwd=short_tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        wait_for_banner(proc, timeout=300)
        tokens = list(Path(short_tmp).glob("biorab-ray-*/auth-*/auth_token"))
        token = tokens[0].read_text(encoding="ascii") if tokens else None
        print(f"# {platform.platform()}, {os.cpu_count()} CPUs; token auth: {'on' if token else 'off'}")
        print("| bind | port | process | HTTP job POST (no token) | GET /metrics | gRPC without token "
              "| with |")
        print("|---|---|---|---|---|---|---|")
        for lst in ray_ports.listeners(ray_ports.tree(proc.pid)):
            host = ray_ports.reach(lst)
            if lst.port == port:
                print(f"| {lst.host} | {lst.port} | {lst.process} | (the app: API key) | | | |")
                continue
            status = ray_ports.http_job_submission(host, lst.port, {})
            metrics = ray_ports.serves_metrics(host, lst.port)
            without, with_token = ("", "")
            if status is None:
                codes = ray_ports.grpc_codes(host, lst.port, None)
                token_codes = ray_ports.grpc_codes(host, lst.port, token)
                served = [m for m, c in token_codes.items() if c != "UNIMPLEMENTED"]
                without = ", ".join(sorted({f"{m.rsplit('/', 2)[1]}: {codes[m]}" for m in served}))
                with_token = ", ".join(sorted({f"{token_codes[m]}" for m in served}))
            print(f"| {lst.host} | {lst.port} | {lst.process} | {status if status is not None else '-'} | "
                  f"{'200 metrics' if metrics else '-'} | {without} | {with_token} |")
    finally:
        stop_server(proc)
        shutil.rmtree(short_tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
