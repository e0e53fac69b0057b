"""The retrieval stage: each instance's query → its hits, through the content-keyed hit store.

`RetrievalStage` builds each cell's corpus and index once (lazily, on the first row of that cell) and is
used unchanged by the in-process runner and, as a Ray Data actor, by the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from biorab.caches import HitStore
from biorab.cells import CellPlan
from biorab.errors import BioRABError
from biorab.ral import CachedRetriever, build_testbed_retriever
from biorab.runner.rows import hits_json


class RetrievalStage:
    """Callable on a batch of rows: fills ``hits`` and ``retrieval_cached`` for rows of retrieving cells."""

    def __init__(self, plans: Mapping[str, CellPlan], hits_store: str | Path) -> None:
        self.plans = dict(plans)
        self.store = HitStore(hits_store)
        self._indexes: dict[tuple[Any, ...], CachedRetriever] = {}
        self._filters: dict[str, Any] = {}

    def _retriever_for(self, plan: CellPlan) -> CachedRetriever:
        dataset, r = plan.dataset_setting()
        params = r.retriever_params
        index_spec = (r.testbed, r.rate, dataset, plan.seed, plan.data_dir, r.retriever,
                      tuple(sorted((k, repr(v)) for k, v in params.items())), plan.corpus_dir)
        selection = r.selection
        if index_spec not in self._indexes:  # one corpus and index per spec, whatever the selection
            self._indexes[index_spec] = build_testbed_retriever(
                testbed=r.testbed, dataset=dataset, retriever=r.retriever, params=r.params, rate=r.rate,
                seed=plan.seed, data_dir=plan.data_dir, store=self.store, selection=selection,
                transform=_corpus_hook(plan))
        built = self._indexes[index_spec]
        if plan.cell_id not in self._filters:  # the trained-encoder filter of the setting, if any
            from biorab.learn.hit_filter import build_hit_filter

            self._filters[plan.cell_id] = build_hit_filter(r.filter, dataset=dataset)
        return CachedRetriever(built.retriever, built.corpus_digest, selection, self.store,
                               self._filters[plan.cell_id])

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        by_cell: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            if self.plans[row["cell_id"]].retrieves:
                by_cell.setdefault(row["cell_id"], []).append(row)
            else:
                row.update(hits="[]", retrieval_cached=None)
        for cell_id, cell_rows in by_cell.items():
            retriever = self._retriever_for(self.plans[cell_id])
            found = retriever.search({row["id"]: row["text"] for row in cell_rows})
            for row in cell_rows:
                row.update(hits=hits_json(found[row["id"]].hits), retrieval_cached=found[row["id"]].cached)
        return rows


def _corpus_hook(plan: CellPlan) -> Any:
    """The stored transformed corpus of a cell with a corpus method (``None``: index the testbed as is)."""
    if plan.corpus_method == "none":
        return None
    if plan.corpus_dir is None:  # the runner prepares it before execution; never index the raw testbed
        raise BioRABError(f"cell {plan.label}: method {plan.corpus_method} but no transformed corpus was "
                          "prepared (run it through biorab.runner.run_experiment)")
    from biorab.methods.store import StoredTransform

    return StoredTransform(plan.corpus_dir)
