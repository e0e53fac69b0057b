"""The sweep report's evidence-attribution parts: a table of every retrieving cell's attribution rates, a
table of the triple cells' §2.8 error types, and the dose–response plot (misled rate against the
counterfactual rate, with CIs, one line per model and dataset). Rates are ×100 with their 95% CIs and are
not ranked (a higher misled rate is no "best")."""

from __future__ import annotations

from pathlib import Path

from biorab.attribution.cells import ERROR_RATE, EVIDENCE_RATES, FLIP_RATES, MCNEMAR_P
from biorab.sweep.collect import CellRecord
from biorab.sweep.tables import Grid, rows_of

NOTE = ("misled: answers following a corrupted retrieved item, among instances whose evidence holds one; "
        "resisted: right answers among those; copy: answers equal to a retrieved label on clean / corrupted "
        "evidence; helped / hurt: wrong → right / right → wrong against the same model without retrieval, "
        "McNemar p on those pairs (docs/metrics.md).")


def _shown(cell: CellRecord, name: str, *, scale: float = 100.0) -> tuple[float | None, str]:
    v = cell.value(name)
    if v is None or v.get("value") is None:
        return None, "n/a"
    text = f"{float(v['value'] or 0.0) * scale:.1f}" if scale != 1.0 else f"{float(v['value'] or 0.0):.3f}"
    if v.get("ci_low") is not None and v.get("ci_high") is not None:
        text += f" [{float(v['ci_low'] or 0) * scale:.1f}, {float(v['ci_high'] or 0) * scale:.1f}]"
    return None, text


def _label(c: CellRecord) -> str:
    return f"{c.model} / {c.retriever} / {c.corpus}" + (f" / {c.method}" if c.method != "none" else "") + \
        f" / {c.dataset}"


def _one_row_each(cells: list[CellRecord]) -> list[tuple[str, CellRecord]]:
    """A row per cell, labelled as every report table labels its rows (`rows_of`: cells whose labels
    would coincide gain the spec axes that tell them apart)."""
    return [(name, by_column["cell"]) for name, by_column in rows_of(cells, _label, lambda c: "cell").items()]


def attribution_grids(cells: list[CellRecord]) -> list[Grid]:
    """The attribution table (cells with attribution rates) and the error-type table (triple cells)."""
    grids = []
    rated = [c for c in cells if any(m in c.metrics for m in (*EVIDENCE_RATES, *FLIP_RATES))]
    if rated:
        grid = Grid("Evidence attribution, rate ×100 [95% CI]",
                    ["misled", "resisted", "copy (clean)", "copy (corrupted)", "helped", "hurt", "McNemar p"],
                    note=NOTE)
        for name, c in _one_row_each(rated):
            grid.rows.append((name, [*(_shown(c, m) for m in (*EVIDENCE_RATES, *FLIP_RATES)),
                                     _shown(c, MCNEMAR_P, scale=1.0)]))
        grids.append(grid)
    typed = [c for c in cells if any(m.startswith(ERROR_RATE) for m in c.metrics)]
    if typed:
        names = list(dict.fromkeys(m for c in typed for m in c.metrics if m.startswith(ERROR_RATE)))
        grid = Grid("Error types (§2.8): share of instances with one, ×100 [95% CI]",
                    [n[len(ERROR_RATE):].replace("_", " ") for n in names])
        for name, c in _one_row_each(typed):
            grid.rows.append((name, [_shown(c, n) for n in names]))
        grids.append(grid)
    return grids


def dose_response(cells: list[CellRecord], out: Path) -> Path | None:
    """Misled rate ×100 against the counterfactual rate, error bars the 95% CIs; one line per (model,
    dataset), and per retriever where the sweep has several. ``None`` without two rates on one line."""
    points = [c for c in cells if c.testbed == "counterfactual" and c.rate is not None and c.method == "none"
              and (c.value("misled_rate") or {}).get("value") is not None]
    several = len({c.retriever for c in points}) > 1
    lines: dict[tuple[str, ...], list[CellRecord]] = {}
    for c in points:
        key: tuple[str, ...] = (c.model, c.dataset, c.retriever) if several else (c.model, c.dataset)
        lines.setdefault(key, []).append(c)
    lines = {k: v for k, v in lines.items() if len({c.rate for c in v}) > 1}
    if not lines:
        return None
    from biorab.sweep.plots import _pyplot, _save

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, line in sorted(lines.items()):
        line = sorted(line, key=lambda c: c.rate or 0.0)
        xs = [(c.rate or 0.0) * 100 for c in line]
        values = [c.metrics["misled_rate"] for c in line]
        ys = [float(v["value"] or 0.0) * 100 for v in values]
        # A bound the bootstrap could not give (n_boot 0) draws no bar on that side.
        low = [y - float(v.get("ci_low") or 0.0) * 100 if v.get("ci_low") is not None else 0.0
               for y, v in zip(ys, values, strict=True)]
        high = [float(v.get("ci_high") or 0.0) * 100 - y if v.get("ci_high") is not None else 0.0
                for y, v in zip(ys, values, strict=True)]
        ax.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, label=" / ".join(key))
    ax.set_xlabel("counterfactual rate (%)")
    ax.set_ylabel("misled rate ×100 [95% CI]")
    ax.set_ylim(-2, 102)
    ax.legend(fontsize=7)
    return _save(fig, plt, out / "misled_vs_counterfactual_rate.png")
