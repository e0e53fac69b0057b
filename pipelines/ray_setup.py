"""Starting or joining Ray for a pipeline run."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from biorab.experiment import ResourcesConfig


def short_temp_dir() -> str:
    """A short per-user temp dir for the local Ray (its Unix socket paths must stay under ~100 bytes)."""
    path = Path(tempfile.gettempdir()) / f"rb-{os.getuid()}"
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def init_ray(resources: ResourcesConfig) -> bool:
    """Connect to `resources.address`, or start a small local Ray; returns whether this call did either.

    The local default disables the dashboard and caps the object store
    (docs/notes/ray_on_small_machines.md). Token auth (Ray 2.60 would write ``$HOME/.ray/auth_token``)
    and usage stats are turned off by the environment the edge sets (``RAY_AUTH_MODE=disabled``,
    ``RAY_USAGE_STATS_ENABLED=0``: the CLI's defaults), never by this library.
    """
    import ray

    if ray.is_initialized():
        return False
    if resources.address:
        ray.init(address=resources.address, log_to_driver=False)
    else:
        ray.init(
            num_cpus=resources.num_cpus,
            include_dashboard=False,
            object_store_memory=resources.object_store_memory,
            _temp_dir=resources.temp_dir or short_temp_dir(),
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    # Ray Data logs every execution plan at INFO; `biorab run` shows its own progress instead.
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False  # `biorab run` draws its own bar
    return True
