"""How well an encoder tells corrupted retrieved items from clean ones, measured against the ledger.

For each held-out instance x, its retrieved items from a counterfactual corpus are scored by their
distance ||f(x) - f(item)||; the ledger says which items are corrupted. The AUROC of "distance ranks
corrupted above clean" is 0.5 for an encoder blind to values, 1 for a perfect one; AUPRC (average
precision) is the corrupted share for a blind one. Both carry 95% percentile bootstrap CIs over the scored
items (`biorab.metrics.bootstrap`).

Under a `CorpusHoldOut` the scored items are the held-out side's only (items no training triplet contains),
and the instances are those whose text is no train-side item's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from biorab.common.records import Example, Hit
from biorab.corpora.corpus import Ledger

if TYPE_CHECKING:
    from biorab.learn.config import TrainingSource
    from biorab.learn.holdout import CorpusHoldOut


@dataclass(frozen=True)
class LedgerAUROC:
    """AUROC and AUPRC over `n` retrieved items, `n_corrupted` of them corrupted, with 95% bootstrap CIs
    (``None`` bounds: no resampling asked for, or undefined)."""

    auroc: float
    n: int
    n_corrupted: int
    auprc: float = float("nan")
    auroc_ci: tuple[float | None, float | None] = (None, None)
    auprc_ci: tuple[float | None, float | None] = (None, None)

    def to_metrics(self, name: str) -> dict[str, float]:
        """``{auroc_<name>, auroc_<name>_ci_low, ..., auprc_<name>_ci_high}``: the defined numbers (for
        logs and MLflow; e.g. name ``trained``)."""
        values = {"auroc": (self.auroc, *self.auroc_ci), "auprc": (self.auprc, *self.auprc_ci)}
        out = {}
        for metric, (value, low, high) in values.items():
            for key, number in ((f"{metric}_{name}", value), (f"{metric}_{name}_ci_low", low),
                                (f"{metric}_{name}_ci_high", high)):
                if number is not None:
                    out[key] = float(number)
        return out


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
    encoder: object, examples: Sequence[Example], hits: Mapping[str, Sequence[Hit]], ledger: Ledger,
    *, n_boot: int = 0, seed: int = 0,
) -> LedgerAUROC:
    """AUROC and AUPRC of the encoder's distance at flagging ledger-corrupted hits (see the module
    docstring), with `n_boot` bootstrap resamples for the CIs."""
    from biorab.learn.triplets import item_text

    corrupted = ledger.by_id()
    anchors, items, flags = [], [], []
    for ex in examples:
        for hit in hits[ex.id]:
            anchors.append(ex.text)
            items.append(item_text(ex.task, hit.key, hit.value))
            flags.append(hit.doc_id in corrupted)
    flagged = np.array(flags, dtype=bool)
    if not flags:
        return LedgerAUROC(float("nan"), 0, 0)
    return curve_scores(distances(encoder, anchors, items), flagged, n_boot=n_boot, seed=seed)


def curve_scores(scores: np.ndarray, positive: np.ndarray, *, n_boot: int, seed: int) -> LedgerAUROC:
    """AUROC and AUPRC of `scores` ranking `positive` first, with percentile bootstrap CIs.

    >>> flags = np.array([True, False, True, False])
    >>> r = curve_scores(np.array([0.9, 0.8, 0.7, 0.1]), flags, n_boot=0, seed=0)
    >>> r.auroc, round(r.auprc, 4), r.auroc_ci
    (0.75, 0.8333, (None, None))
    """
    from biorab.metrics.auc import auroc_binary, average_precision_binary
    from biorab.metrics.bootstrap import bootstrap_samples, percentile_interval

    def both(weights: np.ndarray) -> tuple[float, float]:
        return (auroc_binary(scores, positive, weights), average_precision_binary(scores, positive, weights))

    point = both(np.ones(scores.size))
    cis: list[tuple[float | None, float | None]] = [(None, None), (None, None)]
    if n_boot > 0:
        samples = bootstrap_samples(both, scores.size, n_boot, seed, 2)
        cis = [percentile_interval(samples[:, 0]), percentile_interval(samples[:, 1])]
    return LedgerAUROC(point[0], int(scores.size), int(positive.sum()), point[1], cis[0], cis[1])


def slice_auroc(encoder: object, source: TrainingSource, hold_out: CorpusHoldOut | None = None, *,
                n_boot: int = 0, seed: int = 0) -> LedgerAUROC:
    """`ledger_auroc` on the instances of `source` (e.g. a test slice) and their top-k hits in its testbed
    corpus (its own item excluded, as in training); under `hold_out`, hits from the held-out side only and
    only instances whose text is no train-side item's."""
    from biorab.learn.holdout import index_part, split_corpus, unseen
    from biorab.learn.instruction_set import build_testbed, index_corpus, load_examples, retrieve_without_self

    examples = load_examples(source)
    corpus, ledger = build_testbed(source)
    retriever = index_corpus(source, corpus) if hold_out is None else None
    if hold_out is not None:
        train, corpus, ledger = split_corpus(corpus, ledger, hold_out)
        examples = unseen(examples, train)
        retriever = index_part(source, corpus)
    assert retriever is not None
    hits = retrieve_without_self(retriever, examples, source.k)
    return ledger_auroc(encoder, examples, hits, ledger, n_boot=n_boot, seed=seed)
