"""How well an encoder tells corrupted retrieved items from clean ones, measured against the ledger.

For each held-out instance x, its retrieved items from a counterfactual corpus are scored by their
distance ||f(x) - f(item)||; the ledger says which items are corrupted. The AUROC of "distance ranks
corrupted above clean" is 0.5 for an encoder blind to values, 1 for a perfect one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from biorab.corpora.corpus import Ledger
from biorab.records import Example, Hit


@dataclass(frozen=True)
class LedgerAUROC:
    """AUROC over `n` retrieved items, `n_corrupted` of them corrupted."""

    auroc: float
    n: int
    n_corrupted: int


def distances(encoder: object, anchors: Sequence[str], items: Sequence[str]) -> np.ndarray:
    """Euclidean distances between paired anchor and item texts under `encoder` (a `PooledEncoder`)."""
    a = encoder.encode(list(anchors))  # type: ignore[attr-defined]
    b = encoder.encode(list(items))  # type: ignore[attr-defined]
    return np.asarray(np.linalg.norm(a - b, axis=1), dtype=np.float64)


def auroc(scores: np.ndarray, positive: np.ndarray) -> float:
    """ROC area of `scores` ranking `positive` first (ties count one half), via `biorab.metrics.curves`.

    >>> auroc(np.array([0.9, 0.1, 0.8, 0.3]), np.array([True, False, True, False]))
    1.0
    """
    from biorab.metrics.curves import area_under_roc, curve, rank_label

    ranked = rank_label(np.asarray(scores, dtype=np.float64), np.asarray(positive, dtype=bool))
    tps, fps = curve(ranked, np.ones(len(scores)))
    return area_under_roc(tps, fps)


def ledger_auroc(
    encoder: object, examples: Sequence[Example], hits: Mapping[str, Sequence[Hit]], ledger: Ledger
) -> LedgerAUROC:
    """AUROC of the encoder's distance at flagging ledger-corrupted hits (see the module docstring)."""
    from biorab.learn.triplets import item_text

    corrupted = ledger.by_id()
    anchors, items, flags = [], [], []
    for ex in examples:
        for hit in hits[ex.id]:
            anchors.append(ex.text)
            items.append(item_text(ex.task, hit.key, hit.value))
            flags.append(hit.doc_id in corrupted)
    flagged = np.array(flags, dtype=bool)
    value = auroc(distances(encoder, anchors, items), flagged) if len(flags) else float("nan")
    return LedgerAUROC(value, len(flags), int(flagged.sum()))


def slice_auroc(encoder: object, source: object) -> LedgerAUROC:
    """`ledger_auroc` on the instances of `source` (a `TrainingSource`, e.g. a test slice) and their top-k
    hits in its testbed corpus (its own item excluded, as in training)."""
    from biorab.learn.instruction_set import build_testbed, index_corpus, load_examples, retrieve_without_self

    examples = load_examples(source)  # type: ignore[arg-type]
    corpus, ledger = build_testbed(source)  # type: ignore[arg-type]
    hits = retrieve_without_self(index_corpus(source, corpus), examples, source.k)  # type: ignore
    return ledger_auroc(encoder, examples, hits, ledger)
