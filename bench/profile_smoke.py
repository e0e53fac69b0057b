"""Where a job's time goes: wall and CPU seconds per stage and per cell, in-process or on local Ray.

Runs a job (``jobs/smoke.yaml`` by default) with an empty generation and hit cache (the prepared models of
the usual cache are linked in) and wraps the stages and the transformers backend's phases in timers:

- in-process (default): config load, retrieval (index build included), render, engine start (torch import
  and model load), grammar set-up and compile, prefill, decode, grammar masking, stop-string checks,
  label scoring, parse, shard writes, scoring with bootstrap CIs, MLflow (its thread's CPU);
- ``--ray``: the driver's phases (``ray.init``, the pipeline until its first and last batch, shutdown,
  scoring, MLflow); the stages run in Ray's processes, so the CPU column is the driver's only.
  ``--timeline FILE`` adds what those processes did: Ray's task timeline (``ray.timeline()``, Chrome
  trace JSON, read before ``ray.shutdown``) is written to FILE, and the start of every actor and every
  batch of the pipeline's stages is printed in seconds since the profile started, beside the driver's.

CPU seconds are `time.process_time` deltas (every thread of this process: torch's included), which stay
comparable on a loaded machine where wall seconds do not. Nested phases are indented: a parent's time
includes its children's. Rows are per dataset of the batch the backend saw ("ade" = the two ADE cells).

    python bench/profile_smoke.py                        # jobs/smoke.yaml in-process, dtype float32
    python bench/profile_smoke.py --ray --dtype auto
    python bench/profile_smoke.py --ray --timeline runs/timeline.json   # when each actor and batch ran
    python bench/profile_smoke.py --limit 2 --out runs/profile   # keep the run folder
    python bench/profile_smoke.py --threads 1            # the work itself, on a loaded machine

The CPU's flags and the chosen dtype are printed first. ``--dtype float32`` (the default here) is what
``auto`` picks on a CPU without native bf16 (AVX2-only servers), so a bf16 machine profiles that path too.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shutil
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_local = threading.local()


class Phases:
    """Wall and CPU seconds and call counts per (phase, group), in first-seen order; `starts`: when each
    phase first began, in seconds since `origin` (epoch seconds)."""

    def __init__(self) -> None:
        self.origin = time.time()
        self.starts: dict[str, float] = {}
        self.wall: dict[tuple[str, str], float] = defaultdict(float)
        self.cpu: dict[tuple[str, str], float] = defaultdict(float)
        self.calls: dict[tuple[str, str], int] = defaultdict(int)
        self.depth: dict[str, int] = {}
        self.group = ""  # datasets of the batch in the generation stage
        self._stack = 0

    @contextlib.contextmanager
    def timed(self, phase: str, *, cpu: Callable[[], float] = time.process_time) -> Iterator[None]:
        self.depth.setdefault(phase, self._stack)
        self.starts.setdefault(phase, time.time() - self.origin)
        self._stack += 1
        wall, start = time.perf_counter(), cpu()
        try:
            yield
        finally:
            self._stack -= 1
            key = (phase, self.group)
            self.wall[key] += time.perf_counter() - wall
            self.cpu[key] += cpu() - start
            self.calls[key] += 1

    def wrap(self, owner: Any, name: str, phase: str | Callable[..., str]) -> None:
        """Time every call of ``owner.name`` as `phase` (or as ``phase(*args)``)."""
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            with self.timed(phase(*args, **kwargs) if callable(phase) else phase):
                return original(*args, **kwargs)

        setattr(owner, name, timed_call)

    def table(self) -> str:
        lines = [f"{'phase':<40}{'group':<16}{'calls':>6}{'wall s':>9}{'CPU s':>9}"]
        for (phase, group), wall in self.wall.items():
            name = "  " * self.depth.get(phase, 0) + phase
            lines.append(f"{name:<40}{group or '-':<16}{self.calls[(phase, group)]:>6}{wall:>9.2f}"
                         f"{self.cpu[(phase, group)]:>9.2f}")  # fmt: skip
        return "\n".join(lines)


def _datasets(rows: list[dict[str, Any]]) -> str:
    return "+".join(dict.fromkeys(str(r["cell_id"]).split("-")[0] for r in rows))


def instrument_stages(p: Phases) -> None:
    """Timers on the in-process stages and the runner's phases (driver side)."""
    import biorab.generation
    import biorab.runner.executors.request as request
    import biorab.runner.run as run
    from biorab.ral.row_stages.retrieval_stage import RetrievalStage
    from biorab.ral.row_stages.stages import GenerationStage, ParseStage, RenderStage

    p.wrap(RetrievalStage, "__call__", "retrieval (index build incl.)")
    p.wrap(RenderStage, "__call__", "render")
    p.wrap(ParseStage, "__call__", "parse")
    p.wrap(request, "write_rows", "write shards")  # the request's `write` binds it when it is built
    p.wrap(biorab.generation, "build_backend", "engine start (imports, model load)")
    p.wrap(run, "_score", "scoring + bootstrap CIs")
    p.wrap(run, "_finish_tracking", "MLflow: log results")
    original = GenerationStage.__call__

    def generation(self: Any, rows: list[dict[str, Any]]) -> Any:
        p.group = _datasets(rows)
        try:
            with p.timed("generation stage (cache + backend)"):
                return original(self, rows)
        finally:
            p.group = ""

    GenerationStage.__call__ = generation  # type: ignore[method-assign]


