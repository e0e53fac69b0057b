"""Natural language inference: premise and hypothesis, one label of a closed list (BioNLI)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from biorab.common.labels import BIONLI_LABELS
from biorab.tasks.task_types import TaskType
from biorab.tasks.template_catalog import nli_templates

if TYPE_CHECKING:
    from biorab.tasks.template import Template


class NaturalLanguageInference(TaskType):
    """Premise/hypothesis inference with a closed label list (BioNLI: entailment/contradiction)."""

    name = "nli"
    title = "natural language inference"
    row_form = "premise_hypothesis"
    headline = "macro_f1"

    def templates(self, labels: tuple[str, ...]) -> dict[str, Template]:
        return nli_templates(self.name, labels or BIONLI_LABELS, "{text}")
