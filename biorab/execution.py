"""The executor seam: what runs a plan's pending rows (in-process or on Ray Data), what it is asked
(`ExecutionRequest`) and what it reports back (`ExecutionStats`).

The runner never chooses an executor: the edge (the CLI, a test, a bench script) builds one and passes it
to `biorab.runner.run_experiment`, so the library never imports the Ray layer (`pipelines/`). The seam
lives outside the runner so that an executor needs nothing of it: the runner hands over the run's
pipeline as data (`biorab.ral.specs.pipeline.RowPipeline`) and what only it owns (how rows are written, how
they are put in prompt-prefix order) as callables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from biorab.generation.capabilities import capabilities_of
from biorab.ral.row_stages.row_pipeline import RowPipeline

if TYPE_CHECKING:
    from biorab.experiment import ExperimentConfig
    from biorab.ral.parts.assembly import RALParts
    from biorab.ral.specs.stage_plan import StagePlan

Rows = list[dict[str, Any]]

# progress(advance, total): called once with advance=0 before the first batch (the executor's start-up,
# such as Ray's, is under way: the runner then opens the MLflow runs in a thread), then after each
# written batch with the number of rows it held.
ProgressFn = Callable[[int, int], None]
# cell_rows({cell_id: n}): after each written batch, the rows it held per cell. An executor that sees a
# batch before generation (the in-process one) also calls it with n = 0 for the cells whose rows are
# entering generation: the earliest "this cell has started" it can say (MLflow opens the cell's run then).
CellRowsFn = Callable[[Mapping[str, int]], None]


@dataclass(frozen=True)
class ExecutionRequest:
    """What an executor is asked to run: the pending `rows` through the run's `pipeline` (its cells'
    plans and RAL parts, stores, backend and sampling), for the run `config` (resources, engine); `write`
    stores a finished batch (the runner's shards, stamped with the attempt; picklable, so an actor may
    call it), `order` puts rows that carry their hits in prompt-prefix order; `progress` and `cell_rows`
    are told of the work as it is written (``None``: nobody is)."""

    rows: Sequence[dict[str, Any]]
    pipeline: RowPipeline
    config: ExperimentConfig
    write: Callable[[Rows], object]
    order: Callable[[Rows], Rows]
    progress: ProgressFn | None = None
    cell_rows: CellRowsFn | None = None

    @property
    def plans(self) -> Mapping[str, StagePlan]:
        return self.pipeline.plans

    @property
    def parts(self) -> Mapping[str, RALParts]:
        return self.pipeline.parts

    @property
    def hits_store(self) -> Path:
        return self.pipeline.hits_store

    @property
    def generations_store(self) -> Path:
        return self.pipeline.generations_store

    def prefix_ordered(self, requested: bool | None) -> bool:
        """Whether an executor retrieves every row first and puts them in prompt-prefix `order` before
        cutting the LLM batches: as `requested`, or (``None``) where the backend has a prefix cache
        (`biorab.generation.capabilities.Capabilities.prefix_cache`); never when no cell retrieves.

        Only there does it pay: the transformers backend has no prefix cache, so the order would only
        cost (on Ray, retrieval no longer overlaps generation; other batch compositions change greedy
        outputs, docs/generation.md, breaking CPU runs' reproducibility against their own caches)."""
        on = capabilities_of(self.config.backend.name).prefix_cache if requested is None else requested
        return on and self.pipeline.retrieves()

    def with_rows(self, rows: Sequence[dict[str, Any]]) -> ExecutionRequest:
        """The same request for other rows (the rest once some were finished, the rows in another order)."""
        return dataclasses.replace(self, rows=rows)


@dataclass
class ExecutionStats:
    """Counts of one execution: rows written, fresh generations, cache hits, failed generations.

    Task and awareness-probe generations are counted apart (`probe_*`); a failed probe counts as a
    generation failure (its row is retried by the next run)."""

    written: int = 0
    generated: int = 0
    generation_cache_hits: int = 0
    generation_failures: int = 0
    retrieval_cache_hits: int = 0
    probe_generated: int = 0
    probe_cache_hits: int = 0
    failures_by_error: dict[str, int] = field(default_factory=dict)

    def add_rows(self, rows: Iterable[dict[str, Any]]) -> int:
        n = 0
        for row in rows:
            n += 1
            self.written += 1
            if row["gen_error"] is not None:
                self._failure(row["gen_error"])
            elif row["gen_cached"]:
                self.generation_cache_hits += 1
            else:
                self.generated += 1
            if row["retrieval_cached"]:
                self.retrieval_cache_hits += 1
            self._probe(row)
        return n

    def _probe(self, row: dict[str, Any]) -> None:
        if row.get("probe_gen_error") is not None:
            self._failure(row["probe_gen_error"])
        elif row.get("probe_gen_cached"):
            self.probe_cache_hits += 1
        elif row.get("probe_gen_cached") is False:
            self.probe_generated += 1

    def _failure(self, error: object) -> None:
        self.generation_failures += 1
        kind = str(error).split(":", 1)[0][:80]
        self.failures_by_error[kind] = self.failures_by_error.get(kind, 0) + 1

    def to_json(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "generated": self.generated,
            "generation_cache_hits": self.generation_cache_hits,
            "generation_failures": self.generation_failures,
            "retrieval_cache_hits": self.retrieval_cache_hits,
            "probe_generated": self.probe_generated,
            "probe_cache_hits": self.probe_cache_hits,
            "failures_by_error": dict(self.failures_by_error),
        }


class Executor(Protocol):
    """Runs pending rows through the request's pipeline (`biorab.ral.specs.pipeline.STAGES`) and writes them.

    Implementations: `biorab.runner.executors.local.LocalExecutor` (in-process) and
    `pipelines.ray_executor.RayExecutor` (Ray Data). Both write the same shard files, so a run may switch
    between them and resume.
    """

    def run(self, request: ExecutionRequest) -> ExecutionStats: ...


def rows_per_cell(rows: Iterable[dict[str, Any]], *, zero: bool = False) -> dict[str, int]:
    """``{cell_id: rows}`` of a batch, in first-seen order (``zero``: every count 0, for "started")."""
    out: dict[str, int] = {}
    for row in rows:
        out[row["cell_id"]] = 0 if zero else out.get(row["cell_id"], 0) + 1
    return out


def fan_out(fns: list[CellRowsFn | None]) -> CellRowsFn | None:
    """One per-cell callback calling each of `fns` (``None`` when there are none)."""
    live = [f for f in fns if f is not None]
    if not live:
        return None

    def cell_rows(counts: Mapping[str, int]) -> None:
        for fn in live:
            fn(counts)

    return cell_rows
