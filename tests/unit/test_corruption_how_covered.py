"""The multi-label corruption kinds (``swap``, ``drop``) have an attribution ``how``: a corrupted
multi-label hit was tagged ``how: null`` before they were mapped."""

from __future__ import annotations

import random

import pytest

from biorab.attribution.evidence import Evidence
from biorab.common.records import Example, Hit
from biorab.corpora.corpus import LedgerEntry
from biorab.tasks import get_task
from biorab.tasks.task_types import LabelSpace

LABELS = ("housing", "food", "employment")


@pytest.mark.parametrize(("gold", "space", "kind"), [
    ("housing; food", LABELS, "swap"),                  # a label the item lacks exists: one is swapped
    ("housing; food; employment", LABELS, "drop"),      # it has them all: one is dropped
])
def test_multilabel_corruptions_are_tagged_as_the_label(gold: str, space: tuple[str, ...], kind: str) -> None:
    task = get_task("multilabel_classification")
    example = Example(id="s/train/1", dataset="s", task=task.name, split="train", text="t", label=gold)
    wrong, how = task.wrong_label(example, LabelSpace(task=task.name, labels=space), random.Random(0))
    assert how == kind and wrong != gold
    evidence = Evidence("s", {"s/train/1": LedgerEntry("s/train/1", gold, wrong, how)}, frozenset())
    tag = evidence.tag(Hit("s/train/1", 1.0, 0, "k", wrong, "s"))
    assert tag["corrupted"] and tag["how"] == "label"

