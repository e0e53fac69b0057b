"""Multiple-choice question answering: the answer is an option letter, ``(A)``..``(E)`` (MedMCQA)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from biorab.common.labels import MEDMCQA_LABELS
from biorab.common.records import Example, Prediction
from biorab.parsing.base import failure, option_letters, success
from biorab.parsing.choices import parse_choice
from biorab.parsing.strict import strict_choice
from biorab.tasks.task_types import LabelSpace, TaskType, pick_other
from biorab.tasks.template_catalog import qa_templates

if TYPE_CHECKING:
    from biorab.tasks.template import Template


class QuestionAnswering(TaskType):
    """Multiple-choice QA; labels are option letters in parentheses, ``(A)``..``(E)``."""

    name = "qa"
    confusability = "option_texts"
    plausible_how = "option"
    title = "question answering"
    hit_description = "The answer of ({key}) is ({value})"
    row_form = "choices"
    # The options vary per question (a five-option question answers (E)).
    labels_fixed = False
    # An option letter names this question's own option: a retrieved question's "(B)" says nothing about
    # this one's (docs/metrics.md, "Claim diagnostics": why MedMCQA has none).
    items_shared = False
    headline = "macro_f1"

    def templates(self, labels: tuple[str, ...]) -> dict[str, Template]:
        return qa_templates(self.name, labels or MEDMCQA_LABELS, "{text}")

    def parse_labels(self, labels: Sequence[str], example: Example | None) -> Sequence[str]:
        """The instance's own option letters (``fields["options"]``) when it has them, so a five-option
        question accepts ``(E)``."""
        options = _options(example)
        return tuple(f"({str(key).strip('()').upper()})" for key in sorted(options)) if options else labels

    def parse_robust(
        self, text: str, labels: Sequence[str] | None, options: Mapping[str, str] | None
    ) -> Prediction:
        """An option letter, or an option's text quoted in the answer (`biorab.parsing.choices`)."""
        choice = parse_choice(text, option_letters(labels), options)
        return success(choice, text) if choice else failure(text)

    def parse_strict(self, text: str, labels: Sequence[str] | None) -> Prediction:
        """The MedMCQA rule: the first ``(X)`` of the response."""
        return strict_choice(text, labels)

    def wrong_label(self, example: Example, space: LabelSpace, rng: random.Random) -> tuple[str, str]:
        """Another option of the same question."""
        options = _options(example)
        letters = tuple(f"({letter})" for letter in sorted(options)) if options else space.labels
        return pick_other(example, letters, rng), "option"


def _options(example: Example | None) -> Mapping[str, str]:
    options = example.fields.get("options") if example is not None else None
    return options if isinstance(options, Mapping) and options else {}