def instrument_backend(p: Phases) -> None:
    """Timers inside the transformers backend: prefill/decode split by the input length of each forward."""
    from biorab.generation.hf import backend as hf
    from biorab.generation.hf import guided as hf_guided
    from biorab.generation.hf import stopping as hf_stopping

    p.wrap(hf.TransformersBackend, "_generate_batch", "generate (HF generate)")
    p.wrap(hf.TransformersBackend, "_score", "label scoring")
    p.wrap(hf_guided.GrammarCache, "__init__", "grammar: tokenizer info")
    p.wrap(hf_guided.GrammarCache, "get", "grammar: compile (cached)")
    p.wrap(hf_guided.RowGrammars, "__init__", "grammar: matchers")
    p.wrap(hf_guided.RowGrammars, "__call__", "grammar: masking")
    p.wrap(hf_stopping.RowStopStrings, "__call__", "stop-string checks")
    original_init = hf.TransformersBackend._load_model

    def load_model(self: Any) -> Any:
        model = original_init(self)
        forward = model.forward

        # wraps: `generate` reads forward's signature (logits_to_keep, the cache keyword); a bare
        # (*args, **kwargs) wrapper made it compute the prefill's logits at every position
        @functools.wraps(forward)
        def timed_forward(*args: Any, **kwargs: Any) -> Any:
            ids = kwargs.get("input_ids", args[0] if args else None)
            phase = "model forward: prefill" if ids is None or ids.shape[1] > 1 else "model forward: decode"
            with p.timed(phase):
                return forward(*args, **kwargs)

        model.forward = timed_forward
        return model

    hf.TransformersBackend._load_model = load_model  # type: ignore[method-assign]


def instrument_ray(p: Phases, timeline: Path | None) -> None:
    import pipelines.ray_executor as ral

    p.wrap(ral, "init_ray", "ray.init")
    p.wrap(ral, "build_pipeline", "build pipeline (lazy)")
    import ray

    p.wrap(ray, "shutdown", "ray.shutdown")
    if timeline is not None:  # outside the shutdown's timer
        shutdown = ray.shutdown

        def read_timeline_then_shutdown(*args: Any, **kwargs: Any) -> None:
            if ray.is_initialized():  # the task events live in Ray's GCS: read before it goes
                events = ray.timeline()
                timeline.write_text(json.dumps(events))
                print(timeline_summary(events, p))
            shutdown(*args, **kwargs)

        ray.shutdown = read_timeline_then_shutdown


