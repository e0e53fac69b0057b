"""The sweep report's "Robustness beyond the paper" section: one table and one plot per question
(docs/retrieval.md § Evidence order).

- **Evidence order**: per ordered cell, the share of answers that differ from the same cell in the
  retrieved order (``order_flip_rate``, `biorab.attribution.order`), the cell's misled rate and, where the
  attribution has them, its misled rate by the position of the first misleading hit (``misled_by_rank/*``);
  the plot shows the flip rate by order, one group per (model, dataset).
- **Plausibility of the counterfactual**: per (model, dataset, retriever, rate), the misled rate on the
  counterfactual corpus with uniform lies, with near lies and with far lies (the same items corrupted:
  `biorab.corpora.plausibility`), and near − far in points; the plot shows the three bars per group.
- **Query framing**: per framed cell, the share of answers that differ from the same cell asked as written
  (``framing_flip_rate``, `biorab.attribution.framing`), its headline metric beside the unframed cell's,
  and for leading questions the share answering the suggested wrong label (and the unframed twin's share);
  the plot shows the flip rate by framing.
- **Knowing when to abstain**: per cell with abstention metrics (`biorab.metrics.selective`), selective
  accuracy at 100/75/50/25 % coverage, AURC, ECE and the probe gate's accuracy and coverage; the plot is
  the reliability diagram (accuracy of the top label against its mean confidence per bin, one line per
  cell, the diagonal a calibrated model).
- **Reasoning as an axis**: the reasoning twins' table (`biorab.sweep.reasoning_twins`: each cell with a
  reasoning setting against the same model without one, answer flips and the headline's paired
  difference); the plot shows, per cell with reasoning text, its misled rate, the share of its reasoning
  that quotes the lie and the share that names the lie and still follows it
  (`biorab.attribution.reasoning_quotes`).

Rates are ×100 with their 95% CIs and are not ranked (a higher flip rate is no "best").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from biorab.attribution.framing import FRAMING_FLIP_RATE, FRAMING_FOLLOWED_RATE, FRAMING_FOLLOWED_RATE_TWIN
from biorab.attribution.order import ORDER_FLIP_RATE
from biorab.metrics.selective import GATED_ACCURACY, GATED_COVERAGE, SELECTIVE_METRICS, is_abstention_metric
from biorab.sweep.attribution_report import _one_row_each, _shown
from biorab.sweep.collect import CellRecord
from biorab.sweep.tables import Grid

SECTION = "Robustness beyond the paper"
ORDER_NOTE = ("order flip: answers that differ (as the task's answer items) from the same model on the same "
              "hits in the retrieved order, paired by instance; misled: answers following a corrupted hit "
              "among instances whose evidence holds one; by rank: the same, split by the position of the "
              "first misleading hit (docs/retrieval.md § Evidence order, docs/metrics.md).")
#: The section's plot files (their stems): the report shows them in the section, not with the others.
ROBUSTNESS_PLOTS = ("order_flip_rate", "misled_by_plausibility", "framing_flip_rate", "reliability",
                    "reasoning")
ABSTAIN_COLUMNS = (("acc @100%", SELECTIVE_METRICS[0]), ("acc @75%", SELECTIVE_METRICS[1]),
                   ("acc @50%", SELECTIVE_METRICS[2]), ("acc @25%", SELECTIVE_METRICS[3]),
                   ("AURC", SELECTIVE_METRICS[4]), ("ECE", SELECTIVE_METRICS[5]),
                   ("probe-gated acc", GATED_ACCURACY), ("probe coverage", GATED_COVERAGE))
FRAMING_NOTE = ("framing flip: answers that differ (as the task's answer items) from the same model on the "
                "same instance asked as written, paired by instance; headline: the framed cell's and the "
                "unframed cell's; followed: answers equal to the wrong label a leading question suggested "
                "(twin: the unframed cell's answers equal to it) (docs/datasets.md § Query framing).")
#: The counterfactual testbeds by the plausibility of their lies, in the table's column order.
PLAUSIBILITY = (("random", "counterfactual"), ("near", "counterfactual_near"), ("far", "counterfactual_far"))
PLAUSIBILITY_NOTE = ("misled: answers following a corrupted hit among instances whose evidence holds one, on "
                     "corpora whose lies are uniform (the paper's), the most confusable (near) or the least "
                     "confusable (far) wrong label, the same items corrupted at the same rate; near − far in "
                     "percentage points (docs/retrieval.md § Plausibility of the counterfactual).")
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
    plausible = plausibility_groups(cells)
    if plausible:
        grid = Grid(f"{SECTION}: plausibility of the counterfactual, misled rate ×100 [95% CI]",
                    [*(name for name, _ in PLAUSIBILITY), "near − far"], note=PLAUSIBILITY_NOTE)
        for label, by_kind in plausible.items():
            near, far = (_rate(by_kind.get(k), "misled_rate") for k in ("counterfactual_near",
                                                                          "counterfactual_far"))
            diff = (None, "n/a") if near is None or far is None else (None, f"{(near - far) * 100:+.1f}")
            grid.rows.append((label, [*(_shown(by_kind[k], "misled_rate") if k in by_kind else (None, "n/a")
                                        for _, k in PLAUSIBILITY), diff]))
        grids.append(grid)
    framed = [c for c in cells if FRAMING_FLIP_RATE in c.metrics]
    if framed:
        unframed = {(c.model, c.dataset, c.retriever, c.corpus, c.method, c.order, c.seed): c for c in cells
                    if c.framing == "none"}
        grid = Grid(f"{SECTION}: query framing, rate ×100 [95% CI]",
                    ["framing", "framing flip", "headline", "headline as written", "followed",
                     "followed (twin)"], note=FRAMING_NOTE)
        for name, c in _one_row_each(framed):
            twin = unframed.get((c.model, c.dataset, c.retriever, c.corpus, c.method, c.order, c.seed))
            grid.rows.append((name, [(None, c.framing), _shown(c, FRAMING_FLIP_RATE), _shown(c, c.metric),
                                     _shown(twin, twin.metric) if twin is not None else (None, "n/a"),
                                     _shown(c, FRAMING_FOLLOWED_RATE),
                                     _shown(c, FRAMING_FOLLOWED_RATE_TWIN)]))
        grids.append(grid)
    abstaining = [c for c in cells if any(is_abstention_metric(m) for m in c.metrics)]
    if abstaining:
        from biorab.runner.scoring.abstention_report import NOTE

        grid = Grid(f"{SECTION}: knowing when to abstain, ×100 [95% CI] (AURC, ECE ×100 too)",
                    [col for col, _ in ABSTAIN_COLUMNS], note=NOTE)
        for name, c in _one_row_each(abstaining):
            grid.rows.append((name, [_shown(c, m) for _, m in ABSTAIN_COLUMNS]))
        grids.append(grid)
    return grids


def _rate(cell: CellRecord | None, name: str) -> float | None:
    v = cell.value(name) if cell is not None else None
    return None if v is None or v.get("value") is None else float(v["value"] or 0.0)


def plausibility_groups(cells: list[CellRecord]) -> dict[str, dict[str, CellRecord]]:
    """Row label → testbed → cell, for the settings with a near or far cell (in the retrieved order)."""
    kinds = {k for _, k in PLAUSIBILITY}
    rated = [c for c in cells if c.testbed in kinds and c.rate is not None and c.order == "retrieved"
             and c.framing == "none"]
    wanted = {(c.model, c.dataset, c.retriever, c.rate, c.method) for c in rated
              if c.testbed != "counterfactual"}
    out: dict[str, dict[str, CellRecord]] = {}
    for c in rated:
        key = (c.model, c.dataset, c.retriever, c.rate, c.method)
        if key in wanted:
            method = f" / {c.method}" if c.method != "none" else ""
            label = f"{c.model} / {c.retriever} / {c.dataset} / rate {(c.rate or 0.0) * 100:g}%{method}"
            out.setdefault(label, {})[c.testbed] = c
    return out


def robustness_plots(cells: list[CellRecord], out: Path) -> list[Path]:
    """The section's plots (matplotlib, as every report plot)."""
    made = [order_plot(cells, out), plausibility_plot(cells, out), framing_plot(cells, out),
            reliability_plot(cells, out), reasoning_plot(cells, out)]
    return [p for p in made if p is not None]


