"""Starting or joining Ray: `start_ray` for every command that needs one (`biorab run` and the sweeps through
`init_ray`, `biorab serve`, the tune jobs), each asking for its own options."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from biorab.common.params import Params
from biorab.experiment import ResourcesConfig
from pipelines.ray_auth import local_ray_token


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


def start_ray(settings: RaySettings, *, fresh: bool = False, reaper: bool = False, quiet: bool = False,
              worker_logs: Literal["always", "joined", "never"] = "always", train_dashboard: bool = False,
              env_vars: Mapping[str, str] | None = None, workers_kept: int | None = None) -> bool:
    """Join the cluster at `settings.address`, or start a local Ray of `settings`' size; returns whether
    this call did either (``False``: Ray was up already, and is left as it is).

    Joining passes no resources (Ray refuses ``num_cpus`` or an object store size for an existing cluster:
    the cluster already has them). A local Ray has no dashboard and a capped object store
    (docs/notes/ray_on_small_machines.md), its session files in `settings.temp_dir` (``None``: Ray's own).
    A local Ray has Ray's token auth on, its token in a ``0600`` file under `settings.temp_dir`
    (`pipelines.ray_auth.local_ray_token`: nothing under ``$HOME``; ``RAY_AUTH_MODE=disabled`` set by the
    user turns it off). Joining uses the token the environment gives (``$RAY_AUTH_TOKEN[_PATH]``). Usage
    stats are turned off by the environment the edge sets (``RAY_USAGE_STATS_ENABLED=0``), never here.

    Args:
        fresh: a new local Ray even where a ``ray start`` runs on this machine (``address="local"``).
        reaper: end the local Ray's processes if this driver is killed (`start_reaper`).
        quiet: Ray's own driver-side log at WARNING.
        worker_logs: where the workers' output is printed by the driver: ``always``, only when ``joined``
            to a cluster, or ``never``.
        train_dashboard: the local Ray that Ray Train's placement-group cleanup needs (`_train_local`).
        env_vars: the workers' environment (``runtime_env``).
        workers_kept: a local Ray's raylet keeps this many worker processes, idle ones included (Ray's
            ``num_workers_soft_limit``; ``None``: Ray's default, the node's CPUs). Ignored when joining.
    """
    import ray

    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"logging_level": logging.WARNING} if quiet else {}
    if env_vars is not None:
        options["runtime_env"] = {"env_vars": dict(env_vars)}
    if settings.address:
        if worker_logs == "never":
            options["log_to_driver"] = False
        ray.init(address=settings.address, **options)
        return True
    if worker_logs != "always":
        options["log_to_driver"] = False
    local: dict[str, Any] = {"num_cpus": settings.num_cpus,
                             "object_store_memory": settings.object_store_memory,
                             "_temp_dir": settings.temp_dir, **({"address": "local"} if fresh else {})}
    if workers_kept is not None:
        local["_system_config"] = {"num_workers_soft_limit": workers_kept}
    local_ray_token(settings.temp_dir)
    if train_dashboard:
        _train_local(local, options)
    else:
        ray.init(include_dashboard=False, **local, **options)
    if reaper:
        start_reaper()
    return True


def _train_local(local: dict[str, Any], options: dict[str, Any]) -> None:
    import ray

    # When a trial's function returns, Tune ends its actor and the Train controller it owns; the worker
    # group's placement group is then removed by Train's placement-group cleaner, through the state API.
    # That API needs the dashboard, and it resolves "auto", which fails when other Ray instances run on the
    # machine ("Found multiple active Ray instances"). Without both, each finished trial leaked its CPUs
    # and the next trial waited forever. So: a loopback dashboard on a free port, and the local GCS port
    # chosen here and handed to every worker as RAY_ADDRESS.
    port = _free_port()
    address = f"{ray.util.get_node_ip_address()}:{port}"
    env = {**options.get("runtime_env", {}).get("env_vars", {}), "RAY_ADDRESS": address}
    previous = os.environ.get("RAY_GCS_SERVER_PORT")
    os.environ["RAY_GCS_SERVER_PORT"] = str(port)
    try:
        ray.init(include_dashboard=True, dashboard_host="127.0.0.1", dashboard_port=_free_port(), **local,
                 **{**options, "runtime_env": {"env_vars": env}})
    finally:
        if previous is None:
            del os.environ["RAY_GCS_SERVER_PORT"]
        else:
            os.environ["RAY_GCS_SERVER_PORT"] = previous


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


#: The actors Ray Data starts for every execution beside the pipeline's own pools (Ray 2.60:
#: ActorLocationTracker, _AutoscalingCoordinatorActor, _StatsActor), each in a worker process of its own.
RAY_DATA_ACTORS = 3


def pipeline_workers(resources: ResourcesConfig) -> int:
    """The worker processes a pipeline run keeps alive: its actor pools, Ray Data's own actors, and one
    task worker per logical CPU.

    Ray counts actors' processes against its idle-worker limit (by default the node's CPUs), so on a small
    local Ray every idle task worker was killed after a second while the LLM actor generated, and the next
    render or parse task paid for a new Python process (~2.5 CPU s: import ray, Ray Data, pyarrow,
    biorab): the smoke job started 4 task workers, 2 when kept (docs/pipeline.md, issue 20 round 3)."""
    return (resources.retrieval.pool_size + resources.llm.pool_size + RAY_DATA_ACTORS
            + resources.num_cpus)


def init_ray(resources: ResourcesConfig) -> bool:
    """`start_ray` for a pipeline run: the cluster of `cluster_address`, or a small local Ray (session files
    under `short_temp_dir`, reaped if the driver is killed, keeping `pipeline_workers` processes), printing
    neither Ray's logs below WARNING nor the workers' output; returns whether this call started or joined
    it."""
    import ray

    settings = RaySettings(address=cluster_address(resources), num_cpus=resources.num_cpus,
                           object_store_memory=resources.object_store_memory,
                           temp_dir=resources.temp_dir or short_temp_dir())
    if not start_ray(settings, reaper=True, quiet=True, worker_logs="never",
                     workers_kept=pipeline_workers(resources)):
        return False
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
