"""Triple-extraction metrics: micro precision, recall and F1 over sets of (head, relation, tail), and the
same counts for the head, relation and tail sets alone (the original `5_metrics.py`).

Matching is exact after normalising each element: lower-cased, stripped, internal whitespace runs
collapsed to one space. Triples are sets per instance, so a repeated triple counts once. A parse failure
predicts nothing: it adds gold triples but no predicted ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

import numpy as np

from biorab.common.registry import METRICS
from biorab.metrics.base import Metric, f1_from, f1s_from, safe_ratio, safe_ratios
from biorab.metrics.confusion import LabelTable, accuracies, accuracy

Triple = tuple[str, str, str]
PARTS: tuple[str, ...] = ("triple", "head", "relation", "tail")
_STATISTICS = ("precision", "recall", "f1")


def normalize_element(text: str) -> str:
    """Lower-case, strip and collapse whitespace runs (the original replaced runs of 7 spaces).

    >>> normalize_element("  Acute   Renal Failure ")
    'acute renal failure'
    """
    return " ".join(text.lower().split())


#: How triple elements are compared: ``normalized`` (default: lower-cased, stripped, whitespace runs
#: collapsed on both sides) or ``original`` (``5_metrics.py``: gold elements lower-cased with runs of seven
#: spaces replaced, nothing stripped; predictions lower-cased only, because the ``strict_original``
#: parser has already applied the original's prediction rule).
TRIPLE_MATCHING: tuple[str, ...] = ("normalized", "original")
_SEVEN_SPACES = "       "


def _elements(parts: list[str], matching: str, side: str) -> Triple:
    if matching == "normalized":
        head, relation, tail = (normalize_element(p) for p in parts)
    elif side == "gold":
        head, tail = (parts[i].lower().replace(_SEVEN_SPACES, " ") for i in (0, 2))
        relation = parts[1].lower()
    else:
        head, relation, tail = (p.lower() for p in parts)
    return head, relation, tail


def parse_triples(text: str, *, matching: str = "normalized", side: str = "gold") -> frozenset[Triple]:
    """The triple set of a canonical label (``head|relation|tail`` lines; blank lines skipped).

    Args:
        text: the label.
        matching: one of `TRIPLE_MATCHING`.
        side: ``gold`` or ``prediction`` (matters for ``original`` matching only).

    Raises:
        ValueError: a non-blank line does not have exactly three ``|``-separated parts.

    >>> sorted(parse_triples("Aspirin|effect|Bleeding\\naspirin|effect|bleeding\\n"))
    [('aspirin', 'effect', 'bleeding')]
    >>> parse_triples("")
    frozenset()
    >>> sorted(parse_triples("a| Effect |B ", matching="original", side="prediction"))
    [('a', ' effect ', 'b ')]
    """
    if matching not in TRIPLE_MATCHING:
        raise ValueError(f"unknown triple matching {matching!r}; use one of {', '.join(TRIPLE_MATCHING)}")
    return _parsed(text, matching, side)


#: Bounded: a cell's golds and answers are parsed by scoring, attribution, the error types and the twins
#: (about 26 times per row before this cache, issue 45); a few thousand recent texts cover one cell.
@lru_cache(maxsize=16384)
def _parsed(text: str, matching: str, side: str) -> frozenset[Triple]:
    """`parse_triples` of valid arguments; pure, and its frozenset immutable, so one result is shared."""
    triples = set()
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        parts = line.split("|")
        if len(parts) != 3:
            raise ValueError(
                f"triple line {number} {line!r} has {len(parts)} '|'-separated parts, expected 3"
            )
        triples.add(_elements(parts, matching, side))
    return frozenset(triples)


def triple_counts(predicted: frozenset[Triple], gold: frozenset[Triple]) -> np.ndarray:
    """``(4, 3)`` counts (predicted, gold, correct) for triples, heads, relations and tails of one instance.

    >>> triple_counts(frozenset({("a", "r", "b")}), frozenset({("a", "r", "c")})).tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]
    """
    rows = [(len(predicted), len(gold), len(predicted & gold))]
    for position in range(3):
        p = {t[position] for t in predicted}
        g = {t[position] for t in gold}
        rows.append((len(p), len(g), len(p & g)))
    return np.array(rows, dtype=float)


@dataclass(frozen=True, eq=False)
class TripleTable:
    """Per-instance ``(n, 4, 3)`` counts, parse failures and weights of a triple-extraction run."""

    counts: np.ndarray
    failed: np.ndarray
    weights: np.ndarray
    correct: np.ndarray

    @property
    def n(self) -> int:
        return int(self.counts.shape[0])

    def reweight(self, weights: np.ndarray) -> TripleTable:
        return replace(self, weights=weights)

    def totals(self) -> np.ndarray:
        """Weighted ``(4, 3)`` sums of (predicted, gold, correct)."""
        return self._totals

    @cached_property
    def _totals(self) -> np.ndarray:
        # Once per table: a bootstrap resample is one table read by all twelve triple metrics.
        return np.tensordot(self.weights, self.counts, axes=1)


def triple_table(
    golds: Sequence[frozenset[Triple]], predicted: Sequence[frozenset[Triple] | None]
) -> TripleTable:
    """Build the table; a ``None`` prediction (parse failure) predicts no triple."""
    empty: frozenset[Triple] = frozenset()
    sets = [p if p is not None else empty for p in predicted]
    counts = np.stack([triple_counts(p, g) for p, g in zip(sets, golds, strict=True)])
    return TripleTable(
        counts=counts,
        failed=np.array([p is None for p in predicted], dtype=bool),
        weights=np.ones(len(golds)),
        # Per-instance correctness (for McNemar): the predicted set equals the gold set.
        correct=np.array([p == g for p, g in zip(sets, golds, strict=True)], dtype=bool),
    )


def micro_prf(predicted: float, gold: float, correct: float) -> tuple[float, float, float]:
    """Micro precision, recall and F1 from summed counts (all 0 when nothing is correct).

    >>> micro_prf(4, 5, 2)
    (0.5, 0.4, 0.4444444444444445)
    """
    precision, recall = safe_ratio(correct, predicted), safe_ratio(correct, gold)
    return precision, recall, f1_from(precision, recall)


class _TripleMetric(Metric[TripleTable]):
    part: int
    statistic: int

    def compute(self, table: TripleTable) -> float:
        predicted, gold, correct = table.totals()[self.part]
        return micro_prf(predicted, gold, correct)[self.statistic]

    def compute_many(self, table: TripleTable, weights: np.ndarray) -> np.ndarray:
        """`compute` under each row of `weights` (resamples x instances), bit for bit: the totals are sums
        of whole counts times whole multiplicities, exact in any order, and `micro_prf`'s operations are
        the same elementwise (`biorab.metrics.bootstrap.BatchMetric`)."""
        predicted, gold, correct = (weights @ table.counts[:, self.part, :]).T
        precision, recall = safe_ratios(correct, predicted), safe_ratios(correct, gold)
        return (precision, recall, f1s_from(precision, recall))[self.statistic]


class _MicroMetric(_TripleMetric):
    """``precision``, ``recall`` and ``f1``: the task's micro averages under one name for every task.

    Triples: over the triple sets. Single-label tasks: every instance holds one gold and one (possibly
    invalid) predicted label, so micro precision = recall = F1 = accuracy, the same value as
    ``micro_precision`` etc.; the short names exist so that every task's report has ``f1``.
    """

    def compute(self, table: TripleTable | LabelTable) -> float:
        if isinstance(table, LabelTable):
            return accuracy(table.confusion)
        return super().compute(table)

    def compute_many(self, table: TripleTable | LabelTable, weights: np.ndarray) -> np.ndarray:
        if isinstance(table, LabelTable):
            return accuracies(table, weights)
        return super().compute_many(table, weights)


def _define(part: str, statistic: str) -> type[_TripleMetric]:
    name = statistic if part == "triple" else f"{part}_{statistic}"
    cls = type(
        f"Triple{part.title()}{statistic.title()}",
        (_MicroMetric if part == "triple" else _TripleMetric,),
        {
            "name": name,
            "part": PARTS.index(part),
            "statistic": _STATISTICS.index(statistic),
            "__doc__": f"Micro {statistic} of the {part} sets (exact, lower-cased, set matching)"
            + (" for triples; micro = accuracy for single-label tasks." if part == "triple" else "."),
        },
    )
    METRICS.add(name, cls)
    return cls


TRIPLE_METRICS: dict[str, type[_TripleMetric]] = {
    cls.name: cls for cls in (_define(part, stat) for part in PARTS for stat in _STATISTICS)
}
