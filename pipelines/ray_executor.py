"""`RayExecutor`: the run's pending rows through the run's pipeline (`biorab.ral.specs.pipeline`) on Ray Data.

The pipeline's stages carry their placement as data (`biorab.ral.specs.placement`): per LLM engine, each
runs as tasks, on an actor pool sized by one entry of the run's ``resources:``, or as the engine's own stage
(Ray's ``ray.data.llm`` processor, `pipelines.vllm_processor`). `map_segments` maps the pipeline's placed
segments in one loop, names no stage, and lets the last one write its batches (the runner's `write`) and
hand back receipts:

    actors engine:          hits segment (actor pool) → answer segment (LLM actor pool, writes)
    vllm_processor engine:  hits segment (actor pool) → prompt segment (tasks) → Ray's processor
                            → reading segment (tasks, writes)

With prefix order (by default on a backend with a prefix cache, `ExecutionRequest.prefix_ordered`), the
segments that find hits run as a pass of their own: the LLM batches are cut only once every row's examples
are known, so that rows sharing instruction + example found run together (vLLM's prefix cache). Hits are
cached as they come, so a killed run looks nothing up twice. Otherwise hits stream into the LLM in one pass.

This module adds only resources, batching and I/O. It takes everything of the runner from the request
(`biorab.execution.ExecutionRequest`: `write`, `order`) and imports none of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

from biorab.common.errors import BackendFatalError
from biorab.execution import ExecutionRequest, ExecutionStats, rows_per_cell
from biorab.experiment import ResourcesConfig, StageResources
from biorab.generation.prepare import prepare_for_backend
from biorab.ral import finish_cached, known_miss
from biorab.ral.specs.placement import Segment
from biorab.ral.specs.rows import from_table, to_table
from pipelines.ray_setup import init_ray
from pipelines.stages import ACTORS, Write, segment_batch, write_batch

E = TypeVar("E", bound=BaseException)


def _actor_args(res: StageResources) -> dict[str, Any]:
    import ray.data

    return {
        "compute": ray.data.ActorPoolStrategy(size=res.pool_size),
        "num_cpus": res.num_cpus,
        "num_gpus": res.num_gpus or None,
        "batch_size": res.batch_size,
        "batch_format": "pyarrow",
    }


def input_blocks(rows: Sequence[dict[str, Any]], blocks: int) -> list[Any]:
    """`rows` as `blocks` Arrow tables of near-equal size.

    Splitting on the driver replaces ``.repartition(n)``: a repartition runs shuffle tasks that need a whole
    CPU each, which can never be scheduled once the actor pools hold their CPUs on a 2-CPU machine (the
    deadlock of docs/notes/ray_on_small_machines.md, hit for real with the smoke job).
    """
    table = to_table(rows)
    blocks = max(1, min(blocks, table.num_rows))
    bounds = [round(i * table.num_rows / blocks) for i in range(blocks + 1)]
    return [table.slice(lo, hi - lo) for lo, hi in zip(bounds, bounds[1:], strict=False) if hi > lo]


def input_dataset(rows: Sequence[dict[str, Any]], resources: ResourcesConfig) -> Any:
    """`rows` as a Ray Dataset of `input_blocks` (one per LLM batch, at most 64, unless
    `resources.blocks` says how many), their metadata computed here on the driver.

    ``ray.data.from_arrow`` reads each block's metadata in a remote task: on a fresh local Ray that task
    waited ~1.7 s for a worker to start and import pyarrow and Ray Data, before the executor could even
    start the actor pools (the LLM actor's model load with them). ``from_blocks`` keeps the blocks as they
    are, which is also what `input_blocks` wants."""
    import ray.data

    blocks = resources.blocks or min(64, -(-len(rows) // resources.llm.batch_size))
    return ray.data.from_blocks(input_blocks(rows, blocks))


def build_pipeline(request: ExecutionRequest, *, with_hits: bool = False, preload: bool = False) -> Any:
    """The lazy Ray Dataset of write receipts for the request's rows (nothing runs until it is consumed);
    `with_hits`: the rows already carry their hits (`rows_with_hits`), so the pipeline starts after the
    stages that find them; `preload`: the LLM actor loads its model as it starts (a row is known to miss
    the cache, `known_miss`)."""
    engine = request.config.resources.llm_engine
    return map_segments(input_dataset(request.rows, request.config.resources), request,
                        request.pipeline.segments(engine, with_hits=with_hits), write=request.write,
                        preload=preload)


def rows_with_hits(request: ExecutionRequest) -> list[dict[str, Any]]:
    """Every row with its hits (the segments before the prompt, over all rows, collected on the driver), in
    prompt-prefix order (the request's `order`)."""
    segments = request.pipeline.hit_segments(request.config.resources.llm_engine)
    ds = map_segments(input_dataset(request.rows, request.config.resources), request, segments)
    out = [row for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None)
           for row in from_table(batch)]
    return request.order(out)


def map_segments(ds: Any, request: ExecutionRequest, segments: Sequence[Segment], *,
                 write: Write | None = None, preload: bool = False) -> Any:
    """`ds` through `segments`, each placed as it declares; with `write`, the last segment writes its
    batches and hands back receipts (`pipelines.stages.receipts`)."""
    for i, segment in enumerate(segments):
        last = write if i == len(segments) - 1 else None
        ds = _map_segment(ds, request, segment, write=last, preload=preload)
    return ds


def _map_segment(ds: Any, request: ExecutionRequest, segment: Segment, *, write: Write | None,
                 preload: bool) -> Any:
    resources = request.config.resources
    placement = segment.placement
    if placement.kind == "engine":  # Ray's own LLM stage, on the pipeline's cache helpers
        from pipelines.vllm_processor import processor_segment

        ds = processor_segment(ds, request)
        return ds if write is None else ds.map_batches(write_batch, fn_kwargs={"write": write},
                                                        **_task_args(request))
    if placement.kind == "actors":
        assert placement.pool is not None  # `Placement` checks it
        kwargs = {"pipeline": request.pipeline, "segment": segment, "write": write, "preload": preload}
        return ds.map_batches(ACTORS[placement.pool], fn_constructor_kwargs=kwargs,
                              **_actor_args(getattr(resources, placement.pool)))
    return ds.map_batches(segment_batch, fn_kwargs={"pipeline": request.pipeline, "segment": segment,
                                                    "write": write}, **_task_args(request))


def _task_args(request: ExecutionRequest) -> dict[str, Any]:
    """Ray Data arguments of a task segment. Light stages take LLM-sized batches: a larger default batch
    would bundle every block into one task, and the LLM stage would then get one big bundle (no streaming,
    no progress until the end)."""
    res = request.config.resources
    return {"num_cpus": res.task_num_cpus, "batch_format": "pyarrow", "batch_size": res.llm.batch_size}


def run_ray(request: ExecutionRequest, *, prefix_order: bool | None = None) -> ExecutionStats:
    """Run the pipeline over the request's rows, streaming receipts to count progress; shuts down a Ray it
    started. The driver learns of a cell from its first receipts (generation runs in the actors), so
    `cell_rows` is called after each written batch only."""
    import ray

    started = init_ray(request.config.resources)
    try:
        with_hits = request.prefix_ordered(prefix_order)
        if with_hits:
            request = request.with_rows(rows_with_hits(request))
        total = len(request.rows)
        stats = ExecutionStats()
        if request.progress is not None:
            request.progress(0, total)  # the total, before the first (possibly long) batch
        # rows whose generations are all cached are finished on the driver: no LLM actor for them
        done, rest = finish_cached(request.pipeline, request.rows, with_hits=with_hits)
        if done:
            request.write(done)
        _count(done, stats, total, request)
        if not rest:
            return stats
        ds = build_pipeline(request.with_rows(rest), with_hits=with_hits,
                            preload=known_miss(rest, request.plans, with_hits=with_hits))
        try:
            for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None):
                _count(from_table(batch), stats, total, request)
        except Exception as e:
            fatal = backend_fatal_cause(e)
            if fatal is None:
                raise
            # The original alone: the CLI prints its one line (exit 2) as for ``--no-ray``, not Ray's
            # wrapped traceback of the actor.
            raise fatal from None
        return stats
    finally:
        if started:
            ray.shutdown()


