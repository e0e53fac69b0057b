"""Query framing at scoring time: does asking the same instance another way change the answer?

A cell whose dataset slice sets ``framing:`` (`biorab.datasets.framing`) is paired with its *framing twin*:
the cell of the same run with the same dataset, split, sampling seed, source, parser and retrieval setting
whose queries are as written (``framing: none``; in a sweep, failing one in its own run, such a cell of
another run of the same model: `biorab.sweep.twins`). Per instance (paired by id; answers compared as the
task's answer items, as `biorab.attribution.order` does):

- ``framing_flip_rate``: answers that differ from the twin's;
- ``framing_followed_rate`` (``leading`` only): answers equal to the wrong label the leading sentence
  suggested (the cell's framing ledger, ``framing_ledger.jsonl`` in its cell folder), over all paired
  instances; ``framing_followed_rate_twin``: the twin's answers equal to that same label (the chance
  level of answering it unprompted).

Each with the seeded bootstrap CI of the attribution rates; ``extra["framing"]`` holds the framing, the
twin's cell id and the counts. Accuracy against the unframed query is the two cells' own metric.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biorab.attribution.order import TwinFlips, answer_items, twin_flips
from biorab.ral.specs.cell_records import CellPlan, CellResult

FRAMING_FLIP_RATE = "framing_flip_rate"
FRAMING_FOLLOWED_RATE = "framing_followed_rate"
FRAMING_FOLLOWED_RATE_TWIN = "framing_followed_rate_twin"


def framing_twin(plan: CellPlan, plans: Sequence[CellPlan]) -> CellPlan | None:
    """The unframed cell of `plans` with `plan`'s setting otherwise (``None``: unframed, or none)."""
    if plan.framing == "none" or plan.retrieval is None:
        return None
    want = plan.retrieval.fingerprint_json()
    for other in sorted(plans, key=lambda p: p.cell_id):
        if (other.framing == "none" and other.retrieval is not None and other.dataset == plan.dataset
                and other.split == plan.split and other.sampling_seed == plan.sampling_seed
                and other.source == plan.source and other.parser == plan.parser
                and other.retrieval.fingerprint_json() == want):
            return other
    return None


def suggestions(cell_dir: Path) -> dict[str, str]:
    """Instance id → the wrong label its leading sentence suggested (empty without a framing ledger)."""
    from biorab.datasets.framing import FRAMING_LEDGER

    path = cell_dir / FRAMING_LEDGER
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["framing"] == "leading":
            out[row["id"]] = row["changes"][0]
    return out


def follows(task: str, row: dict[str, Any], suggested: dict[str, str]) -> bool:
    """Whether the row's answer is the wrong label suggested to its instance (as answer items)."""
    wrong = suggested.get(str(row["id"]))
    given = answer_items(task, row)
    return wrong is not None and bool(given) and given == answer_items(task, {"pred_label": wrong,
                                                                               "pred_ok": True})


def add_framing(results: Sequence[CellResult], cells_dir: Path, *, n_boot: int, seed: int) -> None:
    """Set the framing rates (with CIs) and ``extra["framing"]`` on every framed cell of `results` that has
    a framing twin among them."""
    for pair in twin_flips(results, framing_twin):
        set_framing(pair, cells_dir, n_boot=n_boot, seed=seed)


def set_framing(pair: TwinFlips, cells_dir: Path, *, n_boot: int, seed: int) -> None:
    """Set the framing rates (with CIs) and ``extra["framing"]`` on the framed cell of `pair`; `cells_dir`
    is the framed cell's run's (its framing ledger)."""
    from biorab.attribution.rates import rates

    result, flips, own, other = pair.result, pair.flips, pair.rows, pair.twin_rows
    paired = [True] * len(flips)
    columns = {FRAMING_FLIP_RATE: (list(flips.values()), paired)}
    extra = {"framing": result.plan.framing, "twin_cell_id": pair.twin_cell_id, "paired": len(flips),
             "flipped": sum(flips.values())}
    suggested = suggestions(cells_dir / result.plan.cell_id)
    if suggested:
        task = result.plan.task
        twin_rows = {r["id"]: r for r in other}
        rows = [r for r in own if r["id"] in flips]
        columns[FRAMING_FOLLOWED_RATE] = ([follows(task, r, suggested) for r in rows], paired)
        columns[FRAMING_FOLLOWED_RATE_TWIN] = ([follows(task, twin_rows[r["id"]], suggested)
                                                 for r in rows], paired)
        extra["followed"] = sum(columns[FRAMING_FOLLOWED_RATE][0])
    values = rates(columns, n_boot=n_boot, seed=seed)
    result.metrics.update({k: v.to_json() for k, v in values.items()})
    result.extra["framing"] = extra
