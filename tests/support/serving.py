"""What the module-scoped Serve fixtures share: a free loopback port and the staged data folder (a
module-scoped server cannot use the function-scoped ``data_dir`` fixture)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def staged_data() -> Path:
    """The full staged BioRAB data (``$BIORAB_DATA_DIR`` or ``../shared/data/biorab``); a failure when
    missing, as for every ``full_data`` test."""
    env = os.environ.get("BIORAB_DATA_DIR")
    path = Path(env) if env else REPO.parent / "shared" / "data" / "biorab"
    if not path.is_dir():
        pytest.fail(f"full_data test: {path} not found; stage ../shared/data or set BIORAB_DATA_DIR")
    return path


#: The last line of `biorab serve`'s banner: the server is ready.
READY_LINE = "Ctrl-C (or SIGTERM) stops the server."


def wait_for_banner(proc: subprocess.Popen[str], timeout: float) -> str:
    """`biorab serve`'s banner, read from `proc`'s stdout until its last line (the server is ready); the
    process is killed and the test fails with what it printed when it does not come within `timeout`."""
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        lines.append(line)
        if line.startswith(READY_LINE):
            return "".join(lines)
    proc.kill()
    stderr = proc.stderr.read()[-6000:] if proc.stderr is not None and proc.poll() is not None else ""
    raise AssertionError(f"no banner (rc={proc.poll()}):\n{''.join(lines)}\nstderr:\n{stderr}")


def stop_server(proc: subprocess.Popen[str], timeout: float = 60) -> None:
    """Stop a `biorab serve` process as an orchestrator would (SIGTERM: it drains and stops its Ray), and
    kill it when it has not exited within `timeout`."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


def smollm2_loras(folder: Path) -> tuple[Path, Path]:
    """Two tiny LoRA adapters (different seeds, random non-zero B) on the packaged SmolLM2, for tests of
    several adapters on one engine."""
    from biorab.generation.model_source import resolve_model
    from tests.support.tiny_causal_lm import build_tiny_lora

    base = Path(resolve_model("smollm2").location)
    return build_tiny_lora(base, folder / "lora-a", seed=1), build_tiny_lora(base, folder / "lora-b", seed=2)
