"""Shared rules of the link-prediction loaders (PharmKG, Hetionet).

The source rows are ``{"text": "What is the relationship between <head> and <tail> ?", "label": relation}``.
`text` is kept byte for byte (PharmKG writes "what" in lower case); ``fields`` gets ``head`` and ``tail``.
An entity name may itself contain " and " ("head and neck neoplasms", "regulation of ERK1 and ERK2
cascade"), so the split point is chosen with the entities that occur unambiguously anywhere in the
dataset's split files: the split whose parts are known entities wins, ties go to the leftmost " and "
(in Hetionet the ambiguous names are tails: pathways, processes, diseases).
"""

from __future__ import annotations

import re
from collections.abc import Set
from pathlib import Path
from typing import ClassVar

from biorab.datasets.base import Converted, Dataset, check_label
from biorab.datasets.readers import SourceRow

_QUESTION = re.compile(r"[Ww]hat is the relationship between (?P<pair>.+) \?", re.DOTALL)
_AND = " and "


def question_text(head: str, tail: str) -> str:
    """The canonical link-prediction input for an entity pair."""
    return f"What is the relationship between {head} and {tail} ?"


def split_pair(pair: str, known: Set[str]) -> tuple[str, str] | None:
    """Split ``"<head> and <tail>"`` into its two entities, preferring splits into known entities.

    >>> split_pair("head and neck neoplasms and isyna1", {"isyna1"})
    ('head and neck neoplasms', 'isyna1')
    >>> split_pair("LYN and regulation of ERK1 and ERK2 cascade", set())
    ('LYN', 'regulation of ERK1 and ERK2 cascade')
    """
    cuts = [m.start() for m in re.finditer(re.escape(_AND), pair)]
    candidates = [(pair[:cut], pair[cut + len(_AND) :]) for cut in cuts]
    candidates = [(h, t) for h, t in candidates if h.strip() and t.strip()]
    if not candidates:
        return None
    # max() keeps the first of equal scores, i.e. the leftmost " and ".
    return max(candidates, key=lambda ht: (ht[0] in known) + (ht[1] in known))


class LinkPredictionDataset(Dataset):
    """Base of the link-prediction loaders; subclasses set `labels` and the split files."""

    task = "link_prediction"
    labels: ClassVar[tuple[str, ...]]

    def __init__(self, *, data_dir: str | Path | None = None) -> None:
        super().__init__(data_dir=data_dir)
        self._known: set[str] | None = None

    def source_files(self, split: str) -> tuple[Path, ...]:
        """Every split file: converting a row of any split reads `known_entities` from all of them."""
        self.path(split)  # an unknown split is an error here too
        return tuple(self.path(s) for s in self.splits())

    def known_entities(self) -> set[str]:
        """Entity names that occur in a question with a single " and ", over all present split files."""
        if self._known is None:
            known: set[str] = set()
            for split in self.splits():
                if not self.path(split).is_file():
                    continue
                for row in self.rows(split):
                    match = _QUESTION.fullmatch(str(row.data.get("text", "")))
                    if match and match["pair"].count(_AND) == 1:
                        known.update(match["pair"].split(_AND))
            self._known = known
        return self._known

    def convert(self, row: SourceRow) -> Converted:
        text = row.string("text")
        match = _QUESTION.fullmatch(text)
        pair = split_pair(match["pair"], self.known_entities()) if match else None
        if pair is None:
            raise row.error(
                f"expected 'What is the relationship between <head> and <tail> ?', got {text!r}", "text"
            )
        label = check_label(row, "label", row.string("label"), self.labels, self.name)
        return Converted(text=text, label=label, fields={"head": pair[0], "tail": pair[1]})
