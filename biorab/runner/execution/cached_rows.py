"""The rows a run can finish from the generation cache alone, without any LLM stage.

The Ray executor starts an LLM actor pool (and its engine) for whatever rows reach the LLM stage. Before
building the pipeline, its driver renders the rows whose prompts are known (rows of cells that do not
retrieve, or every row once retrieval ran as its own pass) and reads their generations, and the probes of
probing cells, from the cache through `CacheOnlyBackend`. Rows found entirely are parsed and written on
the driver, exactly as the pipeline's LLM actor would (the same `AnswerStage`); the others go on to the
pipeline unchanged. A fully cached rerun then starts no LLM actor at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biorab.cells import CellPlan
from biorab.ral.answer_stage import AnswerStage
from biorab.ral.retrieval_stage import RetrievalStage
from biorab.ral.stages import GenerationStage
from biorab.runner.execution.deferred_backend import CacheOnlyBackend, planned_digest, run_generator
from biorab.runner.execution.executor import ExecutionRequest
from biorab.runner.plan.cell_slices import sampling_seeds
from biorab.runner.store.shards import write_rows


def finish_cached(request: ExecutionRequest, *, retrieved: bool
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows of `request` written from the cache, rows still to run). `retrieved`: the rows carry their
    hits."""
    rows, plans, config = request.rows, request.plans, request.config
    digest = planned_digest(config.backend.name, config.backend.params)
    if digest is None or not rows:
        return [], list(rows)
    known = [r for r in rows if retrieved or not plans[r["cell_id"]].retrieves]
    if not known:
        return [], list(rows)
    generator = run_generator(config.backend.name, config.backend.params, request.generations_store,
                              CacheOnlyBackend(digest))
    lookup = GenerationStage(generator, config.sampling, seeds=sampling_seeds(plans))
    batch = [dict(r) for r in known]
    if not retrieved:
        # non-retrieving rows: empty hits, no retriever
        batch = RetrievalStage(plans, request.parts, request.hits_store)(batch)
    batch = AnswerStage(plans, request.parts, lookup)(batch)
    # a miss is an error row (never cached, never written: the pipeline runs it from `rows` again); a hit
    # has none, nor has its probe
    done = [r for r in batch if r.get("gen_error") is None and r.get("probe_gen_error") is None]
    if done:
        write_rows(done, request.cells_dir, request.attempt)
    finished = {_identity(r) for r in done}
    return done, [r for r in rows if _identity(r) not in finished]


def known_miss(rest: list[dict[str, Any]], plans: Mapping[str, CellPlan], *, retrieved: bool) -> bool:
    """Whether a row of `rest` (the rows `finish_cached` left) is sure to miss the generation cache: one
    whose prompt was known, so it was looked up and not found (its generation or its probe). Rows of
    retrieving cells in a streaming run (not `retrieved`) were not looked up: they may all be hits. (A
    backend without a planned digest was not looked up either, but it is built at once anyway.)"""
    return any(retrieved or not plans[r["cell_id"]].retrieves for r in rest)


def _identity(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["cell_id"], row["id"], row.get("order"))
