"""Tags on each retrieved hit: corrupted in this testbed (from the corpus's ledger), a test duplicate
(the leakage audit's rule), from another dataset (diverse), unlabeled.

The ledger is rebuilt from the cell's (testbed, dataset, rate, seed, data): the testbed corpora are
deterministic, as `biorab.tracking.cells.write_ledger` relies on too.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from biorab.cells import CellPlan
from biorab.corpora.corpus import LedgerEntry
from biorab.corpora.text_identity import normalized_text
from biorab.records import Hit

#: The ledger's ``how`` → the attribution's: which part of a label was changed. A class or an option
#: swapped is the whole label; a removed value is no corruption (the hit is tagged unlabeled instead).
HOW: dict[str, str | None] = {"head": "head", "relation": "relation", "tail": "tail", "label": "label",
                              "other_class": "label", "option": "label", "value_removed": None}


@dataclass(frozen=True)
class Evidence:
    """What tags a cell's hits: its dataset, its corpus's ledger (by item id) and the normalized texts of
    the dataset's test split (a corpus item with such a key is a test duplicate)."""

    dataset: str
    ledger: dict[str, LedgerEntry] = field(default_factory=dict)
    test_texts: frozenset[str] = frozenset()

    def tag(self, hit: Hit) -> dict[str, Any]:
        """The hit's tags (the ``hit_tags`` objects of ``attribution.parquet``).

        A hit is corrupted when the ledger changed its item to a wrong label and the hit still carries a
        label other than the original (a corpus method may have corrected it back)."""
        entry = self.ledger.get(hit.doc_id)
        corrupted = (entry is not None and entry.corrupted is not None and hit.value is not None
                     and hit.value != entry.original)
        return {
            "doc_id": hit.doc_id,
            "corrupted": corrupted,
            "original_label": entry.original if entry is not None else None,
            "corrupted_label": hit.value if corrupted else None,
            "how": HOW.get(entry.how) if corrupted and entry is not None else None,
            "leaked": normalized_text(hit.key) in self.test_texts,
            "diverse": bool(hit.dataset) and hit.dataset != self.dataset,
            "source": hit.dataset or None,
            "unlabeled": hit.value is None,
            # 1-based rank from the retriever; the tag's index is the shown position (an evidence order,
            # `biorab.ral.evidence_order`, makes them differ: the order applied, per instance)
            "retrieved_rank": hit.rank + 1,
            # near / far: how plausible the testbed made this lie (`biorab.corpora.plausibility`)
            "plausibility": entry.plausibility if corrupted and entry is not None else None,
        }

    def tags(self, hits: Sequence[Hit]) -> list[dict[str, Any]]:
        return [self.tag(hit) for hit in hits]


#: Within one scoring pass, ledgers (by item id) by (testbed, dataset, rate, seed, data dir), test texts by
#: (dataset, data dir) and a training-split loader by data dir: a grid's cells share them.
_Memo = dict[tuple[Any, ...], Any]


def cell_evidence(plan: CellPlan, *, memo: _Memo | None = None) -> Evidence:
    """The `Evidence` of a dataset-slice cell (no ledger for a cell that retrieves nothing)."""
    from biorab.corpora import build_corpus, train_loader
    from biorab.datasets import load_dataset

    dataset, retrieval = plan.dataset_setting()
    if not retrieval.retrieves:
        return Evidence(dataset)
    memo = memo if memo is not None else {}
    key = ("ledger", retrieval.testbed, dataset, retrieval.rate, plan.seed, plan.data_dir)
    if key not in memo:
        loads = ("train loader", plan.data_dir)  # each training split read once (a diverse corpus reads all)
        if loads not in memo:
            read = train_loader(plan.data_dir)
            memo[loads] = functools.lru_cache(maxsize=None)(lambda name: tuple(read(name)))
        memo[key] = build_corpus(retrieval.testbed, dataset, rate=retrieval.rate, seed=plan.seed,
                                 loader=memo[loads])[1].by_id()
    texts = ("test texts", dataset, plan.data_dir)
    if texts not in memo:
        tests = load_dataset(dataset, "test", data_dir=plan.data_dir)
        memo[texts] = frozenset(normalized_text(ex.text) for ex in tests)
    return Evidence(dataset, memo[key], memo[texts])
