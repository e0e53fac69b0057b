"""A retrieving cell's no-retrieval twin and the flip of each instance against it.

The twin is the cell of the same run (one model, one sampling setting) with the same dataset, split and
sampling seed whose retrieval setting retrieves nothing (testbed ``none``); among several, the one with the
same parser, then the first by cell id. Instances are paired by id. A sweep looks further, among the cells
of the model's other runs, for a cell without a twin in its own run (`biorab.sweep.twins`).
"""

from __future__ import annotations

from collections.abc import Sequence

from biorab.cells import CellPlan

HELPED, HURT, UNCHANGED = "helped", "hurt", "unchanged"


def find_twin(plan: CellPlan, plans: Sequence[CellPlan]) -> CellPlan | None:
    """`plan`'s twin among `plans` (``None`` for a cell that retrieves nothing, or without one)."""
    candidates = twin_candidates(plan, plans)
    return candidates[0] if candidates else None


def twin_candidates(plan: CellPlan, plans: Sequence[CellPlan]) -> list[CellPlan]:
    """The cells of `plans` that can be `plan`'s twin, best first: the same parser first, then by cell id
    (a stable sort: cells with the same id keep the order of `plans`)."""
    if not plan.retrieves or plan.dataset is None:
        return []
    same = [p for p in plans if p.dataset == plan.dataset and p.split == plan.split
            and p.sampling_seed == plan.sampling_seed and p.retrieval is not None and not p.retrieves
            and p.source == plan.source]
    same.sort(key=lambda p: (p.parser != plan.parser, p.cell_id))
    return same


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
