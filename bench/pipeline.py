"""Pipeline throughput vs the bare backend, side by side in one run on the same prompts.

Three ways to generate the same prompts (one dataset slice, no retrieval, so every way sees identical
prompt texts):

1. ``pipeline``  — `biorab.runner.run_experiment` (Ray Data by default, ``--no-ray`` for in-process) with an
   empty cache, so every prompt is really generated; it also renders, parses and writes Parquet;
2. ``batched``   — the bare backend's `generate` on batches of ``--batch-size`` (the ceiling);
3. ``loop``      — one prompt per `generate` call, as the original scripts decoded.

Throughput is prompts per second. "steady" excludes start-up (Ray start, actor start, model load, first
batch): for the pipeline it is measured between its first and last written batch (the rows' ``written_at``
stamps), for the bare runs over exactly the same rows: the bare backend generates the pipeline's written
batches, in the pipeline's order (each in chunks of at most ``--batch-size``), and its steady window starts
after the first of them, so both windows hold the same prompts. The pipeline and the bare batched run are
interleaved ``--repeats`` times (the order alternating each round), so that a change in the machine's load
hits both; each round's ratio is printed, then their median and range, and each batch's seconds (the
spread). Peak memory is the highest summed RSS of this process and all its descendants (Ray's raylet, GCS
and workers included), sampled every 50 ms.

    python bench/pipeline.py                               # SmolLM2 via transformers on CPU, ADE triples
    python bench/pipeline.py --backend fake --delay 0.05   # plumbing only
    python bench/pipeline.py --smoke-only                  # only the smoke job's wall times
    python bench/pipeline.py --n 12 --batch-size 4 --max-tokens 8 --repeats 3 --no-smoke --dtypes ''
                                                           # a few minutes: the ratio and its spread

It first prints the CPU (model, flags) and the dtype ``--dtype`` resolves to here, and ends with the wall
time of ``biorab run jobs/smoke.yaml`` (its own ``wall time`` line) with empty caches and then fully cached
(the same command again: every row on disk), in-process and on local Ray (``--no-smoke`` skips them).

Targets: pipeline/batched >= 0.9 (steady), pipeline/loop >= 5 (steady), batched/loop >= 5 (steady). Every
run uses the same number of torch threads (``--threads``, also the LLM actor's CPUs), the same batch size and
the backend's ``dtype`` (``auto`` by default). A second table times the bare backend per dtype (``--dtypes``,
batched and loop on the first ``--dtype-n`` prompts) and prints generated tokens per second side by side.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil


class PeakRSS:
    """Samples the summed RSS of this process tree in a background thread."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> int:
        me = psutil.Process()
        total = 0
        for proc in [me, *me.children(recursive=True)]:
            try:
                total += proc.memory_info().rss
            except psutil.Error:  # a process that just exited
                continue
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            time.sleep(0.05)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Timing:
    name: str
    n: int
    total_s: float
    marks: list[tuple[float, int]] = field(default_factory=list)  # (time, rows done) after each batch
    peak_bytes: int = 0
    tokens: int = 0  # generated tokens (bare backend runs)
    groups: list[list[str]] = field(default_factory=list)  # the pipeline's written batches (example ids)

    @property
    def batch_s(self) -> list[float]:
        """Seconds of each batch after the first (the steady window's batches)."""
        return [t1 - t0 for (t0, _), (t1, _) in zip(self.marks, self.marks[1:], strict=False)]

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.total_s

    @property
    def throughput(self) -> float:
        return self.n / self.total_s

    @property
    def steady(self) -> float:
        """Rows per second after the first batch (start-up and warm-up excluded)."""
        if len(self.marks) < 2:
            return self.throughput
        (t0, n0), (t1, n1) = self.marks[0], self.marks[-1]
        return (n1 - n0) / (t1 - t0) if t1 > t0 else float("nan")


def make_config(args: argparse.Namespace, out: Path) -> Any:
    from biorab.experiment import ExperimentConfig

    fake = args.backend == "fake"
    backend_params: dict[str, Any] = {"mode": "choice", "delay_s": args.delay} if fake else {}
    if args.backend == "transformers":  # same threads, inner batch and dtype as the bare runs
        backend_params.update(batch_size=args.batch_size, num_threads=args.threads, dtype=args.dtype)
    if args.model:
        backend_params["model"] = args.model
    return ExperimentConfig.model_validate({
        "name": "bench", "output_dir": str(out), "data_dir": args.data_dir,
        "datasets": [{"name": args.dataset, "split": "test", "limit": args.n}],
        "retrieval": [{"testbed": "none", "template": "noexample"}],
        "backend": {"name": args.backend, "params": backend_params},
        "sampling": {"max_tokens": args.max_tokens}, "n_boot": 0, "tracking": {"enabled": False},
        # logical CPUs: the LLM actor's threads plus room for the light tasks
        "resources": {"num_cpus": args.threads + 1,
                      "llm": {"batch_size": args.batch_size, "num_cpus": float(args.threads)}},
    })


