"""``strict_original``: the original scripts' parsing rules, reproduced exactly where they were published.

- Triples (``5_metrics.py``): the response segment must be exactly one line ``h|r|t`` with three parts;
  head and tail are lowercased, have runs of seven spaces collapsed and are stripped; the relation is
  lowercased but NOT stripped (so ``" effect"`` never matches ``"effect"``, as in the original).
- Link prediction (``eval.py``): the first space-separated token of the first response line.
- QA (MedMCQA): the first ``(X)`` of the response.
- Classification / NLI (no published script; the awareness-rate script's rule): the first response line
  must equal a label exactly.

An answer outside `labels` (when given) is a parse failure rather than a label the metrics do not know.
Each task type picks its rule (`parse_strict` of its `biorab.tasks` module) from the functions here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from biorab.common.records import Prediction
from biorab.common.registry import PARSERS
from biorab.parsing.base import TaskRules, failure, option_letters, success
from biorab.parsing.segments import strict_lines, strict_response

_CHOICE = re.compile(r"\(([A-Z])\)")


def strict_triple(text: str) -> Prediction:
    """The original triple rule.

    >>> strict_triple("Levodopa|effect|Parkinson disease\\n\\nExample 6: a|b|c").label
    'levodopa|effect|parkinson disease'
    >>> strict_triple(" Levodopa | effect | Parkinson disease").label
    'levodopa| effect |parkinson disease'
    >>> strict_triple("a|effect|b\\nc|effect|d").ok
    False
    """
    lines = strict_lines(text)
    if lines is None or len(lines) != 1:
        return failure(text)
    parts = lines[0].split("|")
    if len(parts) != 3:
        return failure(text)
    head = parts[0].lower().replace("       ", " ").strip()
    tail = parts[2].lower().replace("       ", " ").strip()
    return success(f"{head}|{parts[1].lower()}|{tail}", text)


def strict_first_token(text: str, labels: Sequence[str] | None) -> Prediction:
    """The link-prediction rule: first ``" "``-separated token of the first response line.

    >>> strict_first_token("participates in\\nbinds", None).label
    'participates'
    >>> strict_first_token(" participates", ["participates"]).ok
    False
    """
    lines = strict_lines(text)
    if not lines:
        return failure(text)
    token = lines[0].split(" ")[0]
    return _checked(token, labels, text)


def strict_choice(text: str, labels: Sequence[str] | None) -> Prediction:
    """The MedMCQA rule: the first ``(X)`` in the response.

    >>> strict_choice("The answer is (C) Atrophy (A)", None).label
    '(C)'
    """
    match = _CHOICE.search(strict_response(text))
    if match is None or match.group(1) not in option_letters(labels):
        return failure(text)
    return success(f"({match.group(1)})", text)


def strict_exact_line(text: str, labels: Sequence[str] | None) -> Prediction:
    """Classification/NLI: the first response line, compared exactly with the labels.

    >>> strict_exact_line("1\\n\\nExample: ...", ["1", "0"]).label
    '1'
    >>> strict_exact_line("True-The retrieved example is not a negative example", ["True", "False"]).ok
    False
    """
    lines = strict_lines(text)
    if not lines:
        return failure(text)
    return _checked(lines[0], labels, text)


def _checked(answer: str, labels: Sequence[str] | None, text: str) -> Prediction:
    if not answer or (labels and answer not in labels):
        return failure(text)
    return success(answer, text)


@PARSERS.register("strict_original")
class StrictOriginalParser:
    """The original scripts' rules (see the module docstring): each task type's `parse_strict`."""

    def parse(
        self,
        rules: TaskRules,
        text: str,
        *,
        labels: Sequence[str] | None = None,
        options: Mapping[str, str] | None = None,
    ) -> Prediction:
        return rules.parse_strict(text, labels)
