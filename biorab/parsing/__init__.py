"""Parsing model output into `Prediction`s: two registered modes, ``strict_original`` and ``robust``.

`parse` never raises on model output: an answer it cannot recover is ``Prediction(None, raw, ok=False)``.
Only a programming error (an unknown task or mode) raises, as `UnknownNameError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from biorab.parsing.base import Parser, failure, option_letters, success
from biorab.parsing.choices import parse_choice
from biorab.parsing.closed_labels import normalize, parse_label
from biorab.parsing.robust import RobustParser
from biorab.parsing.strict import StrictOriginalParser
from biorab.parsing.triples import format_triples, parse_triples
from biorab.records import TASK_NAMES, Example, Prediction
from biorab.registry import PARSERS
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
        task: one of ``triple_extraction``, ``link_prediction``, ``classification``, ``qa``, ``nli``.
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
    >>> parse("triple_extraction", "Levodopa|effect|Parkinson disease", mode="strict_original").label
    'levodopa|effect|parkinson disease'
    >>> parse("classification", "maybe", labels=["1", "0"])
    Prediction(label=None, raw='maybe', ok=False, scores=None)
    """
    parser: Parser = PARSERS.get(mode)()
    if task not in TASK_NAMES:
        from biorab.errors import UnknownNameError

        raise UnknownNameError("task", task, TASK_NAMES)
    if not isinstance(text, str):
        return failure("" if text is None else str(text))
    return parser.parse(task, text, labels=labels, options=options)


def parse_for_template(
    template: Template, text: str, *, mode: str = "robust", example: Example | None = None
) -> Prediction:
    """Parse `text` with the task and label set of the `template` it was generated from.

    For QA, the option letters and texts are taken from ``example.fields["options"]`` when given, so a
    five-option question accepts ``(E)`` and an answer quoting an option's text is recovered.

    >>> from biorab.tasks import get_template
    >>> parse_for_template(get_template("hetionet"), " Participates.\\n\\nExample: ...").label
    'participates'
    """
    labels: Sequence[str] = template.labels
    options = example.fields.get("options") if example is not None else None
    if template.task == "qa" and isinstance(options, Mapping) and options:
        labels = tuple(f"({str(key).strip('()').upper()})" for key in sorted(options))
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
