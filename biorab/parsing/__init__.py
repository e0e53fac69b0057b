"""Parsing model output into `Prediction`s: two registered modes, ``strict_original`` and ``robust``.

The task type is the entry point (`biorab.tasks.TaskType.parse`, `biorab.tasks.Template.parse`, or
`biorab.tasks.parse` by task name); it calls `parse_with` here with its own rules. This package reads no
task registry: it is the machinery below the tasks. Parsing never raises on model output: an answer it
cannot recover is ``Prediction(None, raw, ok=False)``. Only a programming error (an unknown task or mode)
raises, as `UnknownNameError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from biorab.common.records import Prediction
from biorab.common.registry import PARSERS
from biorab.parsing.base import Parser, TaskRules, failure, option_letters, success
from biorab.parsing.choices import parse_choice
from biorab.parsing.closed_labels import normalize, parse_label
from biorab.parsing.robust import RobustParser
from biorab.parsing.strict import StrictOriginalParser
from biorab.parsing.triples import format_triples, parse_triples

MODES: tuple[str, ...] = ("strict_original", "robust")


def parse_with(
    rules: TaskRules,
    text: str,
    *,
    mode: str = "robust",
    labels: Sequence[str] | None = None,
    options: Mapping[str, str] | None = None,
) -> Prediction:
    """Parse one model output with a task type's `rules` in `mode` (what `TaskType.parse` calls; ask the
    task: ``get_task("qa").parse(text)``, or a template: `Template.parse`).

    Args:
        rules: the task type (`biorab.tasks.task_types.TaskType`): it holds the rule of each mode.
        text: the raw continuation (or, as the original stored it, prompt + continuation).
        mode: ``robust`` (default) or ``strict_original``; another name raises `UnknownNameError`.
        labels: the closed label set (for triples: the relation set, used to canonicalise relations;
            for QA: ``("(A)", ...)``, default A-E).
        options: QA option texts by letter (``{"A": "Atrophy"}``), so an answer that quotes an option's
            text instead of its letter is recovered (robust mode).

    Returns:
        The `Prediction` (canonical label, the raw text, ok); never raises on `text`.

    >>> from biorab.tasks import get_task
    >>> parse_with(get_task("qa"), " (B) Hyperophy\\n\\nQuestion: next one", labels=["(A)", "(B)"]).label
    '(B)'
    >>> parse_with(get_task("qa"), None)  # not text: a failure, never an exception
    Prediction(label=None, raw='', ok=False, scores=None)
    """
    parser: Parser = PARSERS.get(mode)()
    if not isinstance(text, str):
        return failure("" if text is None else str(text))
    return parser.parse(rules, text, labels=labels, options=options)


__all__ = [
    "MODES",
    "Parser",
    "RobustParser",
    "StrictOriginalParser",
    "failure",
    "format_triples",
    "normalize",
    "option_letters",
    "TaskRules",
    "parse_choice",
    "parse_label",
    "parse_triples",
    "parse_with",
    "success",
]
