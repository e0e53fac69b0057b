"""What the bench scripts of the serving stack share: the machine line printed before any timing (CPU
flags, cores, load: a shared machine's timings vary) and a free loopback port."""

from __future__ import annotations

import os
import socket


def machine_line() -> str:
    """``CPU: N cores; flags: ...; load average L`` (the flags that decide the dtype story)."""
    from biorab.generation.dtype import cpu_flags

    shown = " ".join(sorted(f for f in cpu_flags() if f in {"avx2", "avx512f", "avx512_bf16", "amx_tile"}))
    return f"CPU: {os.cpu_count()} cores; flags: {shown}; load average {os.getloadavg()[0]:.1f}"


def free_port() -> int:
    """A port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
