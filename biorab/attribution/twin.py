"""A retrieving cell's no-retrieval twin, the flip of each instance against it, and the twin's prior.

The twin is the cell of the same run (one model, one sampling setting) with the same dataset slice (name,
split and resample: `CellPlan.slice_key`) and sampling seed whose retrieval setting retrieves nothing
(testbed ``none``), and whose rows hold every instance id of the cell; among several, the one with the same
parser, then the first by cell id. Instances are paired by id. A sweep looks further, among the cells of the
model's other runs, for a cell without a twin in its own run (`biorab.sweep.twins`).

The twin's answer is the model's prior: how sure it was without evidence is the label log-prob margin of
its answer (top label minus the runner-up, in nats) where labels are scored, else only whether it was right
(`prior_bin`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from biorab.ral.specs.cell_records import CellPlan

HELPED, HURT, UNCHANGED = "helped", "hurt", "unchanged"

#: The prior bins on the twin's label log-prob margin (nats; upper bounds, exclusive), as ClashEval bins its
#: prior probability: below 1 nat the top label is under e ≈ 2.7 times as likely as the next one, from 3 nats
#: on over e^3 ≈ 20 times.
MARGIN_BINS: tuple[tuple[float, str], ...] = ((1.0, "margin_lt_1"), (3.0, "margin_1_to_3"),
                                               (math.inf, "margin_ge_3"))
#: The prior bins where the twin's labels are not scored: its correctness.
CORRECTNESS_BINS: tuple[str, str] = ("twin_wrong", "twin_right")
PRIOR_BINS: tuple[str, ...] = (*(name for _, name in MARGIN_BINS), *CORRECTNESS_BINS)
#: How the reports head each bin's column.
PRIOR_BIN_LABELS: dict[str, str] = {"margin_lt_1": "prior margin < 1", "margin_1_to_3": "prior margin 1-3",
                                    "margin_ge_3": "prior margin ≥ 3", "twin_wrong": "prior: twin wrong",
                                    "twin_right": "prior: twin right"}

T = TypeVar("T")


def find_twin(plan: CellPlan, plans: Sequence[CellPlan]) -> CellPlan | None:
    """`plan`'s first twin candidate among `plans` (``None`` for a cell that retrieves nothing, or without
    one; `first_covering` also checks the instance ids)."""
    candidates = twin_candidates(plan, plans)
    return candidates[0] if candidates else None


def twin_candidates(plan: CellPlan, plans: Sequence[CellPlan]) -> list[CellPlan]:
    """The cells of `plans` that can be `plan`'s twin, best first: the same parser first, then by cell id
    (a stable sort: cells with the same id keep the order of `plans`)."""
    if not plan.retrieves or plan.dataset is None:
        return []
    same = [p for p in plans if p.dataset == plan.dataset and p.split == plan.split
            and p.slice_key == plan.slice_key and p.sampling_seed == plan.sampling_seed
            and p.retrieval is not None and not p.retrieves and p.source == plan.source]
    same.sort(key=lambda p: (p.parser != plan.parser, p.cell_id))
    return same


def first_covering(plan: CellPlan, own_ids: set[str], pool: Sequence[T], plan_of: Callable[[T], CellPlan],
                   ids: Callable[[T], set[str]]) -> T | None:
    """The first entry of `pool`, in `twin_candidates` order of their plans, whose rows hold every id of
    `own_ids` (a slice is the split's first rows, so a larger limit of the same slice covers a smaller one;
    a twin with fewer instances would leave some unpaired and is not used)."""
    by_plan = {id(plan_of(entry)): entry for entry in pool}
    for candidate in twin_candidates(plan, [plan_of(entry) for entry in pool]):
        entry = by_plan[id(candidate)]
        if own_ids <= ids(entry):
            return entry
    return None


def flip(twin_correct: bool, correct: bool) -> str:
    """``helped`` (wrong without retrieval, right with it), ``hurt`` (the reverse) or ``unchanged``.

    >>> flip(False, True), flip(True, False), flip(True, True)
    ('helped', 'hurt', 'unchanged')
    """
    if correct and not twin_correct:
        return HELPED
    if twin_correct and not correct:
        return HURT
    return UNCHANGED


def label_margin(scores: Mapping[str, float] | None) -> float | None:
    """The log-prob margin of the top label over the runner-up (``None`` with fewer than two scores).

    >>> label_margin({"True": -0.1, "False": -2.4})
    2.3
    """
    if not scores or len(scores) < 2:
        return None
    top, second = sorted(scores.values(), reverse=True)[:2]
    return round(top - second, 12)


def prior_bin(margin: float | None, twin_right: bool) -> str:
    """The prior bin of one instance: by the twin's margin (`MARGIN_BINS`) when its labels were scored,
    else by its correctness.

    >>> prior_bin(0.4, True), prior_bin(3.0, False), prior_bin(None, False)
    ('margin_lt_1', 'margin_ge_3', 'twin_wrong')
    """
    if margin is None:
        return CORRECTNESS_BINS[twin_right]
    return next(name for bound, name in MARGIN_BINS if margin < bound)
