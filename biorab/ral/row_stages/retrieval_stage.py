"""The retrieval stage: each instance's query → its hits (`biorab.ral.parts.steps.retrieve`), through the
content-keyed hit store.

`RetrievalStage` builds each cell's retriever from its parts (`biorab.ral.parts.assembly.assemble_cells`) on
the
first row of that cell, sharing one corpus and index between cells that index the same, and is used
unchanged by the in-process executor and, as a Ray Data actor, by the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from biorab.caches import HitStore
from biorab.common.errors import BioRABError
from biorab.ral.parts.assembly import IndexMemo, RALParts
from biorab.ral.parts.retriever import CachedRetriever
from biorab.ral.parts.steps import retrieve
from biorab.ral.specs.rows import hits_json
from biorab.ral.specs.stage_plan import StagePlan


class RetrievalStage:
    """Callable on a batch of rows: fills ``hits`` and ``retrieval_cached`` for rows of retrieving cells."""

    def __init__(self, plans: Mapping[str, StagePlan], parts: Mapping[str, RALParts],
                 hits_store: str | Path) -> None:
        self.plans = dict(plans)
        self.parts = dict(parts)
        self.store = HitStore(hits_store)
        self._indexes: IndexMemo = {}
        self._retrievers: dict[str, CachedRetriever] = {}

    def _retriever_for(self, plan: StagePlan) -> CachedRetriever:
        if plan.cell_id not in self._retrievers:  # one corpus and index per spec, shared across cells
            _check_prepared(plan, self.parts[plan.cell_id])
            built = self.parts[plan.cell_id].retriever(store=self.store, indexes=self._indexes)
            assert built is not None  # only retrieving cells reach here
            self._retrievers[plan.cell_id] = built
        return self._retrievers[plan.cell_id]

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        by_cell: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            if self.plans[row["cell_id"]].retrieves:
                by_cell.setdefault(row["cell_id"], []).append(row)
            else:
                row.update(hits="[]", retrieval_cached=None)
        for cell_id, cell_rows in by_cell.items():
            found = retrieve(self._retriever_for(self.plans[cell_id]),
                             {row["id"]: row["text"] for row in cell_rows})
            for row in cell_rows:
                row.update(hits=hits_json(found[row["id"]].hits), retrieval_cached=found[row["id"]].cached)
        return rows


def _check_prepared(plan: StagePlan, parts: RALParts) -> None:
    """A cell with a corpus method indexes its stored transformed corpus, never the raw testbed."""
    if parts.retrieval.method != "none" and parts.corpus_dir is None:  # the runner's assembly prepares it
        raise BioRABError(f"cell {plan.label}: method {plan.corpus_method} but no transformed corpus was "
                          "prepared (run it through biorab.runner.run_experiment)")
