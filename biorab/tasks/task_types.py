"""The five task types, registered in `biorab.registry.TASKS`.

A task type knows what an answer looks like: its `OutputConstraint` (a closed label list, or a regex for
``head|relation|tail`` lines built from the dataset's relation set), its default stop sequences, and how a
gold label is written as a training target. Dataset-specific wording lives in the templates
(`biorab.tasks.template_catalog`), not here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from biorab.errors import DataError
from biorab.records import Example, OutputConstraint
from biorab.registry import TASKS

#: Entity length bound in the triple regex. Guided decoders need a bounded pattern to terminate, and the
#: bound decides whether a small model reaches the first ``|`` within its token budget: with 200 the CPU
#: model filled 32 tokens with one rambling "head" (no triple, a parse failure). 96 still fits every gold
#: ADE and GIT entity (chars, train+test: ADE max 82, GIT max 67; ChemProt 99.9th pct 85, max 174, so
#: under 0.1% of ChemProt entities cannot be written in full).
MAX_ENTITY_CHARS = 96


class TaskType:
    """Base class: subclasses set `name` (and `closed`, `stop` where they differ)."""

    name: ClassVar[str]
    #: True when the answer is one label of a closed list (used as `OutputConstraint.choices`).
    closed: ClassVar[bool] = True
    #: The answer ends at a blank line or a new ``###`` section: small models keep writing the next example
    #: after it. Not at "\n": the original wrapper ends with "### Response: \n" and SmolLM2 often starts
    #: its answer with a newline, which a "\n" stop cuts to nothing (12 of 15 single-label prompts in a
    #: probe run, see docs/tasks_and_parsing.md).
    stop: ClassVar[tuple[str, ...]] = ("\n\n", "\n###")

    def constraint(self, labels: Sequence[str]) -> OutputConstraint | None:
        """The structured-output constraint for a label set (``None`` when the set is empty)."""
        return OutputConstraint(choices=tuple(labels)) if labels else None

    def format_target(self, example: Example, labels: Sequence[str] = ()) -> str:
        """The gold label written as a training target; a label outside `labels` is a `DataError`."""
        if labels and example.label not in labels:
            raise DataError(
                f"example {example.id}: label {example.label!r} is not one of {', '.join(labels)}",
                line=example.source_line,
                field="label",
            )
        return example.label


@TASKS.register("triple_extraction")
class TripleExtraction(TaskType):
    """Extract ``head|relation|tail`` triples; several triples are written one per line."""

    name = "triple_extraction"
    closed = False

    def constraint(self, labels: Sequence[str]) -> OutputConstraint | None:
        """A regex for one or more ``head|relation|tail`` lines, the relation from `labels` when given.

        >>> TripleExtraction().constraint(["effect", "dosage"]).regex
        '[^|\\\\n]{1,96}\\\\|(?:effect|dosage)\\\\|[^|\\\\n]{1,96}(?:\\\\n[^|\\\\n]{1,96}\\\\|(?:effect|dosage)\\\\|[^|\\\\n]{1,96})*'
        """
        entity = f"[^|\\n]{{1,{MAX_ENTITY_CHARS}}}"
        relation = "(?:" + "|".join(re.escape(r) for r in labels) + ")" if labels else entity
        line = f"{entity}\\|{relation}\\|{entity}"
        return OutputConstraint(regex=f"{line}(?:\\n{line})*")

    def format_target(self, example: Example, labels: Sequence[str] = ()) -> str:
        """Each gold triple on its own line; a relation outside `labels` is a `DataError`."""
        for triple in example.label.split("\n"):
            parts = triple.split("|")
            if len(parts) != 3 or (labels and parts[1] not in labels):
                raise DataError(
                    f"example {example.id}: {triple!r} is not 'head|relation|tail'"
                    + (f" with a relation in {', '.join(labels)}" if labels else ""),
                    line=example.source_line,
                    field="label",
                )
        return example.label


@TASKS.register("link_prediction")
class LinkPrediction(TaskType):
    """Predict the relation between two entities (a closed list of relation names)."""

    name = "link_prediction"


@TASKS.register("classification")
class Classification(TaskType):
    """Label a text (binary or multi-class, a closed label list)."""

    name = "classification"


@TASKS.register("qa")
class QuestionAnswering(TaskType):
    """Multiple-choice QA; labels are option letters in parentheses, ``(A)``..``(E)``."""

    name = "qa"


@TASKS.register("nli")
class NaturalLanguageInference(TaskType):
    """Premise/hypothesis inference with a closed label list (BioNLI: entailment/contradiction)."""

    name = "nli"


def get_task(name: str) -> TaskType:
    """The task type registered as `name` (an unknown name raises `UnknownNameError`)."""
    task: TaskType = TASKS.get(name)()
    return task