#: how a worker's traceback text names a BioRAB error: ``biorab.common.errors.BackendFatalError: message``
#: (Python prints the class's module path, so the pattern is built from it: a move of the errors module
#: keeps it right)
_ERROR_LINE = re.compile(rf"^\s*{re.escape(BackendFatalError.__module__)}\.(\w+): (.+)$")


def backend_fatal_cause(error: BaseException) -> BackendFatalError | None:
    """The `BackendFatalError` an LLM actor raised, out of Ray's wrapping of it, or None if it was not one
    (`wrapped_cause`)."""
    return wrapped_cause(error, BackendFatalError)


def wrapped_cause(error: BaseException, kind: type[E]) -> E | None:
    """The `kind` error (a BioRAB error class) a Ray worker raised, out of Ray's wrapping of it, or None.

    Ray Data wraps a UDF's error in a ``UserCodeException`` (``raise … from e``) and Ray in a ``RayTaskError``
    whose ``cause`` is that ``UserCodeException``; its ``__cause__``, the original, does not survive the
    pickling to the driver (measured on Ray 2.60: ``cause.__cause__`` is None). What survives is the
    worker's formatted traceback in the error's text, so the error is rebuilt from its last
    ``biorab.common.errors.<Name>: …`` line naming a subclass of `kind` (the messages are one line,
    `biorab.generation.openai.client._fatal_message`). An original found in the chain (a plain Ray task or
    actor call keeps it as ``cause``) is used first."""
    from ray.exceptions import RayError

    import biorab.common.errors as errors

    seen: set[int] = set()
    todo: list[BaseException] = [error]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        # a RayTaskError made `as_instanceof_cause` is a `kind` too, but its text is Ray's traceback: the
        # original is under it
        if isinstance(e, kind) and not isinstance(e, RayError):
            return e
        todo += [c for c in (e.__cause__, e.__context__, getattr(e, "cause", None))
                 if isinstance(c, BaseException)]
    if not isinstance(error, RayError):
        return None
    for line in reversed(str(error).splitlines()):
        match = _ERROR_LINE.match(line)
        found = getattr(errors, match.group(1), None) if match else None
        if match and isinstance(found, type) and issubclass(found, kind):
            try:
                return found(match.group(2))
            except TypeError:  # a class with another constructor: the kind itself, with the message
                return kind(match.group(2))
    return None


def _count(written: list[dict[str, Any]], stats: ExecutionStats, total: int,
           request: ExecutionRequest) -> None:
    if not written:
        return
    n = stats.add_rows(written)
    if request.progress is not None:
        request.progress(n, total)
    if request.cell_rows is not None:
        request.cell_rows(rows_per_cell(written))


class RayExecutor:
    """The Ray Data `biorab.execution.Executor` (``biorab run`` without ``--no-ray``).

    `prefix_order`: find every row's hits first and put rows in prompt-prefix order before batching
    (``False``: one streaming pass in the given order; ``None``: where the backend has a prefix cache)."""

    def __init__(self, *, prefix_order: bool | None = None) -> None:
        self.prefix_order = prefix_order

    def run(self, request: ExecutionRequest) -> ExecutionStats:
        backend = request.config.backend
        prepare_for_backend(backend.name, backend.params)  # once, before actors load it
        return run_ray(request, prefix_order=self.prefix_order)
