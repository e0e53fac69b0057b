"""MedMCQA (4 options A-D): 4,000 train / 4,183 test, no dev split.

Train is the authors' ``MedMCQA_train_4000.json`` (``{"text": "Question: <q>\\n Choices: (A) ..; ...",
"label": "(C)"}``), whose text is parsed back into question and options. Test is the official MedMCQA
**dev** split ``dev.json`` (BioRAB used it as its test set; the official test has no answers), with the
answer ``cop`` 1-4 mapped to "(A)".."(D)". Test text is written in the train form, so keys and queries
look alike. The explanation field ``exp`` is not kept: it states the answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from biorab.common.labels import MEDMCQA_LABELS, QA_OPTION_LETTERS
from biorab.common.registry import DATASETS
from biorab.datasets.base import Converted, Dataset, check_label
from biorab.datasets.readers import SourceRow

# Non-greedy up to each marker: the first "; (B) " etc. ends an option.
_TRAIN_TEXT = re.compile(
    r"Question: (?P<question>.*?)\n Choices: \(A\) (?P<A>.*?); \(B\) (?P<B>.*?); \(C\) (?P<C>.*?); "
    r"\(D\) (?P<D>.*)",
    re.DOTALL,
)
_OFFICIAL_OPTIONS = {"A": "opa", "B": "opb", "C": "opc", "D": "opd"}


def qa_text(question: str, options: Mapping[str, str]) -> str:
    """The retrieval key/query of a multiple-choice question, in the authors' corpus form."""
    choices = "; ".join(f"({letter}) {text}" for letter, text in options.items())
    return f"Question: {question}\n Choices: {choices}"


@DATASETS.register("medmcqa")
class MedMCQADataset(Dataset):
    """MedMCQA: the authors' 4,000-question corpus and the official dev split as test."""

    name = "medmcqa"
    task = "qa"
    files = {"train": "medmcqa/MedMCQA_train_4000.json", "test": "medmcqa/dev.json"}

    def converter(self, split: str) -> Callable[[SourceRow], Converted]:
        return self.convert if split == "train" else self.convert_official

    def convert(self, row: SourceRow) -> Converted:
        """A row of the authors' corpus: ``{"text", "label": "(X)", "category"}``."""
        text = row.string("text")
        match = _TRAIN_TEXT.fullmatch(text)
        if match is None:
            raise row.error("expected 'Question: <q>\\n Choices: (A) ..; (B) ..; (C) ..; (D) ..'", "text")
        options = {letter: match[letter] for letter in "ABCD"}
        label = check_label(row, "label", row.string("label"), MEDMCQA_LABELS, self.name)
        fields = {"question": match["question"], "options": options, "subject": None, "source_id": None}
        return Converted(text=text, label=label, fields=fields)

    def convert_official(self, row: SourceRow) -> Converted:
        """A row of the official MedMCQA format (``question``, ``opa``..``opd``, ``cop`` 1-4)."""
        question = row.string("question")
        options = {letter: _option(row, field) for letter, field in _OFFICIAL_OPTIONS.items()}
        cop = row.value("cop")
        if isinstance(cop, bool) or not isinstance(cop, int) or not 1 <= cop <= len(options):
            raise row.error(f"expected the answer index 1-{len(options)}, got {cop!r}", "cop")
        label = check_label(row, "cop", f"({QA_OPTION_LETTERS[cop - 1]})", MEDMCQA_LABELS, self.name)
        fields = {
            "question": question,
            "options": options,
            "subject": _optional(row, "subject_name"),
            "source_id": _optional(row, "id"),
        }
        return Converted(text=qa_text(question, options), label=label, fields=fields)


def _option(row: SourceRow, field: str) -> str:
    # An option may legitimately be empty in MedMCQA, so only its type is checked.
    value = row.value(field)
    if not isinstance(value, str):
        raise row.error(f"expected a string, got {type(value).__name__} {value!r}", field)
    return value


def _optional(row: SourceRow, field: str) -> Any:
    value = row.data.get(field)
    return value if isinstance(value, str) else None