def prompts_of(config: Any) -> list[Any]:
    """The exact prompts the pipeline sends (same slice, template and render function)."""
    from biorab.ral import assemble_cells
    from biorab.ral.row_stages.stages import RenderStage
    from biorab.ral.specs.rows import row_hits, row_prompt
    from biorab.runner.plan.cell_slices import plan_run

    slices = plan_run(config, Path(tempfile.mkdtemp()) / "none")
    plans = {s.plan.cell_id: s.plan for s in slices}
    rows = RenderStage(plans, assemble_cells(plans))([dict(r, hits="[]") for s in slices for r in s.pending])
    assert all(not row_hits(r) for r in rows)
    return [row_prompt(r) for r in rows]


def _executor(use_ray: bool) -> Any:
    from biorab.runner.executors.local import LocalExecutor
    from pipelines.ray_executor import RayExecutor

    return RayExecutor() if use_ray else LocalExecutor()


def time_pipeline(config: Any, use_ray: bool) -> Timing:
    from biorab.runner import run_experiment

    marks: list[tuple[float, int]] = []
    done = 0

    def progress(advance: int, total: int) -> None:
        nonlocal done
        done += advance
        marks.append((time.perf_counter(), done))

    from biorab.common.paths import cache_dir

    # An empty generation store (every prompt is generated), but the prepared models of the usual cache.
    store = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    models = cache_dir() / "models"
    if models.is_dir():
        (store / "models").symlink_to(models)
    previous = os.environ.get("BIORAB_CACHE_DIR")
    os.environ["BIORAB_CACHE_DIR"] = str(store)
    try:
        with PeakRSS() as rss:
            start = time.perf_counter()
            result = run_experiment(config, executor=_executor(use_ray), resume=False, progress=progress)
            total = time.perf_counter() - start
    finally:
        os.environ.pop("BIORAB_CACHE_DIR")
        if previous is not None:
            os.environ["BIORAB_CACHE_DIR"] = previous
        shutil.rmtree(store)
    assert result.stats.generated == done, "the pipeline must generate every prompt (empty cache)"
    name = "pipeline" + (" (ray)" if use_ray else " (in-process)")
    shard, groups = shard_marks(result.run_dir)
    return Timing(name, done, total, shard if len(shard) >= 2 else marks, rss.peak, groups=groups)


def shard_marks(run_dir: Path) -> tuple[list[tuple[float, int]], list[list[str]]]:
    """(time, rows done) at each shard write, from the rows' ``written_at`` stamps (the write tasks stamp
    them as they finish, while the driver receives results in bursts), and the example ids of each write."""
    from biorab.runner.store.shards import read_all_rows

    stamps: dict[float, list[str]] = {}
    for cell_dir in (run_dir / "cells").iterdir():
        for row in read_all_rows(cell_dir):
            stamps.setdefault(row["written_at"], []).append(row["id"])
    offset = time.perf_counter() - time.time()  # wall clock -> perf_counter
    marks, done = [], 0
    for stamp in sorted(stamps):
        done += len(stamps[stamp])
        marks.append((stamp + offset, done))
    return marks, [stamps[stamp] for stamp in sorted(stamps)]


def time_backend(backend: Any, groups: list[list[Any]], sampling: Any, batch_size: int, name: str) -> Timing:
    """The bare backend on `groups` of prompts in order, each in `generate` calls of at most `batch_size`
    prompts; a mark after each group (the pipeline's written batches: the same steady window)."""
    marks: list[tuple[float, int]] = []
    tokens = done = 0
    with PeakRSS() as rss:
        start = time.perf_counter()
        for group in groups:
            for i in range(0, len(group), batch_size):
                gens = backend.generate(group[i : i + batch_size], sampling)
                tokens += sum(g.completion_tokens for g in gens)
            done += len(group)
            marks.append((time.perf_counter(), done))
        total = time.perf_counter() - start
    return Timing(name, done, total, marks, rss.peak, tokens)


