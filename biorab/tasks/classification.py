"""Text classification: one label of a closed list (ADE-corpus-v2, SemClass, bring-your-own sets)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from biorab.tasks.task_types import TaskType
from biorab.tasks.template_catalog import classification_templates

if TYPE_CHECKING:
    from biorab.tasks.template import Template


class Classification(TaskType):
    """Label a text (binary or multi-class, a closed label list): every rule is the closed-label base's."""

    name = "classification"
    title = "text classification"

    def templates(self, labels: tuple[str, ...]) -> dict[str, Template]:
        return classification_templates(self.name, labels)
