"""`mlflow ui` on a local store for the browser tests: loopback, one worker, no job runner (see the stack
notes: the job runner adds 7 processes and ~2 GB, and leaves orphans on SIGTERM), in its own process group,
which is killed on exit."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MlflowUI:
    """``with MlflowUI("sqlite:///.../mlflow.db", log) as url:``: the UI's base URL once ``/health``
    answers."""

    def __init__(self, store_uri: str, log: Path, *, timeout: float = 120.0) -> None:
        self.store_uri, self.log, self.timeout = store_uri, log, timeout
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> str:
        env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
               "MLFLOW_DISABLE_TELEMETRY": "true"}
        mlflow = Path(sys.executable).with_name("mlflow")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [str(mlflow), "ui", "--host", "127.0.0.1", "--port", str(self.port), "--workers", "1",
                 "--backend-store-uri", self.store_uri], stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True)
        url = f"http://127.0.0.1:{self.port}"
        try:
            self._wait_healthy(url)
        except BaseException:
            self.close()
            raise
        return url

    def _wait_healthy(self, url: str) -> None:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"mlflow ui exited ({self.proc.returncode}): "
                                   f"{self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"mlflow ui not healthy after {self.timeout:.0f} s: "
                           f"{self.log.read_text()[-2000:]}")

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        except ProcessLookupError:
            pass
