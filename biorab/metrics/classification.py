"""Metric objects of the single-label tasks: accuracy, micro / macro / weighted precision, recall and F1,
and the parse-failure rate. All read the (weighted) confusion matrix of a `LabelTable`."""

from __future__ import annotations

import numpy as np

from biorab.common.registry import METRICS
from biorab.metrics.base import FailureTable, Metric
from biorab.metrics.confusion import LabelTable, accuracies, accuracy, macro_average, weighted_average

_STATISTICS = ("precision", "recall", "f1")


@METRICS.register("accuracy")
class Accuracy(Metric[LabelTable]):
    """Share of instances whose predicted label equals the gold label (a parse failure is wrong)."""

    name = "accuracy"

    def compute(self, table: LabelTable) -> float:
        return accuracy(table.confusion)

    def compute_many(self, table: LabelTable, weights: np.ndarray) -> np.ndarray:
        """`compute` under each row of `weights`, bit for bit (`biorab.metrics.bootstrap.BatchMetric`)."""
        return accuracies(table, weights)


class _Averaged(Metric[LabelTable]):
    """Precision, recall or F1 (`statistic`) averaged over labels by `average`."""

    average: str
    statistic: str

    def compute(self, table: LabelTable) -> float:
        if self.average == "micro":
            # Every instance holds exactly one gold and one (possibly invalid) predicted label, so micro
            # precision = micro recall = micro F1 = accuracy.
            return accuracy(table.confusion)
        precision, recall, f1, support = table.prf
        values = {"precision": precision, "recall": recall, "f1": f1}[self.statistic]
        if self.average == "macro":
            return macro_average(values)
        return weighted_average(values, support)


class _MicroAveraged(_Averaged):
    """Micro precision, recall or F1: accuracy (see `_Averaged.compute`), batched like it."""

    def compute_many(self, table: LabelTable, weights: np.ndarray) -> np.ndarray:
        """`compute` under each row of `weights`, bit for bit (`biorab.metrics.bootstrap.BatchMetric`)."""
        return accuracies(table, weights)


def _define(average: str, statistic: str) -> type[_Averaged]:
    name = f"{average}_{statistic}"
    cls = type(
        f"{average.title()}{statistic.title()}",
        (_MicroAveraged if average == "micro" else _Averaged,),
        {"name": name, "average": average, "statistic": statistic, "__doc__": f"{average} {statistic}."},
    )
    METRICS.add(name, cls)
    return cls


AVERAGED_METRICS: dict[str, type[_Averaged]] = {
    f"{average}_{statistic}": _define(average, statistic)
    for average in ("micro", "macro", "weighted")
    for statistic in _STATISTICS
}


@METRICS.register("parse_failure_rate")
class ParseFailureRate(Metric[FailureTable]):
    """Share of instances whose model output could not be parsed (any task)."""

    name = "parse_failure_rate"

    def compute(self, table: FailureTable) -> float:
        total = float(table.weights.sum())
        return float(table.weights[table.failed].sum()) / total if total else 0.0
