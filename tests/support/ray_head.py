"""A local Ray head started with ``ray start --head`` on free ports in its own temp dir, and stopped by
the PIDs of its own processes (never ``ray stop``, which would stop every Ray on a shared machine)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import psutil

PORT_OPTIONS = ("--port", "--dashboard-port", "--ray-client-server-port", "--node-manager-port",
                "--object-manager-port", "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port",
                "--metrics-export-port", "--runtime-env-agent-port")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalRayHead:
    """``with LocalRayHead(ray_exe, env) as head: head.dashboard_url``"""

    def __init__(self, ray_exe: str, env: dict[str, str], *, num_cpus: int = 2) -> None:
        self.ray_exe, self.env, self.num_cpus = ray_exe, env, num_cpus
        # Short: Ray's Unix socket paths under the temp dir must stay under ~100 bytes.
        self.temp_dir = tempfile.mkdtemp(prefix="rbj-")
        self.ports = {option: free_port() for option in PORT_OPTIONS}
        self.dashboard_url = f"http://127.0.0.1:{self.ports['--dashboard-port']}"
        self.pids: set[int] = set()

    def __enter__(self) -> LocalRayHead:
        base = 20000 + (os.getpid() % 400) * 100  # a worker-port range of our own
        cmd = [self.ray_exe, "start", "--head", f"--num-cpus={self.num_cpus}", "--include-dashboard=true",
               "--dashboard-host=127.0.0.1", f"--temp-dir={self.temp_dir}", "--disable-usage-stats",
               f"--min-worker-port={base}", f"--max-worker-port={base + 99}",
               *[f"{option}={port}" for option, port in self.ports.items()]]
        try:
            subprocess.run(cmd, env=self.env, check=True, capture_output=True, text=True, timeout=180)
        finally:
            self.pids |= self.own_pids()
        return self

    def own_pids(self) -> set[int]:
        """Processes whose command line names our temp dir (GCS, raylet, dashboard, agents) and every
        descendant of theirs (workers, the job supervisor, the job's driver)."""
        roots = []
        for proc in psutil.process_iter(["cmdline"]):
            if any(self.temp_dir in arg for arg in proc.info["cmdline"] or ()):
                roots.append(proc)
        found = set()
        for proc in roots:
            try:
                found |= {proc.pid, *(child.pid for child in proc.children(recursive=True))}
            except psutil.NoSuchProcess:
                continue
        return found

    def __exit__(self, *exc: object) -> None:
        self.pids |= self.own_pids()
        for pid in self.pids:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(psutil.pid_exists(p) for p in self.pids):
            time.sleep(0.3)
        for pid in self.pids:
            _signal(pid, signal.SIGKILL)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)