def timeline_summary(events: list[dict[str, Any]], p: Phases) -> str:
    """The driver's phases and the actors' and stages' work, by start time (s since the profile began):
    actor starts (``__init__``) and stage batches, with their durations."""
    rows = [(start, "driver", phase) for phase, start in p.starts.items()]
    for e in events:
        name = str(e.get("cat", ""))
        if e.get("ph") != "X" or not name.startswith("task::"):
            continue
        if name.endswith(".__init__") or ".submit" in name or "MapBatches(" in name:
            start = e["ts"] / 1e6 - p.origin
            rows.append((start, "ray", f"{name[6:]} ({e.get('dur', 0) / 1e6:.2f} s)"))
    lines = ["timeline (s since start)"]
    lines += [f"{start:8.2f}  {where:<7}{what}" for start, where, what in sorted(rows)]
    return "\n".join(lines)


def instrument_tracking(p: Phases) -> None:
    """MLflow's runs open in a thread: its own CPU (`time.thread_time`) is reported."""
    from biorab.tracking import background

    original = background.BackgroundTracking._run

    def run(self: Any) -> None:
        with p.timed("MLflow: open runs (thread CPU)", cpu=time.thread_time):
            original(self)

    background.BackgroundTracking._run = run  # type: ignore[method-assign]


def empty_cache() -> Path:
    """A fresh cache root with the usual cache's prepared models linked in."""
    from biorab.common.paths import cache_dir

    store = Path(tempfile.mkdtemp(prefix="profile-cache-"))
    if (cache_dir() / "models").is_dir():
        (store / "models").symlink_to(cache_dir() / "models")
    return store


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("config", nargs="?", default="jobs/smoke.yaml")
    parser.add_argument("--ray", action="store_true", help="local Ray (driver phases only)")
    parser.add_argument("--timeline", type=Path, default=None,
                        help="with --ray: write Ray's task timeline (Chrome trace JSON) here and print "
                             "when each actor started and each stage batch ran")
    parser.add_argument("--dtype", default="float32", help="transformers dtype (auto: this CPU's choice)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", default=None, help="output dir (default: a temp dir, removed)")
    parser.add_argument("--no-track", action="store_true", help="MLflow off")
    parser.add_argument("--keep-cache", action="store_true", help="use the usual cache (cached rerun)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads (default: the job's num_threads); 1 on a loaded machine, where "
                             "idle OpenMP threads spin-waiting on a descheduled peer inflate CPU seconds")
    args = parser.parse_args()
    from biorab.cli.support.process_env import apply_process_env_defaults

    apply_process_env_defaults()  # as `biorab` starts
    from biorab.generation.dtype import machine_summary

    print(machine_summary(args.dtype))
    p = Phases()
    store = None if args.keep_cache else empty_cache()
    if store is not None:
        os.environ["BIORAB_CACHE_DIR"] = str(store)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="profile-out-"))
    try:
        with p.timed("whole run"):
            result = profile_run(p, args, out)
    finally:
        if store is not None:
            shutil.rmtree(store)
        if not args.out:
            shutil.rmtree(out)
    print(p.table())
    print(f"stats: {result.stats}")


def profile_run(p: Phases, args: argparse.Namespace, out: Path) -> Any:
    with p.timed("config load + validation"):
        from biorab.runner.checks.validate import load_experiment

        config = load_experiment(args.config)
        if args.limit:
            config = config.with_limit(args.limit)
        params = {**config.backend.params}
        if config.backend.name == "transformers":
            params["dtype"] = args.dtype
            if args.threads:
                params["num_threads"] = args.threads
        config = config.model_copy(update={"output_dir": str(out),
                                           "backend": config.backend.model_copy(update={"params": params})})
    from biorab.runner import run_experiment

    instrument_stages(p)
    instrument_tracking(p)
    if args.ray:
        from pipelines.ray_executor import RayExecutor

        instrument_ray(p, args.timeline)
        executor: Any = RayExecutor()
    else:
        from biorab.runner.executors.local import LocalExecutor

        instrument_backend(p)
        executor = LocalExecutor()
    first: list[float] = []
    start = time.perf_counter()

    def progress(advance: int, total: int) -> None:
        if advance:
            first.append(time.perf_counter() - start)

    with p.timed("run_experiment"):
        result = run_experiment(config, executor=executor, resume=False, progress=progress,
                                track=False if args.no_track else None)
    if first:
        print(f"written batches at {', '.join(f'{t:.1f}' for t in first)} s after run_experiment started")
    return result


if __name__ == "__main__":
    main()
