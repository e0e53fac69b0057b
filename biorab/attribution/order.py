"""Evidence order at scoring time: does showing the same hits in another order change the answer?

A cell whose retrieval entry sets ``order:`` (`biorab.ral.specs.evidence_order`) is paired with its *order
twin*:
the cell of the same run with the same dataset, split, query framing, sampling seed, source, parser and
retrieval setting but for ``order: retrieved`` (in a sweep, failing one in its own run, such a cell of
another run of the same model: `biorab.sweep.twins`). Both saw the same hits (the order is applied after
the hit cache), so an answer that differs is caused by the order alone. Per instance (paired by id):

- ``order_flip``: the two answers differ, compared as the task's normalized answer items
  (`biorab.tasks.TaskType.answer_items`; a parse failure has no items, so a failure against an answer is a
  flip, two failures are not);

and per cell, with the seeded bootstrap CI of every attribution rate (`biorab.attribution.rates`):

- ``order_flip_rate``: flips / paired instances (HealthContradict's "answers flipped by reversing the
  order", for any order against the retrieved one); the two cells' accuracies are their own metrics.

``extra["order"]`` holds the order, the twin's cell id, the paired and flipped counts. The misled rate by
the position of the first misleading hit (``misled_by_rank/*``) is the attribution's own
(`biorab.attribution.cell_attribution`), which an ordered cell moves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from biorab.ral.specs.cell_records import CellPlan, CellResult

ORDER_FLIP_RATE = "order_flip_rate"


def order_twin(plan: CellPlan, plans: Sequence[CellPlan]) -> CellPlan | None:
    """The ``order: retrieved`` cell of `plans` with `plan`'s setting otherwise (``None``: `plan` keeps the
    retrieved order, or no such cell)."""
    r = plan.retrieval
    if r is None or r.order == "retrieved":
        return None
    want = r.model_copy(update={"order": "retrieved"}).fingerprint_json()
    for other in sorted(plans, key=lambda p: p.cell_id):
        o = other.retrieval
        if (o is not None and o.order == "retrieved" and other.dataset == plan.dataset
                and other.split == plan.split and other.sampling_seed == plan.sampling_seed
                and other.source == plan.source and other.parser == plan.parser
                and other.framing == plan.framing and o.fingerprint_json() == want):
            return other
    return None


def answer_items(task: str, row: dict[str, Any]) -> frozenset[str]:
    """The normalized answer items of a predictions row (empty for a parse failure)."""
    from biorab.tasks import get_task

    return get_task(task).answer_items(row["pred_label"]) if row["pred_ok"] and row["pred_label"] \
        else frozenset()


def order_flips(task: str, rows: Sequence[dict[str, Any]], twin_rows: Sequence[dict[str, Any]]
                ) -> dict[str, bool]:
    """Instance id → whether its answer differs from the twin's (instances of both cells only).

    >>> a = [{"id": "1", "pred_label": "yes", "pred_ok": True}, {"id": "2", "pred_label": "no",
    ...                                                          "pred_ok": True}]
    >>> b = [{"id": "1", "pred_label": "no", "pred_ok": True}, {"id": "2", "pred_label": "no",
    ...                                                         "pred_ok": True}]
    >>> order_flips("classification", a, b)
    {'1': True, '2': False}
    """
    twins = {r["id"]: r for r in twin_rows}
    return {r["id"]: answer_items(task, r) != answer_items(task, twins[r["id"]])
            for r in rows if r["id"] in twins}


@dataclass(frozen=True)
class TwinFlips:
    """A cell, the rows of the cell and of its twin, and per instance both hold whether the answer
    differs (`order_flips`)."""

    result: CellResult
    twin_cell_id: str
    rows: list[dict[str, Any]]
    twin_rows: list[dict[str, Any]]
    flips: dict[str, bool]


def twin_flips(results: Sequence[CellResult],
               twin_of: Callable[[CellPlan, Sequence[CellPlan]], CellPlan | None]) -> Iterator[TwinFlips]:
    """Every cell of `results` whose twin (`twin_of`: the order's, the framing's) is among them, with the
    flips against it; a cell that shares no instance with its twin is left out."""
    by_id = {r.plan.cell_id: r for r in results}
    plans = twin_plans(results)
    for result in results:
        twin = twin_of(result.plan, plans) if result.plan in plans else None
        if twin is None:
            continue
        pair = paired_flips(result, by_id[twin.cell_id])
        if pair is not None:
            yield pair


def twin_plans(results: Sequence[CellResult]) -> list[CellPlan]:
    """The plans of `results` that can have or be an order or framing twin: dataset slices that parse."""
    return [r.plan for r in results if r.plan.dataset is not None and r.plan.parses]


def paired_flips(result: CellResult, twin: CellResult) -> TwinFlips | None:
    """`result` against its twin `twin` (from its own run or, in a sweep, another: `biorab.sweep.twins`),
    instance by instance; ``None`` when they share no instance."""
    import pyarrow.parquet as pq

    own = pq.read_table(result.predictions_path).to_pylist()
    other = pq.read_table(twin.predictions_path).to_pylist()
    flips = order_flips(result.plan.task, own, other)
    return TwinFlips(result, twin.plan.cell_id, own, other, flips) if flips else None


def add_order_flips(results: Sequence[CellResult], *, n_boot: int, seed: int) -> None:
    """Set ``order_flip_rate`` (with its CI) and ``extra["order"]`` on every ordered cell of `results` that
    has an order twin among them."""
    for pair in twin_flips(results, order_twin):
        set_order_flips(pair, n_boot=n_boot, seed=seed)


def set_order_flips(pair: TwinFlips, *, n_boot: int, seed: int) -> None:
    """Set ``order_flip_rate`` (with its CI) and ``extra["order"]`` on the ordered cell of `pair`."""
    from biorab.attribution.rates import rates

    result, flags = pair.result, list(pair.flips.values())
    value = rates({ORDER_FLIP_RATE: (flags, [True] * len(flags))}, n_boot=n_boot, seed=seed)
    result.metrics[ORDER_FLIP_RATE] = value[ORDER_FLIP_RATE].to_json()
    assert result.plan.retrieval is not None
    result.extra["order"] = {"order": result.plan.retrieval.order, "twin_cell_id": pair.twin_cell_id,
                             "paired": len(flags), "flipped": sum(flags)}
