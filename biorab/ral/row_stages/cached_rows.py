"""The rows a run can finish from the generation cache alone, without any LLM stage.

The Ray executor starts an LLM actor pool (and its engine) for whatever rows reach the LLM stage. Before
building the pipeline, its driver runs the run's `RowPipeline` on the rows whose prompts are known (rows of
cells that do not retrieve, or every row once retrieval ran as its own pass), with a generator that reads
the cache only (`CacheOnlyBackend`): rows whose generations (and probes, for probing cells) are all found
come out exactly as the LLM actor would have made them, and the caller writes them; the others go on to
the pipeline unchanged. A fully cached rerun then starts no LLM actor at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from biorab.generation.deferred import CacheOnlyBackend, planned_digest
from biorab.ral.row_stages.row_pipeline import RowPipeline
from biorab.ral.specs.stage_plan import StagePlan


def finish_cached(pipeline: RowPipeline, rows: Sequence[dict[str, Any]], *, with_hits: bool
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows of `rows` answered from the cache, to be written, rows still to run). `with_hits`: the rows
    carry their hits (the pipeline then starts at the render stage)."""
    plans = pipeline.plans
    digest = planned_digest(pipeline.backend, pipeline.backend_params)
    if digest is None or not rows:
        return [], list(rows)
    known = [r for r in rows if with_hits or not plans[r["cell_id"]].retrieves]
    if not known:
        return [], list(rows)
    lookup = pipeline.generator(CacheOnlyBackend(digest))
    # not `with_hits`: only non-retrieving rows are known; their retrieval stage fills empty hits
    batch = pipeline.build(lookup, first="render" if with_hits else "retrieve")([dict(r) for r in known])
    # a miss is an error row (never cached, never written: the pipeline runs it from `rows` again); a hit
    # has none, nor has its probe
    done = [r for r in batch if r.get("gen_error") is None and r.get("probe_gen_error") is None]
    finished = {_identity(r) for r in done}
    return done, [r for r in rows if _identity(r) not in finished]


def known_miss(rest: list[dict[str, Any]], plans: Mapping[str, StagePlan], *, with_hits: bool) -> bool:
    """Whether a row of `rest` (the rows `finish_cached` left) is sure to miss the generation cache: one
    whose prompt was known, so it was looked up and not found (its generation or its probe). Rows of
    retrieving cells in a streaming run (not `with_hits`) were not looked up: they may all be hits. (A
    backend without a planned digest was not looked up either, but it is built at once anyway.)"""
    return any(with_hits or not plans[r["cell_id"]].retrieves for r in rest)


def _identity(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["cell_id"], row["id"], row.get("order"))
