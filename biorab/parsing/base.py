"""What every parser mode shares: the `Parser` protocol, what a mode asks of a task (`TaskRules`), and the
two ways a parse ends.

The rules live with the task types (`biorab.tasks`), which call this package: a parser is handed the task
type's rules and never looks a task up by name (this package reads no task registry)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from biorab.common.records import Prediction


class TaskRules(Protocol):
    """A task type's rule for each parser mode (`biorab.tasks.task_types.TaskType`)."""

    def parse_robust(
        self, text: str, labels: Sequence[str] | None, options: Mapping[str, str] | None
    ) -> Prediction: ...

    def parse_strict(self, text: str, labels: Sequence[str] | None) -> Prediction: ...


class Parser(Protocol):
    """A parser mode (registered in `biorab.common.registry.PARSERS`). It never raises on model output."""

    def parse(
        self,
        rules: TaskRules,
        text: str,
        *,
        labels: Sequence[str] | None = None,
        options: Mapping[str, str] | None = None,
    ) -> Prediction:
        """Parse `text` (a model continuation, or the original's prompt + continuation) with the task's
        `rules`."""
        ...


def failure(text: str) -> Prediction:
    """A parse failure: no label, the raw text kept for audits."""
    return Prediction(label=None, raw=text, ok=False)


def success(label: str, text: str) -> Prediction:
    """A parsed answer in the task's canonical form."""
    return Prediction(label=label, raw=text, ok=True)


def option_letters(labels: Sequence[str] | None) -> tuple[str, ...]:
    """The option letters of a QA label set: ``("(A)", "(B)")`` -> ``("A", "B")`` (A-E when ``None``).

    >>> option_letters(["(A)", "(B)"])
    ('A', 'B')
    """
    if not labels:
        return ("A", "B", "C", "D", "E")
    return tuple(label.strip().strip("()").upper() for label in labels)
