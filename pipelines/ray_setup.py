"""Starting or joining Ray for a pipeline run."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from pydantic import Field

from biorab.experiment import ResourcesConfig
from biorab.params import Params


class RaySettings(Params):
    """The Ray a command runs on, in the ``ray:`` block of a serve or tune config: a running cluster's
    ``address`` (``auto``), or a local Ray of `num_cpus` logical CPUs, an `object_store_memory`-byte object
    store and its session files under `temp_dir` (``None``: a fresh folder in the temp dir)."""

    address: str | None = None
    num_cpus: int = Field(default=2, ge=1)
    object_store_memory: int = Field(default=500_000_000, ge=78_643_200)
    temp_dir: str | None = None


# The reaper watching this process (one per driver, however many local Rays it starts in turn).
_REAPER: dict[int, subprocess.Popen[bytes]] = {}


def short_temp_dir() -> str:
    """A short per-user temp dir for the local Ray (its Unix socket paths must stay under ~100 bytes)."""
    path = Path(tempfile.gettempdir()) / f"rb-{os.getuid()}"
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def cluster_address(resources: ResourcesConfig) -> str | None:
    """The cluster to join: `resources.address`, else ``$RAY_ADDRESS`` (Ray sets it for every job that
    ``ray job submit`` starts), else None (start a local Ray).

    An ``http(s)://`` address is a dashboard, the one ``ray job submit`` talks to; a driver cannot
    connect to it, and a driver started on that machine joins the local cluster with ``auto``.
    """
    address = resources.address or os.environ.get("RAY_ADDRESS") or None
    if address and address.startswith(("http://", "https://")):
        return "auto"
    return address


def init_ray(resources: ResourcesConfig) -> bool:
    """Join the cluster of `cluster_address`, or start a small local Ray; returns whether this call did
    either.

    Joining passes no resources (Ray refuses ``num_cpus`` or an object store size for an existing
    cluster: the cluster already has them). The local default disables the dashboard and caps the object
    store (docs/notes/ray_on_small_machines.md). Token auth (Ray 2.60 would write ``$HOME/.ray/auth_token``)
    and usage stats are turned off by the environment the edge sets (``RAY_AUTH_MODE=disabled``,
    ``RAY_USAGE_STATS_ENABLED=0``: the CLI's defaults), never by this library.
    """
    import ray

    if ray.is_initialized():
        return False
    address = cluster_address(resources)
    if address:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    else:
        ray.init(
            num_cpus=resources.num_cpus,
            include_dashboard=False,
            object_store_memory=resources.object_store_memory,
            _temp_dir=resources.temp_dir or short_temp_dir(),
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
        start_reaper()
    # Ray Data logs every execution plan at INFO; `biorab run` shows its own progress instead.
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False  # `biorab run` draws its own bar
    return True


def start_reaper() -> None:
    """Start `pipelines.ray_reaper` for this driver (once): if the driver is killed, it ends the local
    Ray's processes that would otherwise outlive it by about a minute. In a session of its own, so a
    signal to the driver's process group does not take it down before it has reaped."""
    pid = os.getpid()
    running = _REAPER.get(pid)
    if running is not None and running.poll() is None:
        return
    _REAPER[pid] = subprocess.Popen(
        [sys.executable, "-m", "pipelines.ray_reaper", str(pid)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
