"""A sweep rehearsed at a size (`biorab sweep SWEEP --rehearse`), measured: wall, CPU seconds of the
rehearsal's process, rows/s, peak RSS of the driver and of each Ray actor kind, disk and files written,
MLflow rows, `biorab report` and `biorab explore` time (and the explorer's size).

The size is ``--limit N`` (the first N rows of each dataset) or ``--fraction F`` (each dataset entry of the
sweep gets ``limit: ceil(F x its split's rows)``, written into a copy of the sweep). The rehearsal goes to
``--out`` (default: a temp folder) with its own cache dir (``--cache``: keep it between points so that
indexes are built once); ``--fresh`` starts its rows over.

    python bench/grid.py jobs/paper.yaml --limit 2 --no-ray
    python bench/grid.py jobs/paper.yaml --fraction 0.0625 --out grid16 --cache grid-cache

Peak RSS is sampled every 0.5 s over the driver's process tree (psutil): the driver, and every process
whose command line names a Ray actor class (``ray::MapWorker(MapBatches(RetrievalActor))`` ...), by kind;
``driver_maxrss_mb`` is the kernel's peak of the driver (``ru_maxrss``: no spike between samples missed).
It prints the CPU flags, the core count and the load average first, and one JSON object last.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.explorer import machine  # noqa: E402  (CPU flags, cores, load: one place)


def sized_sweep(sweep: Path, fraction: float, out: Path) -> Path:
    """A copy of `sweep` whose every dataset entry reads ceil(fraction x its split's rows)."""
    from biorab.datasets import get_dataset

    data = yaml.safe_load(sweep.read_text(encoding="utf-8"))
    sizes: dict[tuple[str, str], int] = {}
    for block in data.get("matrix") or []:
        entries = []
        for ds in block.get("datasets") or []:
            entry = {"name": ds} if isinstance(ds, str) else dict(ds)
            key = (entry["name"], entry.get("split", "test"))
            if key not in sizes:
                sizes[key] = sum(1 for _ in get_dataset(key[0]).rows(key[1]))
            entry["limit"] = max(1, math.ceil(fraction * sizes[key]))
            entries.append(entry)
        block["datasets"] = entries
    path = out / f"{sweep.stem}-{fraction:g}.yaml"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


class PeakRSS:
    """Peak RSS (bytes) of a process and of its descendants by kind, sampled in a thread."""

    def __init__(self, pid: int, every_s: float = 0.5) -> None:
        self.pid, self.every_s = pid, every_s
        self.peaks: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        while not self._stop.wait(self.every_s):
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                return
            for proc in procs:
                try:
                    kind = "driver" if proc.pid == self.pid else _kind(" ".join(proc.cmdline()))
                    rss = proc.memory_info().rss
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    continue
                if kind is not None:
                    self.peaks[kind] = max(self.peaks.get(kind, 0), rss)


def _kind(cmdline: str) -> str | None:
    for name in ("RetrievalActor", "GenerationActor", "RenderActor", "ParseActor"):
        if name in cmdline:
            return name
    if cmdline.startswith("ray::"):
        return cmdline.split()[0]
    return None


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, done


def folder_stats(folder: Path) -> tuple[int, int]:
    files = [f for f in folder.rglob("*") if f.is_file()]
    return len(files), sum(f.stat().st_size for f in files)


def mlflow_rows(db: Path) -> dict[str, int]:
    """Rows of the MLflow store's main tables (runs, params, metrics, tags)."""
    if not db.is_file():
        return {}
    with sqlite3.connect(db) as con:
        return {t: con.execute(f"select count(*) from {t}").fetchone()[0]  # noqa: S608 (fixed names)
                for t in ("runs", "params", "metrics", "tags")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", type=Path)
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--limit", type=int)
    size.add_argument("--fraction", type=float)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--fresh", action="store_true")
    args = parser.parse_args()
    print(machine(), flush=True)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-grid-"))
    sweep = args.sweep if args.fraction is None else sized_sweep(args.sweep, args.fraction, out)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if args.cache is not None:
        env["BIORAB_CACHE_DIR"] = str(args.cache)
    cmd = [sys.executable, "-m", "biorab.cli.main", "sweep", str(sweep), "--rehearse", "--output-dir",
           str(out / "rehearsal"), "--no-ray" if args.no_ray else "--ray"]
    if args.limit is not None:
        cmd += ["--limit", str(args.limit)]
    if args.fresh:
        cmd.append("--fresh")
    load_before = [round(x, 2) for x in os.getloadavg()]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with PeakRSS(proc.pid) as rss:
        stdout, stderr = proc.communicate()
    wall = time.perf_counter() - start
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the rehearsal's process; Ray's workers not
    cpu_s = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    # The kernel's own peak of the rehearsal's process (the driver): the 0.5 s samples miss a spike
    # shorter than that (one encoder batch's activations). The largest child waited for so far: the first.
    driver_maxrss_mb = round(cpu_after.ru_maxrss / 1024)
    if proc.returncode != 0:
        sys.exit(f"the rehearsal failed ({proc.returncode}):\n{stderr[-3000:]}")
    name = yaml.safe_load(sweep.read_text(encoding="utf-8"))["name"]
    sweep_dir = (out / "rehearsal").resolve() / name
    rehearsal = json.loads((sweep_dir / "rehearsal.json").read_text(encoding="utf-8"))
    rows = rehearsal["real_sweep_needs"]["rehearsal_rows"]
    files, size_b = folder_stats(sweep_dir)
    cli = [sys.executable, "-m", "biorab.cli.main"]
    report_s, report = timed([*cli, "report", str(sweep_dir / "sweep.yaml"), "--no-track"], env)
    explore_s, explore = timed([sys.executable, "-m", "biorab.cli.main", "explore", str(sweep_dir),
                                "--no-track"], env)
    explorer_files, explorer_bytes = folder_stats(sweep_dir / "explorer")
    result: dict[str, Any] = {
        "sweep": str(args.sweep), "limit": args.limit, "fraction": args.fraction, "ray": not args.no_ray,
        "wall_s": round(wall, 1), "cpu_s": round(cpu_s, 1), "rows": rows,
        "rows_per_s": round(rows / wall, 2) if wall else None,
        "peak_rss_mb": {k: round(v / 2**20) for k, v in sorted(rss.peaks.items())},
        "driver_maxrss_mb": driver_maxrss_mb,
        "files": files, "disk_mb": round(size_b / 2**20, 1),
        "mlflow_rows": mlflow_rows(sweep_dir / "mlflow.db"),
        "report_s": round(report_s, 1), "report_ok": report.returncode == 0,
        "report_share_of_wall": round(report_s / wall, 3) if wall else None,
        "explore_s": round(explore_s, 1), "explore_ok": explore.returncode == 0,
        "explorer_files": explorer_files, "explorer_mb": round(explorer_bytes / 2**20, 1),
        "load_before": load_before, "load_after": [round(x, 2) for x in os.getloadavg()],
        "real_sweep_needs": rehearsal["real_sweep_needs"],
    }
    print(stdout.splitlines()[-1] if stdout else "")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
