"""Knowing when to abstain (issue 43 item 4): selective accuracy at fixed coverage, the area under the
risk-coverage curve and the expected calibration error from label log-probabilities, and abstention gated by
the negative-awareness probe. Definitions with their denominators: docs/metrics.md § Knowing when to abstain.

Confidence of an instance is the probability of its top-scored label, the label log-probs normalised over
the scored labels (a softmax). Every metric is a statistic of per-instance weights, so the bootstrap
(`biorab.metrics.bootstrap.metric_values`) resamples instances exactly as for every other metric.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from biorab.common.labels import AWARENESS_NOT_NEGATIVE
from biorab.metrics.base import Metric
from biorab.metrics.bootstrap import metric_values
from biorab.metrics.score_records import MetricValue

SELECTIVE = "selective/"
PROBE_GATE = "probe_gate/"
#: The coverages selective accuracy is reported at (share of scored instances answered), in report order.
COVERAGES: tuple[float, ...] = (1.0, 0.75, 0.5, 0.25)
ECE_BINS = 10
ACCURACY_AT = tuple(f"{SELECTIVE}accuracy@{round(c * 100)}" for c in COVERAGES)
AURC, ECE = f"{SELECTIVE}aurc", f"{SELECTIVE}ece"
SELECTIVE_METRICS: tuple[str, ...] = (*ACCURACY_AT, AURC, ECE)
GATED_ACCURACY, GATED_COVERAGE, PROBED_ACCURACY = (f"{PROBE_GATE}accuracy", f"{PROBE_GATE}coverage",
                                                   f"{PROBE_GATE}accuracy_probed")
PROBE_METRICS: tuple[str, ...] = (GATED_ACCURACY, GATED_COVERAGE, PROBED_ACCURACY)


def is_abstention_metric(name: str) -> bool:
    return name.startswith((SELECTIVE, PROBE_GATE))


def top_label(logprobs: Mapping[str, float]) -> tuple[str, float]:
    """The top-scored label and its probability normalised over the scored labels (ties: the label first
    in sorted order, so the choice does not depend on dict order).

    >>> label, p = top_label({"no": math.log(0.2), "yes": math.log(0.6)})
    >>> label, round(p, 9)
    ('yes', 0.75)
    """
    if not logprobs:
        raise ValueError("no scored labels")
    labels = sorted(logprobs)
    values = np.array([float(logprobs[label]) for label in labels])
    if np.any(np.isnan(values)) or not np.any(np.isfinite(values)):
        raise ValueError(f"label log-probs {dict(zip(labels, values.tolist(), strict=True))} hold a NaN or "
                         "no finite value")
    shifted = np.exp(values - np.max(values))  # -inf (impossible label) becomes probability 0
    probs = shifted / shifted.sum()
    best = int(np.argmax(probs))
    return labels[best], float(probs[best])


@dataclass(frozen=True, eq=False)
class ConfidenceTable:
    """Per scored instance: its confidence (top label's probability), whether the cell's answer is
    correct, and whether the top-scored label equals the gold; `weights` are bootstrap multiplicities."""

    confidence: np.ndarray
    answer_correct: np.ndarray
    top_correct: np.ndarray
    weights: np.ndarray

    @property
    def n(self) -> int:
        return int(self.confidence.shape[0])

    def reweight(self, weights: np.ndarray) -> ConfidenceTable:
        return replace(self, weights=weights)

    def ranked_correct(self) -> np.ndarray:
        """Answer correctness of every instance copy (by multiplicity), most confident first; ties in slice
        order."""
        order = np.lexsort((np.arange(self.n), -self.confidence))
        counts = np.rint(self.weights[order]).astype(np.int64)
        return np.repeat(self.answer_correct[order], counts).astype(float)


def selective_accuracy(table: ConfidenceTable, coverage: float) -> float:
    """Accuracy of the answers on the ceil(coverage × n) most confident instances (nan for none)."""
    ranked = table.ranked_correct()
    k = math.ceil(round(coverage * ranked.size, 9))
    return float(ranked[:k].mean()) if k else float("nan")


def aurc(table: ConfidenceTable) -> float:
    """Area under the risk-coverage curve: the mean over k = 1..n of the error rate of the k most confident
    answers (lower is better; nan for no instance)."""
    ranked = table.ranked_correct()
    if not ranked.size:
        return float("nan")
    k = np.arange(1, ranked.size + 1)
    return float(np.mean(1.0 - np.cumsum(ranked) / k))


def bin_index(confidence: np.ndarray, bins: int = ECE_BINS) -> np.ndarray:
    """Equal-width bin of each probability: bin j holds [j/bins, (j+1)/bins), the last one also 1.0.

    >>> bin_index(np.array([0.0, 0.1, 0.55, 0.999, 1.0])).tolist()
    [0, 1, 5, 9, 9]
    """
    return np.minimum(np.floor(confidence * bins).astype(np.int64), bins - 1)


def reliability(table: ConfidenceTable, bins: int = ECE_BINS) -> list[dict[str, Any]]:
    """Per non-empty bin: its bounds, weighted instance count, mean confidence and share of top labels
    equal to the gold (the reliability diagram's points)."""
    idx, w = bin_index(table.confidence, bins), table.weights
    out = []
    for j in range(bins):
        mask = (idx == j) & (w > 0)
        total = float(w[mask].sum())
        if total:
            out.append({"low": j / bins, "high": (j + 1) / bins, "n": total,
                        "confidence": float((w[mask] * table.confidence[mask]).sum() / total),
                        "accuracy": float((w[mask] * table.top_correct[mask]).sum() / total)})
    return out


def expected_calibration_error(table: ConfidenceTable, bins: int = ECE_BINS) -> float:
    """Σ over bins of (bin weight / total weight) × |bin accuracy − bin mean confidence| (nan for none)."""
    total = float(table.weights.sum())
    if not total:
        return float("nan")
    return float(sum(b["n"] / total * abs(b["accuracy"] - b["confidence"]) for b in reliability(table, bins)))


class _SelectiveAccuracy(Metric[ConfidenceTable]):
    coverage: ClassVar[float]

    def compute(self, table: ConfidenceTable) -> float:
        return selective_accuracy(table, self.coverage)


class Accuracy100(_SelectiveAccuracy):
    name, coverage = ACCURACY_AT[0], COVERAGES[0]


class Accuracy75(_SelectiveAccuracy):
    name, coverage = ACCURACY_AT[1], COVERAGES[1]


class Accuracy50(_SelectiveAccuracy):
    name, coverage = ACCURACY_AT[2], COVERAGES[2]


class Accuracy25(_SelectiveAccuracy):
    name, coverage = ACCURACY_AT[3], COVERAGES[3]


class Aurc(Metric[ConfidenceTable]):
    name = AURC

    def compute(self, table: ConfidenceTable) -> float:
        return aurc(table)


class Ece(Metric[ConfidenceTable]):
    name = ECE

    def compute(self, table: ConfidenceTable) -> float:
        return expected_calibration_error(table)


@dataclass(frozen=True, eq=False)
class GateTable:
    """Per probed instance: whether the cell's answer is correct and whether the probe trusts the
    evidence (answered "not negative")."""

    correct: np.ndarray
    trusted: np.ndarray
    weights: np.ndarray

    @property
    def n(self) -> int:
        return int(self.correct.shape[0])

    def reweight(self, weights: np.ndarray) -> GateTable:
        return replace(self, weights=weights)


def _share(numerator: np.ndarray, denominator: np.ndarray) -> float:
    return float(numerator.sum() / denominator.sum()) if denominator.sum() else float("nan")


class GatedAccuracy(Metric[GateTable]):
    """Correct answers among the probed instances the probe trusts / probed instances it trusts."""

    name = GATED_ACCURACY

    def compute(self, table: GateTable) -> float:
        kept = table.weights * table.trusted
        return _share(kept * table.correct, kept)


class GatedCoverage(Metric[GateTable]):
    """Probed instances the probe trusts / probed instances."""

    name = GATED_COVERAGE

    def compute(self, table: GateTable) -> float:
        return _share(table.weights * table.trusted, table.weights)


class ProbedAccuracy(Metric[GateTable]):
    """Correct answers among the probed instances / probed instances (the gate's 100% coverage)."""

    name = PROBED_ACCURACY

    def compute(self, table: GateTable) -> float:
        return _share(table.weights * table.correct, table.weights)


@dataclass(frozen=True)
class AbstentionReport:
    """The abstention metrics of one cell and the counts behind them (`to_json`: ``{"metrics", "counts",
    "reliability"}``)."""

    metrics: dict[str, MetricValue]
    counts: dict[str, int]
    reliability: list[dict[str, Any]]


def abstention_report(
    answer_correct: Sequence[bool],
    golds: Sequence[str],
    label_logprobs: Sequence[Mapping[str, float] | None],
    probe: tuple[Sequence[bool], Sequence[str | None]] | None,
    *,
    n_boot: int,
    seed: int,
) -> AbstentionReport:
    """Selective metrics over the instances with label log-probs (none: no selective metric) and the
    probe gate over the probed instances (`probe`: per instance whether the probe was asked, and its parsed
    judgement; ``None``: no probe in this cell). A judgement other than "True" (the probe's "the evidence is
    not negative"), an unparsable one (``None``) included, means the gate abstains."""
    if not len(answer_correct) == len(golds) == len(label_logprobs):
        raise ValueError(f"{len(answer_correct)} correctness flags, {len(golds)} golds and "
                         f"{len(label_logprobs)} label score sets")
    metrics: dict[str, MetricValue] = {}
    counts: dict[str, int] = {}
    curve: list[dict[str, Any]] = []
    scored = [i for i, s in enumerate(label_logprobs) if s]
    if scored:
        tops = [top_label(label_logprobs[i] or {}) for i in scored]
        top_right = [label == golds[i] for (label, _), i in zip(tops, scored, strict=True)]
        table = ConfidenceTable(np.array([p for _, p in tops]), np.array([answer_correct[i] for i in scored]),
                                np.array(top_right), np.ones(len(scored)))
        selective: list[Metric[Any]] = [Accuracy100(), Accuracy75(), Accuracy50(), Accuracy25(), Aurc(),
                                        Ece()]
        metrics.update(metric_values(table, selective, n_boot=n_boot, seed=seed))
        curve = reliability(table)
        counts["scored"] = len(scored)
        counts["top_is_gold"] = int(table.top_correct.sum())
    if probe is not None:
        asked, judgements = probe
        if not len(asked) == len(judgements) == len(golds):
            raise ValueError(f"{len(asked)} probe flags and {len(judgements)} judgements for {len(golds)} "
                             "instances")
        probed = [i for i, a in enumerate(asked) if a]
        if probed:
            gate = GateTable(np.array([answer_correct[i] for i in probed], dtype=float),
                             np.array([judgements[i] == AWARENESS_NOT_NEGATIVE for i in probed], dtype=float),
                             np.ones(len(probed)))
            gated: list[Metric[Any]] = [GatedAccuracy(), GatedCoverage(), ProbedAccuracy()]
            metrics.update(metric_values(gate, gated, n_boot=n_boot, seed=seed))
            counts["probed"] = len(probed)
            counts["trusted"] = int(gate.trusted.sum())
    return AbstentionReport(metrics, counts, curve)
