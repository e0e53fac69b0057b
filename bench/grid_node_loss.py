"""Faults at the paper grid's size: a rehearsal that loses a worker node, or is stopped by SIGTERM or
Ctrl-C, ends as an undisturbed rehearsal does (issue 45 item 4).

Every fault is compared with one undisturbed rehearsal, ``biorab sweep SWEEP --rehearse --limit N --no-ray``
(``--reference DIR`` reuses one). The comparison is by files: the sweep's report (``<sweep>/report/``)
and every scored row of every cell, with the columns that say *when* or *how*
a row was made dropped (``written_at``, ``attempt``, the ``*_cached`` flags, ``gen_batch_size``: Ray and the
in-process executor cut batches differently); everything else, prompts, hits, generations and parsed
answers included, must be equal; and ``report.md`` / ``report.html`` byte for byte but for the sweep
folder's own path (the report names the folder its explorer is written from).

``--fault node-loss``: a local two-node Ray cluster (`ray.cluster_utils.Cluster`, head and worker on this
machine, 2 CPUs each, Ray's token auth on as the CLI turns it on for a local Ray:
`pipelines.ray_auth.local_ray_token`), the rehearsed sweep pointed at it (`resources.address`; the pools
fit the head alone, so a lost worker slows the sweep and never strands it), and the worker node removed
without a graceful shutdown (every process of the node SIGKILLed) once ``--after-runs`` runs have finished
and the next run has written rows. The sweep must end 0.

``--fault sigterm`` / ``--fault sigint``: ``biorab sweep SWEEP --rehearse`` on its own local Ray, sent the
signal once ``--after-runs`` runs have finished and the next has written rows; it must end 143 / 130 with one
line on stderr and no traceback, leave no MLflow run RUNNING in the rehearsal's store, and the same
command then resumes to 0 with the same files as the reference.

    python bench/grid_node_loss.py jobs/paper.yaml --limit 2 --fault node-loss --out gnl
    python bench/grid_node_loss.py jobs/paper.yaml --limit 2 --fault sigterm --reference gnl/ref

It prints the CPU flags, core count and load average first, and one JSON object last.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.explorer import machine  # noqa: E402  (CPU flags, cores, load: one place)

#: Row columns that record when or how a row was made, not what it is (see the module docstring).
VOLATILE = frozenset({"written_at", "attempt", "retrieval_cached", "gen_cached", "probe_gen_cached",
                      "gen_batch_size"})


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "biorab.cli.main", *args]


def base_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env.update(PYTHONPATH=str(REPO), BIORAB_CACHE_DIR=str(cache), HF_HUB_OFFLINE="1")
    return env


def reference(sweep: Path, limit: int, out: Path) -> tuple[Path, float]:
    """The undisturbed rehearsal (in-process executor), its sweep folder and wall time."""
    start = time.perf_counter()
    done = subprocess.run(cli("sweep", str(sweep), "--rehearse", "--limit", str(limit), "--no-ray",
                              "--output-dir", str(out / "reh")), cwd=REPO, env=base_env(out / "cache"),
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the reference rehearsal failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return sweep_dir(out / "reh", sweep), time.perf_counter() - start


def sweep_dir(root: Path, sweep: Path) -> Path:
    return root.resolve() / yaml.safe_load(sweep.read_text(encoding="utf-8"))["name"]


def scored_rows(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Every cell's rows (by run/cell id, in slice order), volatile columns dropped."""
    from biorab.runner.store.shards import read_all_rows

    out = {}
    for cell_dir in sorted(folder.glob("*/cells/*")):
        if not cell_dir.is_dir():
            continue
        rows = sorted(read_all_rows(cell_dir), key=lambda r: r["order"])
        out[f"{cell_dir.parent.parent.name}/{cell_dir.name}"] = [
            {k: v for k, v in r.items() if k not in VOLATILE} for r in rows]
    return out


