"""The sweep report's "Robustness beyond the paper" section: one table and one plot per question
(docs/retrieval.md § Evidence order).

- **Evidence order**: per ordered cell, the share of answers that differ from the same cell in the
  retrieved order (``order_flip_rate``, `biorab.attribution.order`), the cell's misled rate and, where the
  attribution has them, its misled rate by the position of the first misleading hit (``misled_by_rank/*``);
  the plot shows the flip rate by order, one group per (model, dataset).

Rates are ×100 with their 95% CIs and are not ranked (a higher flip rate is no "best").
"""

from __future__ import annotations

from pathlib import Path

from biorab.attribution.order import ORDER_FLIP_RATE
from biorab.sweep.attribution_report import _one_row_each, _shown
from biorab.sweep.collect import CellRecord
from biorab.sweep.tables import Grid

SECTION = "Robustness beyond the paper"
ORDER_NOTE = ("order flip: answers that differ (as the task's answer items) from the same model on the same "
              "hits in the retrieved order, paired by instance; misled: answers following a corrupted hit "
              "among instances whose evidence holds one; by rank: the same, split by the position of the "
              "first misleading hit (docs/retrieval.md § Evidence order, docs/metrics.md).")
#: The section's plot files (their stems): the report shows them in the section, not with the others.
ROBUSTNESS_PLOTS = ("order_flip_rate",)
#: The attribution's misled rate by the position of the first misleading hit, where it reports one.
BY_RANK = (("misled, first misleading at 1", "misled_by_rank/1"), ("at 2", "misled_by_rank/2"),
           ("at ≥ 3", "misled_by_rank/3_or_more"))


def _ordered(cells: list[CellRecord]) -> list[CellRecord]:
    """The cells of settings some cell shows in another order: the ordered ones and their retrieved twins."""
    ordered = [c for c in cells if ORDER_FLIP_RATE in c.metrics]
    settings = {(c.model, c.dataset, c.retriever, c.testbed, c.rate, c.method) for c in ordered}
    return [c for c in cells if (c.model, c.dataset, c.retriever, c.testbed, c.rate, c.method) in settings
            and (c.order == "retrieved" or ORDER_FLIP_RATE in c.metrics)]


def robustness_grids(cells: list[CellRecord]) -> list[Grid]:
    """The section's tables (none when the sweep asked none of its questions)."""
    grids = []
    ordered = _ordered(cells)
    if ordered:
        ranks = [(col, m) for col, m in BY_RANK if any(m in c.metrics for c in ordered)]
        grid = Grid(f"{SECTION}: evidence order, rate ×100 [95% CI]",
                    ["order", "order flip", "headline", "misled", *(col for col, _ in ranks)],
                    note=ORDER_NOTE)
        for name, c in _one_row_each(ordered):
            grid.rows.append((name, [(None, c.order), _shown(c, ORDER_FLIP_RATE), _shown(c, c.metric),
                                     _shown(c, "misled_rate"), *(_shown(c, m) for _, m in ranks)]))
        grids.append(grid)
    return grids


def robustness_plots(cells: list[CellRecord], out: Path) -> list[Path]:
    """The section's plots (matplotlib, as every report plot)."""
    made = [order_plot(cells, out)]
    return [p for p in made if p is not None]


def order_plot(cells: list[CellRecord], out: Path) -> Path | None:
    """Order flip rate ×100 by order, error bars the 95% CIs, one group of bars per (model, dataset[,
    retriever, corpus]); ``None`` without an ordered cell."""
    ordered = [c for c in cells if (c.value(ORDER_FLIP_RATE) or {}).get("value") is not None]
    if not ordered:
        return None
    from biorab.sweep.plots import _pyplot, _save

    groups: dict[str, list[CellRecord]] = {}
    for c in ordered:
        groups.setdefault(f"{c.model} / {c.dataset} / {c.retriever} / {c.corpus}", []).append(c)
    orders = list(dict.fromkeys(c.order for c in ordered))
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(groups) * len(orders) / 2), 4.5))
    width = 0.8 / len(orders)
    for j, order in enumerate(orders):
        xs, ys, low, high = [], [], [], []
        for i, group in enumerate(groups.values()):
            found = [c for c in group if c.order == order]
            if not found:
                continue
            v = found[0].metrics[ORDER_FLIP_RATE]
            y = float(v["value"] or 0.0) * 100
            xs.append(i + j * width)
            ys.append(y)
            lo, hi = v.get("ci_low"), v.get("ci_high")  # a bound the bootstrap could not give: no bar
            low.append(y - float(lo) * 100 if lo is not None else 0.0)
            high.append(float(hi) * 100 - y if hi is not None else 0.0)
        ax.bar(xs, ys, width, yerr=[low, high], capsize=3, label=order)
    ax.set_xticks([i + width * (len(orders) - 1) / 2 for i in range(len(groups))])
    ax.set_xticklabels(list(groups), fontsize=7, rotation=15, ha="right")
    ax.set_ylabel("answers flipped vs retrieved order ×100 [95% CI]")
    ax.set_ylim(0, 102)
    ax.legend(fontsize=7)
    return _save(fig, plt, out / "order_flip_rate.png")
