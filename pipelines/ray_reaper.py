"""Ends the processes of a local Ray when the driver that started it is gone.

A ``kill -9`` of a driver that started a local Ray takes the GCS and the raylet down within seconds, but
two of the raylet's children (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``) then wait about 60 s on a
call to the dead GCS with a timeout Ray hard-codes (docs/reliability.md). This watcher, started by
`pipelines.ray_setup.init_ray` only for a Ray it started itself (never for a cluster it joined), remembers
the driver's Ray descendants while the driver lives (they are re-parented to init once the raylet dies,
so they must be known before), and kills those still alive once the driver has exited. A process is
killed only if its PID and start time both match what was seen, so a reused PID is never hit.

    python -m pipelines.ray_reaper DRIVER_PID
"""

from __future__ import annotations

import os
import sys
import time

import psutil

POLL_S = 1.0


def is_ray_process(proc: psutil.Process) -> bool:
    """A Ray process: the GCS, the raylet, Ray's agents and monitors, and workers (``ray::...``)."""
    try:
        return "ray" in " ".join(proc.cmdline()).lower()
    except psutil.Error:
        return False


def ray_descendants(driver: psutil.Process) -> dict[int, float]:
    """PID → start time of the driver's Ray descendants (this watcher excluded)."""
    found: dict[int, float] = {}
    try:
        children = driver.children(recursive=True)
    except psutil.Error:
        return found
    for proc in children:
        if proc.pid == os.getpid() or not is_ray_process(proc):
            continue
        try:
            found[proc.pid] = proc.create_time()
        except psutil.Error:
            continue
    return found


def alive(driver: psutil.Process) -> bool:
    try:
        return driver.is_running() and driver.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def reap(known: dict[int, float]) -> list[int]:
    """Kill the remembered processes that are still the ones remembered; returns their PIDs."""
    killed = []
    for pid, started in known.items():
        try:
            proc = psutil.Process(pid)
            if proc.create_time() == started:
                proc.kill()
                killed.append(pid)
        except psutil.Error:
            continue
    return killed


def watch(driver_pid: int, poll_s: float = POLL_S) -> list[int]:
    """Remember the driver's Ray descendants until it exits, then reap them."""
    try:
        driver = psutil.Process(driver_pid)
    except psutil.Error:
        return []
    known: dict[int, float] = {}
    while alive(driver):
        known.update(ray_descendants(driver))
        time.sleep(poll_s)
    return reap(known)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit():
        print("usage: python -m pipelines.ray_reaper DRIVER_PID", file=sys.stderr)
        return 2
    watch(int(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
