"""``robust`` (the default): recover the answer from realistic model output.

Handles extra prose, markdown (bullets, bold, tables, code fences), casing, several triples, echoed
``### Response:`` / ``Response:`` prefixes, a model that goes on to write the next example, option text
instead of a letter, and True/False/yes/no synonyms mapped onto the dataset's labels. Canonical forms:
triples ``h|r|t`` lines (trimmed, single-spaced, original casing), QA ``(A)``, other tasks the label
string from `labels`. Without `labels`, a closed-label task returns the cleaned first word (link
prediction) or first line (classification, NLI) of the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from biorab.parsing.base import failure, option_letters, success
from biorab.parsing.choices import parse_choice
from biorab.parsing.closed_labels import parse_label
from biorab.parsing.segments import answer_lines, answer_regions
from biorab.parsing.triples import format_triples, parse_triples
from biorab.records import Prediction
from biorab.registry import PARSERS


@PARSERS.register("robust")
class RobustParser:
    """Recovers the answer from realistic output (see the module docstring)."""

    def parse(
        self,
        task: str,
        text: str,
        *,
        labels: Sequence[str] | None = None,
        options: Mapping[str, str] | None = None,
    ) -> Prediction:
        if task == "triple_extraction":
            triples = parse_triples(text, labels)
            return success(format_triples(triples), text) if triples else failure(text)
        if task == "qa":
            choice = parse_choice(text, option_letters(labels), options)
            return success(choice, text) if choice else failure(text)
        if labels:
            answer = parse_label(text, labels)
        else:
            answer = _open_answer(text, first_word=task == "link_prediction")
        return success(answer, text) if answer else failure(text)


def _open_answer(text: str, *, first_word: bool) -> str | None:
    """Without a label set: the first line (or its first word) of the answer, trimmed of punctuation."""
    for region in answer_regions(text):
        lines = answer_lines(region)
        if lines:
            answer = lines[0].split()[0] if first_word else lines[0]
            answer = answer.strip(" .,;:!?\"'")
            if answer:
                return answer
    return None