def compare(got: Path, want: Path) -> dict[str, Any]:
    """The files an undisturbed rehearsal and a disturbed one must share (see the module docstring)."""
    rows_got, rows_want = scored_rows(got), scored_rows(want)
    differing = sorted(k for k in rows_got.keys() | rows_want.keys() if rows_got.get(k) != rows_want.get(k))
    reports = {name: (text := report_text(got, name)) is not None and text == report_text(want, name)
               for name in ("report.md", "report.html")}
    return {"cells": len(rows_want), "rows": sum(len(v) for v in rows_want.values()),
            "cells_differing": differing[:10], "n_cells_differing": len(differing),
            **{f"{name.replace('.', '_')}_identical": same for name, same in reports.items()}}


def report_text(folder: Path, name: str) -> str | None:
    """A report file of the sweep in `folder`, its own folder's path written ``<sweep>`` (the report names
    the folder its explorer is written from, the one line two rehearsals in two folders differ in)."""
    path = folder / "report" / name
    return path.read_text(encoding="utf-8").replace(str(folder), "<sweep>") if path.is_file() else None


def mlflow_status(db: Path) -> dict[str, int]:
    """Runs of the MLflow store by status."""
    with sqlite3.connect(db) as con:
        return dict(con.execute("select status, count(*) from runs group by status").fetchall())


def finished_runs(folder: Path) -> int:
    return len(list(folder.glob("*/summary.json")))


def rows_files(folder: Path) -> int:
    return len(list(folder.glob("*/cells/*/part-*.parquet")))


def when_mid_grid(folder: Path, after_runs: int, act: Callable[[], dict[str, Any]],
                  timeout_s: float = 3600) -> tuple[threading.Thread, dict[str, Any]]:
    """A thread that calls `act` once `after_runs` runs have finished and a later run has written rows."""
    seen: dict[str, Any] = {}

    def watch() -> None:
        deadline, base = time.monotonic() + timeout_s, None
        while time.monotonic() < deadline:
            if base is None and finished_runs(folder) >= after_runs:
                base = rows_files(folder)
            if base is not None and rows_files(folder) > base:
                seen.update(finished_runs=finished_runs(folder), rows_files=rows_files(folder),
                            at_s=round(time.monotonic() - started, 1), **act())
                return
            time.sleep(0.1)

    started = time.monotonic()
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread, seen


def node_processes(node: Any) -> list[str]:
    """The Ray worker processes (``ray::...``) under a node's raylet: what its loss takes with it."""
    import psutil

    raylet = node.all_processes["raylet"][0].process
    found = []
    for proc in psutil.Process(raylet.pid).children(recursive=True):
        try:
            line = " ".join(proc.cmdline())
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        if line.startswith("ray::"):
            found.append(line.split()[0])
    return found


