"""What the reported numbers are, said the same way in every report: display names of metrics that equal
accuracy, the awareness answer convention, and the leak share. Only names shown to readers change; the
``summary.json`` and MLflow keys stay as the metrics name them.
"""

from __future__ import annotations

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


def display_name(single_label: bool, metric: str) -> str:
    """The name a report shows for `metric` of a task: ``accuracy (micro_f1)`` where it equals accuracy
    (`single_label`: the task is single-label, `biorab.tasks.single_label`).

    >>> display_name(True, "micro_f1"), display_name(True, "macro_f1"), display_name(False, "micro_f1")
    ('accuracy (micro_f1)', 'macro_f1', 'micro_f1')
    """
    if single_label and metric in EQUAL_TO_ACCURACY:
        return f"accuracy ({metric})"
    return metric


def headline_name(single_label: bool, metric: str) -> str:
    """The headline metric's name in a sweep table: ``accuracy`` where it equals it, else the metric with
    spaces (``macro f1``; `single_label`: as in `display_name`).

    >>> headline_name(True, "micro_f1"), headline_name(True, "macro_f1")
    ('accuracy', 'macro f1')
    """
    if single_label and metric in EQUAL_TO_ACCURACY:
        return "accuracy"
    return metric.replace("_", " ")
