"""Negative-awareness rates of the paper's Testbed 4 (section "Negative Awareness Metrics").

Every retrieval-corpus value is counterfactual. An instance is a *true negative* when, given the
counterfactual example, the model's task output is wrong (there are l^t of them) and a *false negative*
when the output is still correct (l^f). The model is then asked whether the retrieved example is negative.
t counts true negatives it judges negative, f counts false negatives it judges not negative:

    true negative-awareness rate  = t / l^t        false negative-awareness rate = f / l^f

The probe (`biorab.tasks.render_awareness_probe`, the original instruction verbatim) asks for ``False``
when the example is negative and ``True`` when it is not, so by default `negative_answer` is
`biorab.common.labels.AWARENESS_NEGATIVE` (``"False"``): the one definition the probe, the pipeline
and this metric share. The paper's metric text (and `11_metric_na_rate.py`) counts ``True`` as
"negative"; pass ``negative_answer="True", not_negative_answer="False"`` for outputs of a probe worded that
way. The original script computed both rates on the true-negative file; here each rate reads its own group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from biorab.common.labels import AWARENESS_NEGATIVE, AWARENESS_NOT_NEGATIVE
from biorab.common.registry import METRICS
from biorab.metrics.base import Metric
from biorab.metrics.bootstrap import metric_values
from biorab.metrics.score_records import MetricValue


@dataclass(frozen=True, eq=False)
class AwarenessTable:
    """Per instance: was the task output correct, and did the model judge the example negative.

    `judged_negative` is 1 (judged negative), 0 (judged not negative) or -1 (no usable judgement, which
    counts as unaware in both groups).
    """

    correct: np.ndarray
    judged_negative: np.ndarray
    weights: np.ndarray

    @property
    def n(self) -> int:
        return int(self.correct.shape[0])

    def reweight(self, weights: np.ndarray) -> AwarenessTable:
        return replace(self, weights=weights)

    def counts(self) -> dict[str, float]:
        """Weighted ``l_t``, ``t``, ``l_f`` and ``f``."""
        w, wrong = self.weights, ~self.correct
        return {
            "l_t": float(w[wrong].sum()),
            "t": float(w[wrong & (self.judged_negative == 1)].sum()),
            "l_f": float(w[self.correct].sum()),
            "f": float(w[self.correct & (self.judged_negative == 0)].sum()),
        }


def awareness_table(
    task_correct: Sequence[bool],
    judgments: Sequence[str | None],
    *,
    negative_answer: str = AWARENESS_NEGATIVE,
    not_negative_answer: str = AWARENESS_NOT_NEGATIVE,
) -> AwarenessTable:
    """Encode judgements: `negative_answer` -> 1, `not_negative_answer` -> 0, anything else -> -1.

    Judgements are the probe's *parsed* answers (exact strings); ``None`` is an unparseable answer.

    >>> awareness_table([False, True, True], ["False", "True", "maybe"]).judged_negative.tolist()
    [1, 0, -1]
    """
    if len(task_correct) != len(judgments):
        raise ValueError(f"{len(task_correct)} correctness flags but {len(judgments)} judgements")
    codes = [1 if j == negative_answer else 0 if j == not_negative_answer else -1 for j in judgments]
    return AwarenessTable(
        correct=np.asarray(task_correct, dtype=bool),
        judged_negative=np.array(codes, dtype=np.int64),
        weights=np.ones(len(codes)),
    )


@METRICS.register("true_negative_awareness_rate")
class TrueNegativeAwarenessRate(Metric[AwarenessTable]):
    """t / l^t: share of wrongly answered instances whose counterfactual example is judged negative."""

    name = "true_negative_awareness_rate"

    def compute(self, table: AwarenessTable) -> float:
        c = table.counts()
        return c["t"] / c["l_t"] if c["l_t"] else float("nan")


@METRICS.register("false_negative_awareness_rate")
class FalseNegativeAwarenessRate(Metric[AwarenessTable]):
    """f / l^f: share of correctly answered instances whose counterfactual example is judged not negative."""

    name = "false_negative_awareness_rate"

    def compute(self, table: AwarenessTable) -> float:
        c = table.counts()
        return c["f"] / c["l_f"] if c["l_f"] else float("nan")


@dataclass(frozen=True)
class AwarenessReport:
    """Both negative-awareness rates with bootstrap intervals, and the counts behind them.

    Attributes:
        metrics: ``true_negative_awareness_rate`` and ``false_negative_awareness_rate``; a rate's value is
            ``None`` when its group is empty.
        counts: ``l_t``, ``t``, ``l_f``, ``f`` and ``unparsed`` (judgements that were neither answer).
    """

    metrics: dict[str, MetricValue]
    counts: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"metrics": {k: v.to_json() for k, v in self.metrics.items()}, "counts": dict(self.counts)}


def negative_awareness(
    task_correct: Sequence[bool],
    judgments: Sequence[str | None],
    *,
    negative_answer: str = AWARENESS_NEGATIVE,
    not_negative_answer: str = AWARENESS_NOT_NEGATIVE,
    n_boot: int = 1000,
    seed: int = 0,
) -> AwarenessReport:
    """The true and false negative-awareness rates (t / l^t and f / l^f) of the paper.

    Args:
        task_correct: per instance, whether the task output produced with the counterfactual example was
            correct (False -> a true negative, True -> a false negative).
        judgments: the parsed answer of the awareness probe per instance (``None`` if unparseable).
        negative_answer: the answer that means "the retrieved example is negative" (default ``"False"``,
            as the probe instruction asks; the paper's metric text uses ``"True"``).
        not_negative_answer: the answer that means "not negative" (default ``"True"``).
        n_boot: bootstrap resamples (over instances, both groups together).
        seed: seed of the resampling.

    >>> report = negative_awareness([False, False, True, True], ["False", "True", "True", None], n_boot=0)
    >>> report.metrics["true_negative_awareness_rate"].value, report.counts["f"]
    (0.5, 1)
    """
    table = awareness_table(
        task_correct, judgments, negative_answer=negative_answer, not_negative_answer=not_negative_answer
    )
    metrics: list[Metric] = [TrueNegativeAwarenessRate(), FalseNegativeAwarenessRate()]
    counts = {k: int(v) for k, v in table.counts().items()}
    counts["unparsed"] = int((table.judged_negative < 0).sum())
    return AwarenessReport(metrics=metric_values(table, metrics, n_boot=n_boot, seed=seed), counts=counts)