def node_loss(sweep: Path, limit: int, out: Path, after_runs: int) -> dict[str, Any]:
    from ray.cluster_utils import Cluster

    from biorab.sweep import load_sweep
    from biorab.sweep.rehearsal import rehearse
    from pipelines.ray_auth import local_ray_token

    ray_tmp = Path(tempfile.mkdtemp(prefix="gnl", dir="/tmp"))  # short: Ray's socket paths are limited
    (ray_tmp / "ray").mkdir()
    os.environ["RAY_TMPDIR"] = str(ray_tmp)
    local_ray_token(str(ray_tmp))  # as `biorab sweep` does before it starts a local Ray; both nodes inherit
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 2, "include_dashboard": False, "object_store_memory": 300_000_000,
        "temp_dir": str(ray_tmp)})
    worker = cluster.add_node(num_cpus=2, object_store_memory=300_000_000)
    cluster.wait_for_nodes()
    try:
        cfg, _ = rehearse(load_sweep(sweep), output_dir=out / "lost")
        resources = {"address": cluster.address, "llm": {"pool_size": 2, "num_cpus": 0.5, "batch_size": 8},
                     "retrieval": {"num_cpus": 0.25, "batch_size": 8}, "task_num_cpus": 0.25}
        lost_yaml = out / "lost.yaml"
        lost_yaml.write_text(yaml.safe_dump(cfg.model_copy(update={"resources": resources}).model_dump(
            mode="json"), sort_keys=False), encoding="utf-8")
        folder = sweep_dir(out / "lost", sweep)

        def kill_worker() -> dict[str, Any]:
            held = node_processes(worker)
            cluster.remove_node(worker, allow_graceful=False)
            return {"worker_processes_killed": held}

        env = base_env(out / "cache-lost" / "rehearsal")  # the rehearsal's namespace, as --rehearse uses
        start = time.perf_counter()
        proc = subprocess.Popen(cli("sweep", str(lost_yaml), "--limit", str(limit), "--ray"), cwd=REPO,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        thread, seen = when_mid_grid(folder, after_runs, kill_worker)
        _, stderr = proc.communicate()
        thread.join(5)
        wall = time.perf_counter() - start
    finally:
        cluster.shutdown()
    return {"fault": "node-loss", "exit": proc.returncode, "wall_s": round(wall, 1), "killed": seen,
            "stderr_tail": stderr[-1500:] if proc.returncode else "", "folder": str(folder),
            "mlflow_runs": mlflow_status(folder / "mlflow.db")}


def stopped(sweep: Path, limit: int, out: Path, after_runs: int, signum: int) -> dict[str, Any]:
    """`biorab sweep --rehearse` (local Ray) sent `signum` mid-grid, then the same command again."""
    name = signal.Signals(signum).name.lower()
    cmd = cli("sweep", str(sweep), "--rehearse", "--limit", str(limit), "--ray", "--output-dir",
              str(out / name))
    env = base_env(out / f"cache-{name}")
    folder = sweep_dir(out / name, sweep)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def stop() -> dict[str, Any]:
        proc.send_signal(signum)
        return {}

    thread, seen = when_mid_grid(folder, after_runs, stop)
    _, stderr = proc.communicate()
    thread.join(5)
    first_wall = time.perf_counter() - start
    at_stop = {"exit": proc.returncode, "wall_s": round(first_wall, 1),
               "last_line": (stderr.strip().splitlines() or [""])[-1],
               "traceback": "Traceback" in stderr, "mlflow_runs": mlflow_status(folder / "mlflow.db"),
               "runs_finished": finished_runs(folder), "stopped": seen}
    start = time.perf_counter()
    resumed = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    return {"fault": name, "at_stop": at_stop,
            "resume": {"exit": resumed.returncode, "wall_s": round(time.perf_counter() - start, 1),
                       "mlflow_runs": mlflow_status(folder / "mlflow.db"),
                       "stderr_tail": resumed.stderr[-1500:] if resumed.returncode else ""},
            "folder": str(folder)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", type=Path)
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--fault", choices=("node-loss", "sigterm", "sigint"), required=True)
    parser.add_argument("--after-runs", type=int, default=7, help="runs finished before the fault")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--reference", type=Path, default=None,
                        help="the sweep folder of an undisturbed rehearsal at the same --limit")
    args = parser.parse_args()
    print(machine(), flush=True)
    out = (args.out or Path(tempfile.mkdtemp(prefix="bench-gnl-"))).resolve()
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"sweep": str(args.sweep), "limit": args.limit}
    if args.reference is None:
        ref, ref_wall = reference(args.sweep, args.limit, out / "ref")
        result["reference"] = {"folder": str(ref), "wall_s": round(ref_wall, 1)}
    else:
        ref = args.reference.resolve()
        result["reference"] = {"folder": str(ref)}
    if args.fault == "node-loss":
        fault = node_loss(args.sweep, args.limit, out, args.after_runs)
    else:
        fault = stopped(args.sweep, args.limit, out, args.after_runs,
                        signal.SIGTERM if args.fault == "sigterm" else signal.SIGINT)
    result.update(fault)
    result["same_as_reference"] = compare(Path(fault["folder"]), ref)
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
