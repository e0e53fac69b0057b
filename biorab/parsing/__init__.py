"""Parsing model output into `Prediction`s: two registered modes, ``strict_original`` and ``robust``.

`parse` never raises on model output: an answer it cannot recover is ``Prediction(None, raw, ok=False)``.
Only a programming error (an unknown task or mode) raises, as `UnknownNameError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from biorab.common.records import Example, Prediction
from biorab.common.registry import PARSERS, TASKS
from biorab.parsing.base import Parser, failure, option_letters, success
from biorab.parsing.choices import parse_choice
from biorab.parsing.closed_labels import normalize, parse_label
from biorab.parsing.robust import RobustParser
from biorab.parsing.strict import StrictOriginalParser
from biorab.parsing.triples import format_triples, parse_triples

if TYPE_CHECKING:
    from biorab.tasks.template import Template

MODES: tuple[str, ...] = ("strict_original", "robust")


def parse(
    task: str,
    text: str,
    *,
    mode: str = "robust",
    labels: Sequence[str] | None = None,
    options: Mapping[str, str] | None = None,
) -> Prediction:
    """Parse one model output for `task`.

    Args:
        task: a registered task (`biorab.common.registry.TASKS`); its task type holds the rule of each mode.
        text: the raw continuation (or, as the original stored it, prompt + continuation).
        mode: ``robust`` (default) or ``strict_original``.
        labels: the closed label set (for triples: the relation set, used to canonicalise relations;
            for QA: ``("(A)", ...)``, default A-E).
        options: QA option texts by letter (``{"A": "Atrophy"}``), so an answer that quotes an option's
            text instead of its letter is recovered (robust mode).

    Returns:
        The `Prediction` (canonical label, the raw text, ok); never raises on `text`.

    >>> parse("qa", " (B) Hyperophy\\n\\nQuestion: next one", labels=["(A)", "(B)", "(C)", "(D)"]).label
    '(B)'
    >>> parse("classification", "maybe", labels=["1", "0"])
    Prediction(label=None, raw='maybe', ok=False, scores=None)
    """
    parser: Parser = PARSERS.get(mode)()
    TASKS.get(task)  # an unknown task raises here, listing the registered ones
    if not isinstance(text, str):
        return failure("" if text is None else str(text))
    return parser.parse(task, text, labels=labels, options=options)


def parse_for_template(
    template: Template, text: str, *, mode: str = "robust", example: Example | None = None
) -> Prediction:
    """Parse `text` with the task and label set of the `template` it was generated from.

    The task picks the label set of the instance (`TaskType.parse_labels`: for QA the option letters of
    ``example.fields["options"]``, so a five-option question accepts ``(E)``); the options' texts go to the
    parser, so an answer quoting an option's text is recovered.

    >>> from biorab.tasks import get_template
    >>> parse_for_template(get_template("hetionet"), " Participates.\\n\\nExample: ...").label
    'participates'
    """
    labels: Sequence[str] = TASKS.get(template.task)().parse_labels(template.labels, example)
    options = example.fields.get("options") if example is not None else None
    return parse(template.task, text, mode=mode, labels=labels,
                 options=options if isinstance(options, Mapping) else None)


__all__ = [
    "MODES",
    "Parser",
    "RobustParser",
    "StrictOriginalParser",
    "failure",
    "format_triples",
    "normalize",
    "option_letters",
    "parse",
    "parse_choice",
    "parse_for_template",
    "parse_label",
    "parse_triples",
    "success",
]