#: Bars of a grouped chart: per group (one x position), per series, a rate with its CI (`grouped_bars`).
Bars = dict[str, dict[str, Mapping[str, Any] | None]]


def grouped_bars(groups: Bars, series: list[str], *, ylabel: str, path: Path,
                 legend_title: str | None = None) -> Path:
    """One bar chart of rates ×100 with their 95% CIs as error bars: a group of bars per key of `groups`,
    one bar per entry of `series` (the value under that series' name in the group; a missing or empty one
    draws no bar; a bound the bootstrap could not give draws no error bar)."""
    from biorab.sweep.plots import _pyplot, _save

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.8 * len(groups) * len(series)), 4.5))
    width = 0.8 / len(series)
    for j, name in enumerate(series):
        xs, ys, low, high = [], [], [], []
        for i, by_series in enumerate(groups.values()):
            v = by_series.get(name)
            if v is None or v.get("value") is None:
                continue
            y = float(v["value"]) * 100
            lo, hi = v.get("ci_low"), v.get("ci_high")
            xs.append(i + j * width)
            ys.append(y)
            low.append(y - float(lo) * 100 if lo is not None else 0.0)
            high.append(float(hi) * 100 - y if hi is not None else 0.0)
        ax.bar(xs, ys, width, yerr=[low, high], capsize=3, label=name)
    ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(groups))])
    ax.set_xticklabels(list(groups), fontsize=7, rotation=15, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 102)
    ax.legend(fontsize=7, title=legend_title)
    return _save(fig, plt, path)


