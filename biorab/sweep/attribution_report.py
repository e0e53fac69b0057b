"""The sweep report's evidence-attribution parts: a table of every retrieving cell's attribution rates (with
the McNemar p of its flips, raw and Holm-adjusted over the table), a table of the same rates against each
cell's no-retrieval twin ("no baseline" where it has none), a table by the first misleading hit's rank and
the twin's prior, a table of the triple cells' §2.8 error types, and the dose–response plot (misled share,
misled given misleading evidence and misled excess against the counterfactual rate, with CIs, one line per
model and dataset). Rates are ×100 with their 95% CIs and are not ranked (a higher misled rate is no
"best")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from biorab.attribution.cell_attribution import (
    AGREES,
    BY_PRIOR,
    BY_RANK,
    ERROR_RATE,
    EVIDENCE_RATES,
    FLIP_RATES,
    MCNEMAR_P,
    MISLED_SHARE,
    NO_BASELINE,
    RANKS,
    REASONING_RATES,
    TWIN_RATES,
)
from biorab.attribution.twin import PRIOR_BIN_LABELS, PRIOR_BINS
from biorab.metrics.paired import holm_or_none
from biorab.sweep.collect import CellRecord
from biorab.sweep.tables import Grid, rows_of

NOTE = ("misled: answers following a misleading retrieved item (a wrong label, from the testbed or a corpus "
        "method, whose wrong items are not all in the gold), among instances whose evidence holds one; "
        "share: the same over every instance; resisted: right answers among those; agrees: instances whose "
        "corrupted evidence all carries the gold; copy: answers equal to a retrieved label on clean / "
        "corrupted evidence; helped / hurt: wrong → right / right → wrong against the same model without "
        "retrieval, McNemar p on those pairs, raw and Holm-adjusted over this table (docs/metrics.md).")
TWIN_NOTE = (
    "The no-retrieval twin's answer flagged against the same hits: its rate is the chance level for "
    "this model (on a closed label set a wrong answer equals a corrupted label by chance); excess = "
    "cell − twin with a paired bootstrap CI; switched: the cell answered a hit's label (a misleading"
    " hit's) that the twin did not. \"no baseline\": the cell has no twin, so its rates are not "
    "influence.")
POSITION_NOTE = (
    "Misled rate among instances with misleading evidence, by the rank of the first misleading hit "
    "and by the twin's prior: its label log-prob margin in nats where labels are scored, else "
    "whether it was right (as ClashEval bins the prior).")


REASONING_NOTE = (
    "R: instances with a misleading hit and reasoning text (a thinking model's gen_reasoning); quoted: the "
    "reasoning names a corrupted label of a misleading hit (an exact mention); named the lie and followed "
    "it: quoted and the answer followed the corruption (docs/metrics.md).")


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


def _p(value: float | None) -> tuple[float | None, str]:
    return None, "n/a" if value is None else f"{value:.3f}"


def attribution_grids(cells: list[CellRecord]) -> list[Grid]:
    """The attribution table (cells with attribution rates), the twin table and the position and prior
    table (retrieving cells), and the error-type table (triple cells)."""
    grids = []
    rated = [c for c in cells if any(m in c.metrics for m in (*EVIDENCE_RATES, *FLIP_RATES))]
    if rated:
        grid = Grid("Evidence attribution, rate ×100 [95% CI]",
                    ["misled", "misled share", "resisted", "agrees with gold", "copy (clean)",
                     "copy (corrupted)", "helped", "hurt", "McNemar p", "Holm p"], note=NOTE)
        named = _one_row_each(rated)
        raw = [(c.value(MCNEMAR_P) or {}).get("value") for _, c in named]
        for (name, c), p, adjusted in zip(named, raw, holm_or_none(raw), strict=True):
            shown = [_shown(c, m) for m in ("misled_rate", MISLED_SHARE, "resisted_rate", AGREES,
                                            "copy_rate_clean", "copy_rate_corrupted", *FLIP_RATES)]
            grid.rows.append((name, [*shown, _p(p), _p(adjusted)]))
        grids.append(grid)
        grids += _twin_grids([c for c in rated if "misled_rate" in c.metrics])
    thinking = [c for c in cells if c.reasoning_n]
    if thinking:
        grid = Grid("Reasoning against misleading evidence, rate ×100 [95% CI]",
                    ["R", "quoted corruption", "named the lie and followed it"], note=REASONING_NOTE)
        for name, c in _one_row_each(thinking):
            grid.rows.append((name, [(None, str(c.reasoning_n)), *(_shown(c, m) for m in REASONING_RATES)]))
        grids.append(grid)
    typed = [c for c in cells if any(m.startswith(ERROR_RATE) for m in c.metrics)]
    if typed:
        names = list(dict.fromkeys(m for c in typed for m in c.metrics if m.startswith(ERROR_RATE)))
        grid = Grid("Error types (the paper's from §2.8 and Table 7, ours marked): share of instances with "
                    "one, ×100 [95% CI]", [_error_type_header(n[len(ERROR_RATE):], typed) for n in names])
        for name, c in _one_row_each(typed):
            grid.rows.append((name, [_shown(c, n) for n in names]))
        grids.append(grid)
    return grids


def _error_type_header(name: str, cells: list[CellRecord]) -> str:
    """The type's name and whose it is: the paper's (§2.8, Table 7) or ours, as its task says."""
    from biorab.tasks import get_task

    origins = {get_task(c.task).error_type_origin.get(name, "ours") for c in cells}
    return f"{name.replace('_', ' ')} ({'paper' if 'paper' in origins else 'ours'})"


def _twin_grids(retrieving: list[CellRecord]) -> list[Grid]:
    if not retrieving:
        return []
    twin = Grid("Against the same model without evidence (no-retrieval twin), rate ×100 [95% CI]",
                ["misled (twin)", "misled excess", "switched to evidence", "switched to corruption",
                 "copy clean (twin)", "copy clean excess", "copy corrupted (twin)", "copy corrupted excess"],
                note=TWIN_NOTE)
    bins = [b for b in PRIOR_BINS if any(BY_PRIOR + b in c.metrics for c in retrieving)]
    position = Grid("Misled by position and prior, rate ×100 [95% CI]",
                    ["first misleading at 1", "at 2", "at ≥ 3",
                     *(PRIOR_BIN_LABELS[b] for b in bins)],
                    note=POSITION_NOTE)
    for name, c in _one_row_each(retrieving):
        baseline = "misled_rate_twin" in c.metrics
        twin.rows.append((name, [_shown(c, m) if baseline else (None, NO_BASELINE) for m in TWIN_RATES]))
        position.rows.append((name, [*(_shown(c, BY_RANK + r) for r in RANKS),
                                     *(_shown(c, BY_PRIOR + b) if baseline else (None, NO_BASELINE)
                                       for b in bins)]))
    return [twin, position]


@dataclass(frozen=True)
class DosePoint:
    """One counterfactual rate of one line: each drawn quantity as (value, ci_low, ci_high) ×100 (a bound
    the bootstrap could not give is ``None``; a quantity the cell lacks is all ``None``)."""

    rate: float
    share: tuple[float | None, float | None, float | None]
    conditional: tuple[float | None, float | None, float | None]
    excess: tuple[float | None, float | None, float | None]


#: The dose–response panels: the quantity, its axis label (the conditional one says what it conditions on).
PANELS: tuple[tuple[str, str], ...] = (
    ("share", "misled / all instances ×100"),
    ("conditional", "misled given misleading evidence ×100"),
    ("excess", "misled excess over the no-retrieval twin ×100"),
)


def _triple(cell: CellRecord, name: str) -> tuple[float | None, float | None, float | None]:
    v = cell.value(name) or {}
    return tuple(None if v.get(k) is None else float(v[k] or 0.0) * 100  # type: ignore[return-value]
                 for k in ("value", "ci_low", "ci_high"))


def dose_response_data(cells: list[CellRecord]) -> dict[tuple[str, ...], list[DosePoint]]:
    """The plotted points: per (model, dataset) line (and retriever, where the sweep has several), each
    counterfactual rate's misled share, misled rate given misleading evidence and misled excess, by rate.
    Only lines with two rates or more."""
    points = [c for c in cells if c.testbed == "counterfactual" and c.rate is not None and c.method == "none"
              and (c.value("misled_rate") or {}).get("value") is not None]
    several = len({c.retriever for c in points}) > 1
    lines: dict[tuple[str, ...], list[CellRecord]] = {}
    for c in points:
        key: tuple[str, ...] = (c.model, c.dataset, c.retriever) if several else (c.model, c.dataset)
        lines.setdefault(key, []).append(c)
    return {key: [DosePoint((c.rate or 0.0) * 100, _triple(c, MISLED_SHARE), _triple(c, "misled_rate"),
                            _triple(c, "misled_excess")) for c in sorted(line, key=lambda c: c.rate or 0.0)]
            for key, line in sorted(lines.items()) if len({c.rate for c in line}) > 1}


def dose_response(cells: list[CellRecord], out: Path) -> Path | None:
    """Three panels against the counterfactual rate, error bars the 95% CIs, one line per `dose_response_data`
    line: the unconditional misled share, the misled rate given misleading evidence, and the misled excess
    over the twin (left out of a line without one). ``None`` without two rates on one line."""
    lines = dose_response_data(cells)
    if not lines:
        return None
    from biorab.sweep.plots import _pyplot, _save

    plt = _pyplot()
    fig, axes = plt.subplots(1, len(PANELS), figsize=(15, 4.5))
    for ax, (field_, title) in zip(axes, PANELS, strict=True):
        for key, line in lines.items():
            drawn = [(p.rate, getattr(p, field_)) for p in line if getattr(p, field_)[0] is not None]
            if not drawn:
                continue
            xs = [x for x, _ in drawn]
            ys = [float(v[0] or 0.0) for _, v in drawn]
            # A bound the bootstrap could not give (n_boot 0) draws no bar on that side.
            low = [y - v[1] if v[1] is not None else 0.0 for y, (_, v) in zip(ys, drawn, strict=True)]
            high = [v[2] - y if v[2] is not None else 0.0 for y, (_, v) in zip(ys, drawn, strict=True)]
            ax.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, label=" / ".join(key))
        ax.set_xlabel("counterfactual rate (%)")
        ax.set_title(title, fontsize=9)
        ax.set_ylim(-102 if field_ == "excess" else -2, 102)
        if field_ == "excess":
            ax.axhline(0.0, color="grey", linewidth=0.8)
    axes[0].legend(fontsize=7)
    return _save(fig, plt, out / "misled_vs_counterfactual_rate.png")
