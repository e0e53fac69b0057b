"""What every parser mode shares: the `Parser` protocol and the two ways a parse ends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from biorab.common.records import Prediction


class Parser(Protocol):
    """A parser mode (registered in `biorab.common.registry.PARSERS`). It never raises on model output."""

    def parse(
        self,
        task: str,
        text: str,
        *,
        labels: Sequence[str] | None = None,
        options: Mapping[str, str] | None = None,
    ) -> Prediction:
        """Parse `text` (a model continuation, or the original's prompt + continuation) for `task`."""
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
