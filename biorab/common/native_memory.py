"""Hand freed native memory back to the operating system (glibc's `malloc_trim`).

torch's CPU tensors come from the C library's malloc. An encoder's forward pass frees hundreds of MiB of
activations per batch, and glibc keeps most of it in its heap, fragmented by the next batch's other
shapes: MiniLM encoding 3,000 test queries in batches of 64 left the process 418-460 MiB larger than
before it started, and more the more queries it had encoded (issue 45: the driver's peak RSS grew with a
sweep's rows). Trimming after each batch left it 97 MiB larger, at the same CPU time (docs/sweeps.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from functools import cache


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or ``None`` on a C library without it (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_free_memory() -> bool:
    """Return the C heap's free pages to the OS; ``True`` when some were released, ``False`` when none
    were or the C library cannot (a no-op there)."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