def time_dtypes(config: Any, prompts: list[Any], args: argparse.Namespace) -> str:
    """Bare backend tok/s per dtype, batched and one prompt at a time, measured one after the other."""
    from biorab.generation import build_backend

    subset = prompts[: args.dtype_n]
    lines = [f"bare backend per dtype, {len(subset)} prompts, batch {args.batch_size} vs loop (tok/s = "
             "generated tokens per wall second, prefill included):"]  # fmt: skip
    for dtype in args.dtypes.split(","):
        params = {**config.backend.params, "dtype": dtype}
        backend = build_backend(config.backend.name, params)
        try:
            backend.generate(subset[:1], config.sampling)  # warm-up
            batched = time_backend(backend, [subset], config.sampling, args.batch_size, "batched")
            loop = time_backend(backend, [subset], config.sampling, 1, "loop")
        finally:
            backend.close()
        ratio = batched.tokens_per_s / loop.tokens_per_s
        fast, slow = batched.tokens_per_s, loop.tokens_per_s
        line = f"  {dtype:<9} batched {fast:7.1f} tok/s | loop {slow:7.1f} tok/s | batched/loop {ratio:5.2f}"
        lines.append(line)
    return "\n".join(lines)


def smoke_wall_times(job: str, dtype: str) -> str:
    """`biorab run <job>` wall times (its ``wall time`` line): empty caches, then the same command again
    (every row on disk), in-process and on local Ray; each pair in fresh output and cache folders, with
    the prepared models linked in (the model is prepared; only the generation and hit caches are empty).
    The job runs with ``backend.params.dtype`` set to `dtype` (a copy of the YAML), so a bf16 CPU can
    time the float32 path an AVX2-only CPU takes with ``auto``."""
    import yaml

    from biorab.common.paths import cache_dir

    biorab = str(Path(sys.executable).with_name("biorab"))
    lines = [f"{job} wall time (s), dtype {dtype}:  empty caches | fully cached rerun"]
    for executor, flag in (("in-process", "--no-ray"), ("local Ray", "--ray")):
        with tempfile.TemporaryDirectory(prefix="bench-smoke-") as tmp:
            root = Path(tmp)
            spec = yaml.safe_load(Path(job).read_text(encoding="utf-8"))
            if spec.get("backend", {}).get("name", "transformers") == "transformers":
                spec.setdefault("backend", {}).setdefault("params", {})["dtype"] = dtype
            (root / "job.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
            (root / "cache").mkdir()
            if (cache_dir() / "models").is_dir():
                (root / "cache" / "models").symlink_to(cache_dir() / "models")
            env = {**os.environ, "BIORAB_CACHE_DIR": str(root / "cache")}
            command = [biorab, "run", str(root / "job.yaml"), flag, "--output-dir", str(root / "runs")]
            times = [_wall_time(command, env) for _ in range(2)]
        lines.append(f"  {executor:<12} {times[0]:>12.1f} | {times[1]:>10.1f}")
    return "\n".join(lines)


def _wall_time(command: list[str], env: dict[str, str]) -> float:
    """Run `command` and return the wall time it printed."""
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    found = re.search(r"wall time: ([0-9.]+) s", done.stdout + done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return float(found.group(1))


def report(rounds: list[tuple[Timing, Timing]], loop: Timing | None) -> str:
    """Each round's pipeline and bare batched run (same rows, same steady window) with their ratio and
    per-batch seconds, then the ratios' median and range, and the loop's."""
    import statistics

    lines = [f"{'round':<6}{'run':<26}{'prompts':>8}{'total s':>10}{'prompts/s':>11}{'steady/s':>10}"
             f"{'tok/s':>8}{'peak RSS MB':>13}  steady batches (s)"]  # fmt: skip
    ratios, totals = [], []
    def row(label: object, t: Timing) -> str:
        tok = f"{t.tokens_per_s:>8.1f}" if t.tokens else f"{'-':>8}"
        spread = " ".join(f"{b:.1f}" for b in t.batch_s)
        return (f"{label!s:<6}{t.name:<26}{t.n:>8}{t.total_s:>10.2f}{t.throughput:>11.2f}{t.steady:>10.2f}"
                f"{tok}{t.peak_bytes / 2**20:>13.0f}  {spread}")

    for r, (pipe, batched) in enumerate(rounds):
        lines += [row(r, pipe), row(r, batched)]
        ratios.append(pipe.steady / batched.steady)
        totals.append(pipe.throughput / batched.throughput)
    if loop is not None:
        lines.append(row("-", loop))

    def summary(values: list[float]) -> str:
        each = ", ".join(f"{v:.2f}" for v in values)
        return f"median {statistics.median(values):.2f}, range {min(values):.2f}-{max(values):.2f} ({each})"

    lines += ["", f"pipeline / batched (steady, same rows): {summary(ratios)}   (target >= 0.9)",
              f"pipeline / batched (total):             {summary(totals)}   (with start-up)"]
    if loop is not None:
        pipes = [p.steady / loop.steady for p, _ in rounds]
        bares = [b.steady / loop.steady for _, b in rounds]
        lines += [f"pipeline / loop (steady):               {summary(pipes)}   (target >= 5)",
                  f"batched / loop (steady):                {summary(bares)}   (target >= 5)"]
    return "\n".join(lines)


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--backend", default="transformers")
    parser.add_argument("--model", default=None, help="backend model (default: the backend's default)")
    parser.add_argument("--dataset", default="ade")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (and CPUs of the LLM actor)")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.05, help="fake backend: seconds per generate call")
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved pipeline / bare batched rounds")
    parser.add_argument("--no-loop", action="store_true", help="skip the one-prompt-a-call loop")
    parser.add_argument("--dtype", default="auto", help="transformers dtype of the three main runs")
    parser.add_argument("--dtypes", default="float32,bfloat16", help="per-dtype table's dtypes ('' skips)")
    parser.add_argument("--dtype-n", type=int, default=16, help="prompts of the per-dtype table")
    parser.add_argument("--job", default="jobs/smoke.yaml", help="the job whose wall times end the report")
    parser.add_argument("--no-smoke", action="store_true", help="skip the job's wall times")
    parser.add_argument("--smoke-only", action="store_true", help="only the job's wall times")
    args = parser.parse_args()
    from biorab.cli.support.process_env import apply_process_env_defaults

    apply_process_env_defaults()  # the pipeline and the bare runs in the environment `biorab` starts with
    from biorab.generation.dtype import machine_summary

    print(machine_summary(args.dtype), flush=True)
    if not args.smoke_only:
        bench_backend(args)
    if not args.no_smoke:
        print("\n" + smoke_wall_times(args.job, args.dtype))


def bench_backend(args: argparse.Namespace) -> None:
    """The pipeline, the bare batched backend and the one-prompt loop on the same prompts (and per dtype)."""
    from biorab.generation import build_backend

    with tempfile.TemporaryDirectory() as out:
        config = make_config(args, Path(out))
        prompts = prompts_of(config)
        by_id = {p.example_id: p for p in prompts}
        sampling, size = config.sampling, args.batch_size
        backend = build_backend(config.backend.name, config.backend.params)
        rounds: list[tuple[Timing, Timing]] = []
        groups: list[list[Any]] = []
        try:
            backend.generate(prompts[:1], sampling)  # warm-up, as the pipeline's actor is warm
            for r in range(args.repeats):
                # the order alternates, so that a drift in the machine's load does not favour one side
                pipe_first = r % 2 == 0 or not groups
                if pipe_first:
                    pipeline = time_pipeline(config, use_ray=not args.no_ray)
                    groups = [[by_id[i] for i in g] for g in pipeline.groups]
                batched = time_backend(backend, groups, sampling, size, "batched (bare backend)")
                same = True
                if not pipe_first:
                    pipeline = time_pipeline(config, use_ray=not args.no_ray)
                    same = [[by_id[i] for i in g] for g in pipeline.groups] == groups
                rounds.append((pipeline, batched))
                # each round as it ends (a run cut short keeps its rounds): rates, ratio, batch seconds, load
                rows = f"{'the same' if same else 'NOT the same'} {pipeline.n - len(groups[0])} rows"
                load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
                print(f"round {r} ({time.strftime('%H:%M:%S')}, load average {load}): pipeline "
                      f"{pipeline.steady:.3f}/s {[round(b, 1) for b in pipeline.batch_s]} s, batched "
                      f"{batched.steady:.3f}/s {[round(b, 1) for b in batched.batch_s]} s, ratio "
                      f"{pipeline.steady / batched.steady:.2f} (steady, {rows})", flush=True)
            loop = None if args.no_loop else time_backend(backend, groups, sampling, 1, "loop (one a call)")
        finally:
            backend.close()
        dtypes = time_dtypes(config, prompts, args) if args.backend == "transformers" and args.dtypes else ""
    print(report(rounds, loop))
    if dtypes:
        print("\n" + dtypes)


if __name__ == "__main__":
    main()