def order_bars(cells: list[CellRecord]) -> tuple[Bars, list[str]]:
    """The order plot's data: per (model, dataset, retriever, corpus) group, each order's flip rate (its
    first cell's), and the orders in the cells' order."""
    return flip_bars(cells, ORDER_FLIP_RATE,
                     lambda c: f"{c.model} / {c.dataset} / {c.retriever} / {c.corpus}", lambda c: c.order)


def order_plot(cells: list[CellRecord], out: Path) -> Path | None:
    """Order flip rate ×100 by order, error bars the 95% CIs, one group of bars per (model, dataset,
    retriever, corpus); ``None`` without an ordered cell."""
    groups, orders = order_bars(cells)
    if not groups:
        return None
    return grouped_bars(groups, orders, ylabel="answers flipped vs retrieved order ×100 [95% CI]",
                        path=out / "order_flip_rate.png")


def plausibility_bars(cells: list[CellRecord]) -> tuple[Bars, list[str]]:
    """The plausibility plot's data: per `plausibility_groups` group, the misled rate of each kind of lie
    (uniform, near, far) that has a cell, and the kinds in the table's order."""
    bars: Bars = {
        group: {name: by_kind[kind].value("misled_rate") for name, kind in PLAUSIBILITY if kind in by_kind}
        for group, by_kind in plausibility_groups(cells).items()}
    return bars, [name for name, _ in PLAUSIBILITY]


def plausibility_plot(cells: list[CellRecord], out: Path) -> Path | None:
    """Misled rate ×100 on uniform, near and far lies, error bars the 95% CIs, one group of bars per
    (model, retriever, dataset, rate); ``None`` without a near or far cell."""
    bars, kinds = plausibility_bars(cells)
    if not bars:
        return None
    return grouped_bars(bars, kinds, ylabel="misled rate ×100 [95% CI]",
                        path=out / "misled_by_plausibility.png", legend_title="lies")


def framing_bars(cells: list[CellRecord]) -> tuple[Bars, list[str]]:
    """The framing plot's data: per (model, retriever, corpus, dataset) group, each framing's flip rate (its
    first cell's), and the framings in the cells' order."""
    return flip_bars(cells, FRAMING_FLIP_RATE,
                     lambda c: f"{c.model} / {c.retriever} / {c.corpus} / {c.dataset}", lambda c: c.framing)


