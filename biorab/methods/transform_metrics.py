"""Scoring a transform against the testbed's true ledger, with seeded bootstrap CIs over corpus items.

Detect-and-Correct (every reviewed item; the corrupted ones are the ledger's):
- ``detection_precision`` = flagged ∩ corrupted / flagged, ``detection_recall`` = flagged ∩ corrupted /
  corrupted, ``detection_f1`` their harmonic mean;
- ``correction_accuracy`` = share of flagged corrupted items whose new value is the gold label;
- ``corpus_accuracy_before`` / ``_after`` = share of items whose value is the gold label.
LLM labeling (every unlabeled item; the ledger holds each removed gold label):
- ``labeling_accuracy`` = share of items labeled with their gold label (an unreadable answer is wrong);
- ``labeling_coverage`` = share of items that got a label at all.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from biorab.corpora.corpus import Ledger
from biorab.methods.corpus_transform import TransformLedger
from biorab.metrics.bootstrap import bootstrap_samples, percentile_interval
from biorab.metrics.score_records import MetricValue

Statistic = Callable[[np.ndarray], float]


def _same(a: str | None, b: str | None) -> bool:
    """Labels compared as the scorer compares them (lower-cased, whitespace runs collapsed), so a corrected
    triple that differs from the gold only in case counts as right."""
    if a is None or b is None:
        return False
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _ratio(num: np.ndarray, den: np.ndarray) -> Statistic:
    def stat(w: np.ndarray) -> float:
        d = float(w @ den)
        return float(w @ num) / d if d else float("nan")

    return stat


def _f1(tp: np.ndarray, flagged: np.ndarray, corrupt: np.ndarray) -> Statistic:
    def stat(w: np.ndarray) -> float:
        t, f, c = float(w @ tp), float(w @ flagged), float(w @ corrupt)
        return 2 * t / (f + c) if f + c else float("nan")

    return stat


def detect_correct_statistics(truth: Ledger, ledger: TransformLedger) -> dict[str, Statistic]:
    """Each Detect-and-Correct metric as a function of per-item bootstrap weights."""
    wrong = truth.by_id()
    entries = ledger.entries
    corrupt = np.array([e.item_id in wrong for e in entries], dtype=float)
    flagged = np.array([e.flagged for e in entries], dtype=float)
    gold = [wrong[e.item_id].original if e.item_id in wrong else e.before for e in entries]
    before = np.array([_same(e.before, g) for e, g in zip(entries, gold, strict=True)], dtype=float)
    after = np.array([_same(e.after, g) for e, g in zip(entries, gold, strict=True)], dtype=float)
    tp = flagged * corrupt
    ones = np.ones(len(entries))
    return {
        "detection_precision": _ratio(tp, flagged),
        "detection_recall": _ratio(tp, corrupt),
        "detection_f1": _f1(tp, flagged, corrupt),
        "correction_accuracy": _ratio(tp * after, tp),
        "corpus_accuracy_before": _ratio(before, ones),
        "corpus_accuracy_after": _ratio(after, ones),
    }


def llm_label_statistics(truth: Ledger, ledger: TransformLedger) -> dict[str, Statistic]:
    """Each labeling metric as a function of per-item bootstrap weights."""
    removed = truth.by_id()
    entries = ledger.entries
    right = np.array([_same(e.after, removed[e.item_id].original) if e.item_id in removed else False
                      for e in entries], dtype=float)
    labeled = np.array([e.after is not None for e in entries], dtype=float)
    ones = np.ones(len(entries))
    return {"labeling_accuracy": _ratio(right, ones), "labeling_coverage": _ratio(labeled, ones)}


def score_transform(truth: Ledger, ledger: TransformLedger, *, n_boot: int = 1000, seed: int = 0
                    ) -> dict[str, MetricValue]:
    """The method's metrics (see the module docs) with percentile bootstrap CIs over items."""
    stats = (detect_correct_statistics if ledger.method == "detect_correct" else llm_label_statistics)(
        truth, ledger)
    n = len(ledger.entries)
    if n == 0:
        return {name: MetricValue(None) for name in stats}
    ones = np.ones(n)
    points = {name: _defined(f(ones)) for name, f in stats.items()}
    if n_boot <= 0:
        return {name: MetricValue(p) for name, p in points.items()}
    fns = list(stats.values())
    samples = bootstrap_samples(lambda w: [f(w) for f in fns], n, n_boot, seed, len(fns))
    return {name: MetricValue(points[name], *percentile_interval(samples[:, j]))
            for j, name in enumerate(stats)}


def _defined(x: float) -> float | None:
    return None if np.isnan(x) else x
