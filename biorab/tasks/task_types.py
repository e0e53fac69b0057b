"""The five task types, registered in `biorab.registry.TASKS`.

A task type knows what an answer looks like: its `OutputConstraint` (a closed label list, or a regex for
``head|relation|tail`` lines built from the dataset's relation set), its default stop sequences, how a
gold label is written as a training target, an answer as a set of normalized items (`answer_items`: two
answers are the same iff their item sets are equal) and the error types of a prediction (`error_types`).
Dataset-specific wording lives in the templates (`biorab.tasks.template_catalog`), not here.
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

    def answer_items(self, label: str | None) -> frozenset[str]:
        """The answer as a set of normalized items: the one canonical label, as the label metrics compare it
        (exactly); the empty set for an empty or unparsed (``None``) label.

        >>> Classification().answer_items("True"), Classification().answer_items(None)
        (frozenset({'True'}), frozenset())
        """
        return frozenset({label}) if label else frozenset()

    def error_types(self, predicted: str | None, gold: str) -> dict[str, int]:
        """``{"wrong_label": 1}`` when the predicted answer differs from the gold one (an unparsed prediction,
        ``None`` or empty, included), else ``{"wrong_label": 0}``.

        >>> QuestionAnswering().error_types("(B)", "(A)"), QuestionAnswering().error_types("(A)", "(A)")
        ({'wrong_label': 1}, {'wrong_label': 0})
        """
        return {"wrong_label": int(self.answer_items(predicted) != self.answer_items(gold))}


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

    def answer_items(self, label: str | None) -> frozenset[str]:
        """Each triple of the label as ``head|relation|tail``, normalized as the triple metrics normalize
        for scoring (`biorab.metrics.triples.parse_triples`: lower-cased, stripped, whitespace collapsed);
        a repeated triple counts once, an empty or unparsed (``None``) label is the empty set.

        >>> sorted(TripleExtraction().answer_items("Aspirin | effect |  Rash\\naspirin|effect|rash"))
        ['aspirin|effect|rash']

        Raises:
            ValueError: a non-blank line is not ``head|relation|tail``.
        """
        return frozenset("|".join(triple) for triple in _triples(label))

    def error_types(self, predicted: str | None, gold: str) -> dict[str, int]:
        """The paper's error types (§2.8): ``wrong_head``, ``wrong_relation``, ``wrong_tail``,
        ``over_long_span``, ``missing_triple``, ``extra_triple``, counted for one instance with the pairing
        rule of `biorab.tasks.triple_errors` (every type present, zeros included).

        >>> counts = TripleExtraction().error_types("tamoxifen|effect|retinal changes",
        ...                                         "tamoxifen|dosage|high-dose")
        >>> {name: n for name, n in counts.items() if n}
        {'extra_triple': 1, 'missing_triple': 1}
        """
        from biorab.tasks.triple_errors import triple_error_types

        return triple_error_types(_triples(predicted), _triples(gold))


def _triples(label: str | None) -> frozenset[tuple[str, str, str]]:
    # Imported here: biorab.metrics imports this package (the awareness probe's labels).
    from biorab.metrics.triples import parse_triples

    return parse_triples(label or "")


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
