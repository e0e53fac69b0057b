"""A local Ray head started with ``ray start --head`` on free ports in its own temp dir, and stopped by
the PIDs of its own processes (never ``ray stop``, which would stop every Ray on a shared machine).

Why ``ray start`` once exited 1 in a full test run (issue 36): the nine component ports come from the
kernel's ephemeral range (32768-60999 on Linux), and the worker-port range was ``20000 + (pid % 400) *
100``, inside that range for most pids; a component port that fell into the worker range (~3% of runs
there) or two equal component ports make Ray refuse to start ("Ray component worker_ports is trying to use
a port number ... that is used by other components"). The ports are now distinct by construction (each
socket held until all are picked) and the worker range lies below the ephemeral range. What remains is the
race inherent in handing free ports to a child process (another process may bind one before Ray does): a
failed start is retried once on fresh ports and a temp dir of its own, with a warning that carries Ray's
output; a second failure raises with Ray's output and its log files' tails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import psutil

PORT_OPTIONS = ("--port", "--dashboard-port", "--ray-client-server-port", "--node-manager-port",
                "--object-manager-port", "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port",
                "--metrics-export-port", "--runtime-env-agent-port")


def free_ports(n: int) -> list[int]:
    """`n` distinct free ports: every socket stays bound until all are picked, so none repeats."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]


def ephemeral_low() -> int:
    """The lowest port the kernel hands out for ``bind(0)`` and outgoing connections."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default; elsewhere a guess


class LocalRayHead:
    """``with LocalRayHead(ray_exe, env) as head: head.dashboard_url``"""

    def __init__(self, ray_exe: str, env: dict[str, str], *, num_cpus: int = 2) -> None:
        self.ray_exe, self.env, self.num_cpus = ray_exe, env, num_cpus
        self.pids: set[int] = set()
        # A worker-port range of our own (per pid, so that heads of parallel sessions differ), below the
        # ephemeral range that the component ports come from: the two can never overlap.
        base = 10000 + (os.getpid() % max(1, (ephemeral_low() - 10000) // 100)) * 100
        self.worker_ports = range(base, base + 100)
        self._fresh()

    def _fresh(self) -> None:
        """A new temp dir and new ports (the first start, and the retry)."""
        # Short: Ray's Unix socket paths under the temp dir must stay under ~100 bytes.
        self.temp_dir = tempfile.mkdtemp(prefix="rbj-")
        ports = free_ports(len(PORT_OPTIONS))
        assert not set(ports) & set(self.worker_ports), (ports, self.worker_ports)
        self.ports = dict(zip(PORT_OPTIONS, ports, strict=True))
        self.dashboard_url = f"http://127.0.0.1:{self.ports['--dashboard-port']}"

    def _command(self) -> list[str]:
        return [self.ray_exe, "start", "--head", f"--num-cpus={self.num_cpus}", "--include-dashboard=true",
                "--dashboard-host=127.0.0.1", f"--temp-dir={self.temp_dir}", "--disable-usage-stats",
                f"--min-worker-port={self.worker_ports[0]}", f"--max-worker-port={self.worker_ports[-1]}",
                *[f"{option}={port}" for option, port in self.ports.items()]]

    def __enter__(self) -> LocalRayHead:
        first = self._start()
        if first is None:
            return self
        warnings.warn(f"`ray start --head` failed once; retried on fresh ports. {first}", stacklevel=2)
        self._stop()
        self._fresh()
        second = self._start()
        if second is not None:
            self._stop()
            raise RuntimeError(f"`ray start --head` failed twice.\nFirst: {first}\nSecond: {second}")
        return self

    def _start(self) -> str | None:
        """Start the head; None when it started, else what Ray said (its output and its logs' tails)."""
        cmd = self._command()
        try:
            subprocess.run(cmd, env=self.env, check=True, capture_output=True, text=True, timeout=180)
            return None
        except subprocess.CalledProcessError as e:
            return (f"{' '.join(cmd)} exited {e.returncode}.\nstdout:\n{e.stdout[-3000:]}\nstderr:\n"
                    f"{e.stderr[-3000:]}{self._log_tails()}")
        except subprocess.TimeoutExpired as e:
            return f"{' '.join(cmd)} timed out after {e.timeout} s.{self._log_tails()}"
        finally:
            self.pids |= self.own_pids()

    def _log_tails(self) -> str:
        """The last lines of Ray's non-empty ``*.err`` logs of this head (GCS, raylet, dashboard...)."""
        out = []
        for path in sorted(Path(self.temp_dir).glob("session_*/logs/*.err"))[:8]:
            text = path.read_text(errors="replace")[-1500:]
            if text.strip():
                out.append(f"\n--- {path.name}:\n{text}")
        return "".join(out)

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
        self._stop()

    def _stop(self) -> None:
        self.pids |= self.own_pids()
        for pid in self.pids:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(psutil.pid_exists(p) for p in self.pids):
            time.sleep(0.3)
        for pid in self.pids:
            _signal(pid, signal.SIGKILL)
        self.pids = set()
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)
