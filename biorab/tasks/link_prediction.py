"""Link prediction: the relation between two entities, one label of a closed list (PharmKG, Hetionet)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from biorab.common.records import Example, Prediction
from biorab.parsing.base import failure, success
from biorab.parsing.closed_labels import open_answer, parse_label
from biorab.parsing.strict import strict_first_token
from biorab.tasks.task_types import LabelSpace, TaskType, pick_other
from biorab.tasks.template_catalog import link_templates

if TYPE_CHECKING:
    from biorab.tasks.template import Template


class LinkPrediction(TaskType):
    """Predict the relation between two entities (a closed list of relation names)."""

    name = "link_prediction"
    plausible_how = "label"
    title = "link prediction"
    hit_description = "The relation of ({key}) is ({value})"
    row_form = "pair"

    def templates(self, labels: tuple[str, ...]) -> dict[str, Template]:
        return link_templates(self.name, labels)

    def parse_robust(
        self, text: str, labels: Sequence[str] | None, options: Mapping[str, str] | None
    ) -> Prediction:
        """A relation of `labels` found in the answer; without labels the answer's first word."""
        answer = parse_label(text, labels) if labels else open_answer(text, first_word=True)
        return success(answer, text) if answer else failure(text)

    def parse_strict(self, text: str, labels: Sequence[str] | None) -> Prediction:
        """``eval.py``: the first space-separated token of the first response line."""
        return strict_first_token(text, labels)

    def wrong_label(self, example: Example, space: LabelSpace, rng: random.Random) -> tuple[str, str]:
        """Another relation label of the dataset."""
        return pick_other(example, space.labels, rng), "label"
