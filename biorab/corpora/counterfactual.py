"""Wrong labels for the counterfactual testbeds (the paper's "mislabeled annotations").

Each wrong label comes from the task's label space and differs from the gold one. How a counterfactual
changes a label is the task's corruption rule (`label_space` and `wrong_label` of its task type,
`biorab.tasks`):
- triple extraction: the first triple gets a wrong relation (from the dataset's relation set) or a wrong
  tail (taken from another training item), chosen with equal odds; when one kind is impossible the other
  is used. A replacement that recreates a gold triple of the same item is never chosen, and tails are
  compared case-insensitively (the scorer lowercases), so a corrupted triple is always scored wrong;
- link prediction: another relation label of the dataset;
- classification and NLI: another class (the other class for binary label sets);
- QA: another option of the same question.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from biorab.common.errors import DataError
from biorab.common.records import Example
from biorab.tasks import get_task
from biorab.tasks.task_types import LabelSpace, pick_other

__all__ = ["LabelSpace", "label_space", "pick_other", "wrong_label"]


def label_space(dataset: str, examples: Sequence[Example]) -> LabelSpace:
    """The label space of `dataset` by its task's rule: `biorab.common.labels` when it knows the dataset, else
    the
    labels seen in `examples` (bring-your-own datasets), sorted."""
    if not examples:
        raise DataError(f"dataset {dataset!r} has no training items to build a corpus from")
    return get_task(examples[0].task).label_space(dataset, examples)


def wrong_label(example: Example, space: LabelSpace, rng: random.Random) -> tuple[str, str]:
    """A wrong label for `example` and how it was made (``relation``, ``tail``, ``label``,
    ``other_class`` or ``option``), by its task's rule."""
    return get_task(example.task).wrong_label(example, space, rng)
