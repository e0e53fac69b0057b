"""The report's plots (matplotlib, the ``report`` extra): per-dataset heatmaps LLM × retriever, headline
metric vs counterfactual rate, negative-awareness rates. Each function writes one PNG and returns its path,
or ``None`` when the sweep has no cells of that kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biorab.sweep.collect import CellRecord
from biorab.sweep.tables import AWARENESS


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a cluster node
    import matplotlib.pyplot as plt

    return plt


def _value(c: CellRecord, name: str | None = None) -> float | None:
    v = c.value(name)
    return None if v is None or v.get("value") is None else float(v["value"] or 0.0)


def heatmap(cells: list[CellRecord], dataset: str, out: Path) -> Path | None:
    """LLM (rows) × retriever (columns) on the labeled corpus, for one dataset."""
    import numpy as np

    sub = [c for c in cells
           if c.dataset == dataset and c.testbed in ("labeled", "none") and c.method == "none"]
    if not sub:
        return None
    models = list(dict.fromkeys(c.model for c in sub))
    retrievers = list(dict.fromkeys(c.retriever for c in sub))
    grid = np.full((len(models), len(retrievers)), np.nan)
    for c in sub:
        value = _value(c)
        if value is not None:
            grid[models.index(c.model), retrievers.index(c.retriever)] = value * 100
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(1.6 + 1.2 * len(retrievers), 1.2 + 0.5 * len(models)))
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(retrievers)), retrievers)
    ax.set_yticks(range(len(models)), models)
    for (i, j), v in np.ndenumerate(grid):
        if not np.isnan(v):
            ax.text(j, i, f"{v:.1f}", ha="center", va="center", color="w" if v < np.nanmax(grid) else "k")
    ax.set_title(f"{dataset}: {sub[0].metric} ×100")
    fig.colorbar(image, ax=ax)
    return _save(fig, plt, out / f"heatmap_{dataset}.png")


def rate_curve(cells: list[CellRecord], out: Path) -> Path | None:
    """Headline metric vs counterfactual rate (0% = the labeled corpus), one line per (LLM, dataset)."""
    lines: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    for c in cells:
        if c.method != "none" or c.retriever == "none" or c.testbed not in ("counterfactual", "labeled"):
            continue
        value = _value(c)
        if value is not None:
            rate = c.rate if c.testbed == "counterfactual" and c.rate is not None else 0.0
            lines.setdefault((c.model, c.dataset, c.retriever), []).append((rate * 100, value * 100))
    lines = {k: v for k, v in lines.items() if len(v) > 1}
    if not lines:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (model, dataset, retriever), points in sorted(lines.items()):
        xs, ys = zip(*sorted(points), strict=True)
        ax.plot(xs, ys, marker="o", label=f"{model} / {dataset} / {retriever}")
    ax.set_xlabel("counterfactual rate (%)")
    ax.set_ylabel("headline metric ×100")
    ax.legend(fontsize=7)
    return _save(fig, plt, out / "f1_vs_counterfactual_rate.png")


def awareness_bars(cells: list[CellRecord], out: Path) -> Path | None:
    """True and false negative-awareness rates per (LLM, dataset)."""
    sub = [c for c in cells if any(m in c.metrics for m in AWARENESS)]
    if not sub:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(1.5 + 0.9 * len(sub), 4))
    width = 0.4
    for k, name in enumerate(AWARENESS):
        ys = [(_value(c, name) or 0.0) * 100 for c in sub]
        ax.bar([i + k * width for i in range(len(sub))], ys, width, label=name.replace("_", " "))
    ax.set_xticks([i + width / 2 for i in range(len(sub))], [f"{c.model}\n{c.dataset}" for c in sub],
                  fontsize=7)
    ax.set_ylabel("rate ×100")
    ax.legend(fontsize=7)
    return _save(fig, plt, out / "negative_awareness.png")


def _save(fig: Any, plt: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def all_plots(cells: list[CellRecord], out: Path) -> list[Path]:
    """Every plot the sweep's cells allow (resampled test splits, Table 6, are in no plot)."""
    cells = [c for c in cells if c.ratio is None]
    made = [heatmap(cells, d, out) for d in dict.fromkeys(c.dataset for c in cells)]
    made += [rate_curve(cells, out), awareness_bars(cells, out)]
    return [p for p in made if p is not None]
