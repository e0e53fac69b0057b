"""Tags on each retrieved hit: corrupted (its label is not the dataset's own training label: the testbed's
ledger changed it, or the cell's corpus method relabelled it), a test duplicate (the leakage audit's rule),
from another dataset (diverse), unlabeled.

The ledger is the cell's testbed corpus's (testbed, dataset, rate, seed, data), asked of
`biorab.ral.parts.testbeds.testbed_corpus` like every other caller (the retriever, the corpus methods,
`biorab.tracking.cell_runs.write_ledger`): the testbed corpora are deterministic and built once per process.
The training labels are read from the training splits the corpora are built from, so a wrong label counts
whoever made it wrong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from biorab.attribution.answers import label_items
from biorab.common.errors import UnknownNameError
from biorab.common.records import Hit
from biorab.corpora.corpus import LedgerEntry
from biorab.corpora.text_identity import normalized_text
from biorab.ral.specs.cell_records import CellPlan

#: The ledger's ``how`` → the attribution's: which part of a label was changed. A class or an option
#: swapped, or a multi-label set with a label swapped or dropped, is the whole label; a removed value is
#: no corruption (the hit is tagged unlabeled instead).
HOW: dict[str, str | None] = {"head": "head", "relation": "relation", "tail": "tail", "label": "label",
                              "other_class": "label", "option": "label", "swap": "label", "drop": "label",
                              "value_removed": None}
#: ``how`` of a label the cell's corpus method made wrong (``method`` names it: ``llm_label``,
#: ``detect_correct``); ``unexplained``: a wrong label no ledger lists in a cell without a corpus method (no
#: built-in testbed makes one: a bring-your-own corpus can).
BY_METHOD, UNEXPLAINED = "method", "unexplained"

#: (dataset, item id) → that training item's label (``None``: no such item).
TrainLabel = Callable[[str, str], "str | None"]


def _no_train_label(dataset: str, item_id: str) -> str | None:
    return None


@dataclass(frozen=True)
class Evidence:
    """What tags a cell's hits: its dataset, its corpus's ledger (by item id) and the normalized texts of
    the dataset's test split (a corpus item with such a key is a test duplicate)."""

    dataset: str
    ledger: dict[str, LedgerEntry] = field(default_factory=dict)
    test_texts: frozenset[str] = frozenset()
    #: The training label of an item (for the hits of every source dataset), and the cell's corpus method.
    train_label: TrainLabel = _no_train_label
    method: str = "none"
    #: Whether two labels are the same answer (the task's `answer_items`; exact equality by default).
    same: Callable[[str, str], bool] = str.__eq__

    def tag(self, hit: Hit) -> dict[str, Any]:
        """The hit's tags (the ``hit_tags`` objects of ``attribution.parquet``).

        A labeled hit is corrupted when its label is not the same answer as its item's training label (the
        ledger's original where the training split does not hold the item): the ledger's corruption
        (``how`` from the ledger) when the hit carries the ledger's corrupted label, else the corpus
        method's (``how``: ``method``, ``method``: its name) — whether or not the ledger lists the item. A
        corrupted item a method corrected back is clean."""
        entry = self.ledger.get(hit.doc_id)
        original = self.train_label(hit.dataset or self.dataset, hit.doc_id)
        if original is None and entry is not None:
            original = entry.original
        corrupted = hit.value is not None and original is not None and not self.same(hit.value, original)
        how = None
        if corrupted:
            if entry is not None and entry.corrupted is not None and hit.value == entry.corrupted:
                how = HOW.get(entry.how)
            else:
                how = BY_METHOD if self.method != "none" else UNEXPLAINED
        return {
            "doc_id": hit.doc_id,
            "corrupted": corrupted,
            "original_label": original,
            "corrupted_label": hit.value if corrupted else None,
            "how": how,
            "method": self.method if how == BY_METHOD else None,
            "leaked": normalized_text(hit.key) in self.test_texts,
            "diverse": bool(hit.dataset) and hit.dataset != self.dataset,
            "source": hit.dataset or None,
            "unlabeled": hit.value is None,
            # 1-based rank from the retriever; the tag's index is the shown position (an evidence order,
            # `biorab.ral.specs.evidence_order`, makes them differ: the order applied, per instance)
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
    from biorab.corpora import train_loader
    from biorab.datasets import load_dataset
    from biorab.ral.parts.testbeds import testbed_corpus
    from biorab.tasks import get_task

    dataset, retrieval = plan.dataset_setting()
    if not retrieval.retrieves:
        return Evidence(dataset)
    memo = memo if memo is not None else {}
    loads = ("train loader", plan.data_dir)  # each training split read once, for the hits' training labels
    if loads not in memo:
        read = train_loader(plan.data_dir)
        memo[loads] = functools.lru_cache(maxsize=None)(lambda name: tuple(read(name)))
    key = ("ledger", retrieval.testbed, dataset, retrieval.rate, plan.seed, plan.data_dir)
    if key not in memo:
        # The ledger of the very corpus the cell retrieved from, built where every caller builds it (once
        # per process: the run's retriever has usually built it already).
        memo[key] = testbed_corpus(retrieval.testbed, dataset, rate=retrieval.rate, seed=plan.seed,
                                   data_dir=plan.data_dir)[1].by_id()
    labels = ("train labels", plan.data_dir)
    if labels not in memo:
        memo[labels] = _train_labels(memo[loads])
    texts = ("test texts", dataset, plan.data_dir)
    if texts not in memo:
        tests = load_dataset(dataset, "test", data_dir=plan.data_dir)
        memo[texts] = frozenset(normalized_text(ex.text) for ex in tests)
    kind = get_task(plan.task)
    return Evidence(dataset, memo[key], memo[texts], train_label=memo[labels], method=plan.corpus_method,
                    same=lambda a, b: a == b or label_items(kind, a) == label_items(kind, b))


def _train_labels(load: Callable[[str], Sequence[Any]]) -> TrainLabel:
    """(dataset, item id) → the label of that training item, each split indexed once when first asked."""
    by_dataset: dict[str, dict[str, str]] = {}

    def label(dataset: str, item_id: str) -> str | None:
        if dataset not in by_dataset:
            try:
                by_dataset[dataset] = {ex.id: ex.label for ex in load(dataset)}
            except UnknownNameError:  # a hit from a dataset no registry knows: no training label
                by_dataset[dataset] = {}
        return by_dataset[dataset].get(item_id)

    return label

