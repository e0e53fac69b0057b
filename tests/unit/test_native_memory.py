"""`release_free_memory` hands the C heap's free pages back to the OS (glibc), measured in a fresh process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from biorab.common.native_memory import _malloc_trim

# 4 KiB bytearrays come from malloc (pymalloc serves only up to 512 bytes); freeing all but the last one
# leaves ~200 MiB free inside the heap, below a live block, where a plain free cannot shrink it.
SCRIPT = """
import json, psutil
from biorab.common.native_memory import release_free_memory
me = psutil.Process()
base = me.memory_info().rss
blocks = [bytearray(4096) for _ in range(51_200)]
last = blocks[-1]
del blocks
after_free = me.memory_info().rss
released = release_free_memory()
after_trim = me.memory_info().rss
print(json.dumps({"base": base, "after_free": after_free, "after_trim": after_trim, "released": released}))
"""


@pytest.mark.skipif(_malloc_trim() is None, reason="the C library has no malloc_trim (not glibc)")
def test_freed_heap_pages_go_back_to_the_os() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    m = json.loads(out.stdout)
    mib = 1 << 20
    assert m["after_free"] - m["base"] > 150 * mib  # glibc kept the freed blocks (200 MiB of them)
    assert m["released"] is True
    assert m["after_free"] - m["after_trim"] > 150 * mib  # and the trim gave them back

