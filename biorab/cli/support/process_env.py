"""The environment every `biorab` process starts with, unless the user set the variable: applied by
the entry points (the CLI's `main`, `bench/pipeline.py`, `bench/profile_smoke.py`), never on import of the
library. `tests/conftest.py` still sets its own list for the test session."""

from __future__ import annotations

import os
import sys

#: Fail fast instead of ~70 s of hub retries, keep third-party telemetry and chatter off, and keep torch's
#: threads from spinning on a busy machine.
PROCESS_ENV_DEFAULTS: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "RAY_USAGE_STATS_ENABLED": "0",
    # No RAY_AUTH_MODE here: every local Ray gets token auth with a token of its own
    # (`pipelines.ray_auth.local_ray_token`), and joining a cluster uses the token the environment gives.
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "true",
    "TOKENIZERS_PARALLELISM": "false",
    "RAY_DATA_LOG_LEVEL": "WARNING",  # Ray Data logs every execution plan at INFO
    "MLFLOW_LOGGING_LEVEL": "WARNING",  # and MLflow every schema migration of a new store
    # An unreachable tracking server fails in seconds, not after minutes of retries (the results are on
    # disk first; `biorab track RUN_DIR` logs them later).
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "20",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    # torch's OpenMP threads sleep instead of spinning while they wait for each other. On a busy 2-core
    # machine a spinning thread burns its peer's time slice: the smoke job in-process took 232 s at load 3
    # with spinning and 50 s without; one busy neighbour made a batch 35 s instead of 20 s. On an idle
    # machine spinning is faster on local Ray (10-25% here; `OMP_WAIT_POLICY=ACTIVE` for a dedicated
    # machine, docs/pipeline.md round 5). Read once, when torch loads OpenMP: set before any import of
    # torch, and inherited by a local Ray's workers.
    "OMP_WAIT_POLICY": "PASSIVE",
    # Arrow allocates through the C library's malloc, not its bundled mimalloc: mimalloc kept the pages of
    # every cell's freed Parquet reads, so the driver's RSS grew with the rows a run had scored (issue 45;
    # measured in docs/sweeps.md "Measured here": 62 MiB more after four 2,000-row cells, 14 MiB with
    # malloc). Arrow reads it on import; `apply_process_env_defaults` switches an already imported one.
    "ARROW_DEFAULT_MEMORY_POOL": "system",
}


def apply_process_env_defaults() -> None:
    """Set every default the environment does not already set."""
    for key, value in PROCESS_ENV_DEFAULTS.items():
        os.environ.setdefault(key, value)
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL") == "system" and "pyarrow" in sys.modules:
        import pyarrow as pa  # imported before the variable was set: it read its pool already

        pa.set_memory_pool(pa.system_memory_pool())