def flip_bars(cells: list[CellRecord], metric: str, group: Callable[[CellRecord], str],
              bar: Callable[[CellRecord], str]) -> tuple[Bars, list[str]]:
    """A flip-rate plot's data: the cells with a value of `metric`, per `group` the first cell's `metric`
    of each `bar` (an order, a framing), and the bars in the cells' order."""
    rated = [c for c in cells if (c.value(metric) or {}).get("value") is not None]
    groups: Bars = {}
    for c in rated:
        groups.setdefault(group(c), {}).setdefault(bar(c), c.metrics[metric])
    return groups, list(dict.fromkeys(bar(c) for c in rated))


def framing_plot(cells: list[CellRecord], out: Path) -> Path | None:
    """Framing flip rate ×100 by framing, error bars the 95% CIs, one group of bars per (model, retriever,
    corpus, dataset); ``None`` without a framed cell."""
    groups, framings = framing_bars(cells)
    if not groups:
        return None
    return grouped_bars(groups, framings, ylabel="answers flipped vs the query as written ×100 [95% CI]",
                        path=out / "framing_flip_rate.png")


#: The reasoning plot's bars (`reasoning_bars`): legend name → metric.
REASONING_BARS = (("misled", "misled_rate"), ("quoted corruption", "quoted_corruption_rate"),
                  ("named the lie and followed it", "named_lie_followed_rate"))


def reasoning_bars(cells: list[CellRecord]) -> tuple[Bars, list[str]]:
    """The reasoning plot's data: per cell whose answers came with reasoning text against misleading
    evidence (a row each, labelled as the tables label it: a reasoning setting is part of the model's
    name), its misled rate, the share of reasoning that quotes the lie and the share that names the lie
    and still follows it; and the bars' names."""
    groups: Bars = {name: {bar: c.value(metric) for bar, metric in REASONING_BARS}
                    for name, c in _one_row_each([c for c in cells if c.reasoning_n])}
    return groups, [bar for bar, _ in REASONING_BARS]


def reasoning_plot(cells: list[CellRecord], out: Path) -> Path | None:
    """Misled, quoted-corruption and named-the-lie-and-followed-it rates ×100 per thinking cell, error
    bars the 95% CIs; ``None`` without a cell with reasoning text."""
    groups, bars = reasoning_bars(cells)
    if not groups:
        return None
    return grouped_bars(groups, bars, ylabel="rate ×100 among misleading evidence [95% CI]",
                        path=out / "reasoning.png")


#: One cell's reliability curve (`reliability_lines`): row label, per non-empty bin its mean confidence,
#: its accuracy and its instances.
Curve = tuple[str, list[float], list[float], list[int]]


def reliability_lines(cells: list[CellRecord]) -> list[Curve]:
    """The reliability plot's data: per cell with label scores, the bins of its ``extra["abstention"]``
    reliability (mean confidence of the top label, the share of top labels equal to the gold, the bin's
    instances)."""
    return [(name, [b["confidence"] for b in c.reliability], [b["accuracy"] for b in c.reliability],
             [int(b["n"]) for b in c.reliability])
            for name, c in _one_row_each([c for c in cells if c.reliability])]


def reliability_plot(cells: list[CellRecord], out: Path) -> Path | None:
    """The reliability diagram: per cell with label scores, the share of top labels equal to the gold
    against the bin's mean confidence (marker size by the bin's instances), the diagonal a calibrated
    model; ``None`` without such a cell."""
    curves = reliability_lines(cells)
    if not curves:
        return None
    from biorab.sweep.plots import _pyplot, _save

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 5.0))
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="calibrated")
    for name, xs, ys, ns in curves:
        (line,) = ax.plot(xs, ys, marker="o", linewidth=1, markersize=3, label=name)
        ax.scatter(xs, ys, s=[200 * n / sum(ns) for n in ns], alpha=0.3, color=line.get_color())
    ax.set_xlabel("mean confidence of the top label (10 equal-width bins)")
    ax.set_ylabel("share of top labels equal to the gold")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=6)
    return _save(fig, plt, out / "reliability.png")
