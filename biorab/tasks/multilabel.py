"""Multi-label classification, for users' own data: a text carries every label of a closed list that applies.

The bring-your-own task for sets such as the paper's private SDoH notes, where one note may mention several
social determinants at once (housing, employment, transportation...). It was added as every task is added:
this module, its line in `biorab.common.registry.TASKS` and its tests
(tests/unit/tasks/test_tasks_multilabel.py);
no other module changed.

- Label: the applying labels separated by ``;`` (``"housing; employment"``); the canonical form (what the
  parser writes and a counterfactual makes) lists them in the label set's order, joined by ``"; "``. A
  bring-your-own row gives the same string in its label field (the ``text`` row form), each label checked
  against the declared label set.
- Parsing: ``robust`` finds every label of the set named in the first answer region that names any (case,
  ``-``/``_`` and punctuation ignored, whole words); ``strict_original`` takes the first response line and
  requires every ``;``-separated part to be a label exactly.
- Metrics: micro precision, recall and F1 over the label sets (a parse failure predicts no label), and
  the parse-failure rate; headline ``f1``.
- Counterfactual: one gold label is swapped for a label the item does not have (or, when the item holds
  every label, one is dropped), so the corrupted set always differs.
- Error types: ``missing_label`` (a gold label not predicted) and ``extra_label`` (a predicted label not in
  the gold set).
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

import numpy as np

from biorab.common.errors import DataError
from biorab.common.labels import LABELS
from biorab.common.records import Example, OutputConstraint, Prediction
from biorab.metrics.triples import TripleTable
from biorab.parsing.base import failure, success
from biorab.parsing.closed_labels import normalize
from biorab.parsing.segments import answer_regions, strict_lines
from biorab.tasks.instructions import CLASSIFICATION_GENERIC
from biorab.tasks.task_types import LabelSpace, TaskType
from biorab.tasks.template import Template
from biorab.tasks.template_catalog import classification_templates

SEPARATOR = ";"
#: The instruction of the generic template (ours: the paper's private sets have no published prompt).
INSTRUCTION = (
    "This is a multi-label text classification task: assign to the input text every label that applies, "
    "the labels must be in {labels_tuple}. Write the labels separated by semicolons."
)


class MultiLabelClassification(TaskType):
    """Assign every applying label of a closed list (several, or one, per text)."""

    name = "multilabel_classification"
    confusability = None
    title = "multi-label text classification"
    # Several labels per answer: not one label of a list (no choice constraint; micro F1 is not accuracy).
    closed = False
    # A gold label is a combination of labels; each is checked in `format_target`.
    labels_fixed = False
    metrics: ClassVar[tuple[str, ...]] = ("precision", "recall", "f1", "parse_failure_rate")
    headline = "f1"

    def templates(self, labels: tuple[str, ...]) -> dict[str, Template]:
        """The generic classification family (every common variant) with this task's instruction."""
        family = classification_templates(self.name, labels)
        return {name: replace(t, task_type=self, instruction=t.instruction.replace(CLASSIFICATION_GENERIC,
                                                                                   INSTRUCTION))
                for name, t in family.items()}

    def constraint(self, labels: Sequence[str]) -> OutputConstraint | None:
        """One label, or several joined by ``"; "``.

        >>> MultiLabelClassification().constraint(["housing", "employment"]).regex
        '(?:housing|employment)(?:; (?:housing|employment))*'
        """
        if not labels:
            return None
        one = "(?:" + "|".join(re.escape(label) for label in labels) + ")"
        return OutputConstraint(regex=f"{one}(?:; {one})*")

    def format_target(self, example: Example, labels: Sequence[str] = ()) -> str:
        """The gold labels in canonical form; a label outside `labels` is a `DataError`."""
        error = self.gold_error(example.label, labels or None)
        if error is not None:
            raise DataError(f"example {example.id}: {error}", line=example.source_line, field="label")
        return canonical(self.label_names(example.label), labels) if labels else example.label

    # ---- parsing

    def parse_robust(
        self, text: str, labels: Sequence[str] | None, options: Mapping[str, str] | None
    ) -> Prediction:
        """Every label named in the first answer region that names any (without labels: the first line's
        ``;``-separated parts)."""
        for region in answer_regions(text):
            found = _named(region, labels) if labels else split_labels(region.strip().split("\n")[0])
            if found:
                return success(canonical(found, labels or found), text)
        return failure(text)

    def parse_strict(self, text: str, labels: Sequence[str] | None) -> Prediction:
        """The first response line; each ``;``-separated part must be a label exactly."""
        lines = strict_lines(text)
        parts = split_labels(lines[0]) if lines else []
        if not parts or (labels and any(part not in labels for part in parts)):
            return failure(text)
        return success(canonical(parts, labels or parts), text)

    # ---- metrics

    def instance_table(
        self, golds: Sequence[str], predictions: Sequence[Prediction], labels: Sequence[str] | None,
        triple_matching: str,
    ) -> TripleTable:
        """Per instance (predicted, gold, correct) label counts in the micro-averaged set table the
        ``precision``/``recall``/``f1`` metrics read (every row of a `TripleTable` holds the same counts)."""
        gold_sets = [self.answer_items(gold) for gold in golds]
        predicted = [self.answer_items(p.label) if p.ok else frozenset() for p in predictions]
        rows = [(len(p), len(g), len(p & g)) for p, g in zip(predicted, gold_sets, strict=True)]
        counts = np.repeat(np.array(rows, dtype=float)[:, None, :], 4, axis=1)
        return TripleTable(
            counts=counts,
            failed=np.array([not p.ok for p in predictions], dtype=bool),
            weights=np.ones(len(golds)),
            correct=np.array([p == g for p, g in zip(predicted, gold_sets, strict=True)], dtype=bool),
        )

    def gold_error(self, gold: str, labels: Sequence[str] | None) -> str | None:
        names = self.label_names(gold)
        if not names:
            return f"gold label {gold!r} names no label"
        outside = [name for name in names if labels is not None and name not in labels]
        return f"gold labels {outside} are not in the label set {list(labels or ())}" if outside else None

    def label_names(self, label: str) -> list[str]:
        """The labels a (gold) label names: its ``;``-separated parts."""
        return split_labels(label)

    # ---- answers as item sets, error types

    def answer_items(self, label: str | None) -> frozenset[str]:
        """The set of labels (``;``-separated parts, stripped); empty for an empty or unparsed label.

        >>> sorted(MultiLabelClassification().answer_items("housing;  employment; housing"))
        ['employment', 'housing']
        """
        return frozenset(split_labels(label or ""))

    error_type_origin: ClassVar[Mapping[str, str]] = {"missing_label": "ours", "extra_label": "ours"}

    def error_types(self, predicted: str | None, gold: str, *, raw: str | None = None,
                    echoes: Collection[str] = ()) -> dict[str, int]:
        """``missing_label``: gold labels not predicted; ``extra_label``: predicted labels not in the gold
        (ours: the paper has no multi-label task; `raw` and `echoes` are not read).

        >>> MultiLabelClassification().error_types("housing; food", "housing; employment")
        {'missing_label': 1, 'extra_label': 1}
        """
        p, g = self.answer_items(predicted), self.answer_items(gold)
        return {"missing_label": len(g - p), "extra_label": len(p - g)}

    # ---- counterfactuals

    def label_space(self, dataset: str, examples: Sequence[Example]) -> LabelSpace:
        """The dataset's label set (`biorab.common.labels`), else every label the training items name,
        sorted."""
        seen = {name for example in examples for name in self.label_names(example.label)}
        return LabelSpace(task=self.name, labels=LABELS.get(dataset) or tuple(sorted(seen)))

    def wrong_label(self, example: Example, space: LabelSpace, rng: random.Random) -> tuple[str, str]:
        """One gold label swapped for one the item lacks (``swap``), or one dropped when it has them all
        (``drop``)."""
        gold = self.label_names(example.label)
        absent = [label for label in space.labels if label not in gold]
        if absent:
            removed = rng.choice(gold)
            kept = [label for label in gold if label != removed]
            return canonical([*kept, rng.choice(absent)], space.labels), "swap"
        if len(gold) > 1:
            dropped = rng.choice(gold)
            return canonical([label for label in gold if label != dropped], space.labels), "drop"
        raise DataError(f"item {example.id}: the label set {list(space.labels)} has no wrong label",
                        line=example.source_line, field="label")


def split_labels(label: str) -> list[str]:
    """The ``;``-separated parts of a label, stripped, empty parts and repeats dropped, in order."""
    return list(dict.fromkeys(part.strip() for part in label.split(SEPARATOR) if part.strip()))


def canonical(names: Sequence[str], order: Sequence[str]) -> str:
    """`names` in the order of `order` (names not in it last, as given), joined by ``"; "``."""
    position = {label: i for i, label in enumerate(order)}
    return "; ".join(sorted(dict.fromkeys(names), key=lambda name: position.get(name, len(position))))


def _named(region: str, labels: Sequence[str]) -> list[str]:
    """The labels of `labels` named in `region` as whole words (after `normalize`)."""
    text = f" {normalize(region)} "
    return [label for label in labels if normalize(label) and f" {normalize(label)} " in text]
