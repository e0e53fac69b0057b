"""What the reported numbers are, said the same way in every report: display names of metrics that equal
accuracy, the awareness answer convention, and the leak share. Only names shown to readers change; the
``summary.json`` and MLflow keys stay as the metrics name them.
"""

from __future__ import annotations

from biorab.common.registry import TASKS

#: The metric keys of a single-label task that equal its accuracy (the unprefixed ones are micro).
EQUAL_TO_ACCURACY: frozenset[str] = frozenset(
    {"precision", "recall", "f1", "micro_precision", "micro_recall", "micro_f1"}
)

ACCURACY_IDENTITY = (
    "On single-label tasks (link prediction, classification, QA, NLI) micro-averaged precision, recall "
    "and F1 equal accuracy (each instance has one gold and one predicted label), so they are shown as "
    "accuracy; the JSON and MLflow keys keep their names (`micro_f1`, ...)."
)

AWARENESS_CONVENTION = (
    "Negative-awareness rates: the probe asks whether the retrieved example is correct and the answer "
    "`False` counts as judging it negative (the probe's own instruction); the paper's metric text counts "
    "`True` as negative (docs/DEVIATIONS.md M-2). The rates are defined on a fully counterfactual corpus "
    "(every retrieved example wrong): the `negative_awareness` testbed or `counterfactual` at rate 1."
)

LEAK_SHARE = (
    "Leak share: the share of a cell's queries whose retrieved hits include the query's own text "
    "(lower-cased, whitespace collapsed), e.g. a test sentence that also sits in the training split. "
    "`exclude_test_duplicates: true` removes such hits (leak share 0); the paper's setup keeps them."
)


def single_label(task: str) -> bool:
    """True for a single-label task (its task type is `closed`): one gold and one predicted label per
    instance, so every instance adds one to the micro-averaged true positives or one false positive and one
    false negative; micro P = R = F1 = accuracy.

    >>> single_label("qa"), single_label("no such task")
    (True, False)
    """
    return task in TASKS and bool(TASKS.get(task).closed)


def display_name(task: str, metric: str) -> str:
    """The name a report shows for `metric` of `task`: ``accuracy (micro_f1)`` where it equals accuracy.

    >>> display_name("classification", "micro_f1"), display_name("qa", "macro_f1")
    ('accuracy (micro_f1)', 'macro_f1')
    """
    if single_label(task) and metric in EQUAL_TO_ACCURACY:
        return f"accuracy ({metric})"
    return metric


def headline_name(task: str, metric: str) -> str:
    """The headline metric's name in a sweep table: ``accuracy`` where it equals it, else the metric with
    spaces (``macro f1``).

    >>> headline_name("link_prediction", "micro_f1"), headline_name("qa", "macro_f1")
    ('accuracy', 'macro f1')
    """
    if single_label(task) and metric in EQUAL_TO_ACCURACY:
        return "accuracy"
    return metric.replace("_", " ")
