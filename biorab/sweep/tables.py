"""The paper's table shapes from a sweep's cells, as a neutral grid rendered to markdown and HTML.

- Table 1 shape (`by_retriever`): rows (LLM, retriever) over the labeled corpus and no retrieval,
  columns datasets.
- Table 2 shape (`by_corpus`): rows (LLM, corpus: unlabeled, counterfactual x%, diverse, labeled, none),
  columns datasets.
- Table 3 shape (`awareness`): rows (LLM, dataset), true and false negative-awareness rates.
- Tables 4-5 shape: the method cells' headline metric, and the methods' own scores against the true
  ledger (detection precision/recall/F1 and correction accuracy; labeling accuracy and coverage).
- Table 6 shape (`sampling_bias`): rows (LLM, retriever, dataset, positive:negative ratio), accuracy (the
  micro P/R/F1, equal to it), weighted P/R/F1 and the positive class's AUROC/AUPRC. Resampled cells appear
  in no other table.
- Test duplicates (`test_duplicates`): Table 1's cells as the paper ran them next to the same cells with
  ``exclude_test_duplicates: true``, where both ran; and every retrieving cell's leak share.

A cell shows the headline metric ×100 with its 95% CI; the best value of a column is bold (underlined in
the paper); ``*`` marks a significant difference from the same LLM without retrieval (paired bootstrap,
Holm-corrected, p < 0.05), ``†`` a cell whose baseline is missing from the sweep.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field

from biorab.metrics.definitions import AWARENESS_CONVENTION, LEAK_SHARE, headline_name
from biorab.sweep.collect import CellRecord
from biorab.sweep.significance import Significance
from biorab.tasks import single_label

ALPHA = 0.05
AWARENESS = ("true_negative_awareness_rate", "false_negative_awareness_rate")
#: The methods' own scores (docs/methods.md), in the order the table shows those a sweep has.
METHOD_SCORES = ("detection_precision", "detection_recall", "detection_f1", "correction_accuracy",
                 "corpus_accuracy_before", "corpus_accuracy_after", "labeling_accuracy", "labeling_coverage")
#: Table 6's columns (the paper's AUROC/AUPRC are the positive class's: `binary_auroc` / `binary_auprc`).
#: The paper's micro P/R/F1 are one number on a single-label task, accuracy: shown once, as `micro_f1`.
SAMPLING_BIAS = ("micro_f1", "weighted_precision", "weighted_recall", "weighted_f1", "binary_auroc",
                 "binary_auprc")
#: Display names of columns whose metric has a name readers expect (the JSON keys stay).
SHOWN_AS = {"micro_f1": "accuracy (micro f1)"}


@dataclass
class Grid:
    """A table: a title, column names, rows of (row label, cells); a cell is (value, text)."""

    title: str
    columns: list[str]
    rows: list[tuple[str, list[tuple[float | None, str]]]] = field(default_factory=list)
    note: str = ""

    def best(self) -> list[float | None]:
        """The best value of each column (ties all marked)."""
        out = []
        for j in range(len(self.columns)):
            values = [v for _, cells in self.rows if (v := cells[j][0]) is not None]
            out.append(max(values) if values else None)
        return out


def _fmt(cell: CellRecord, name: str | None, sig: Significance | None) -> tuple[float | None, str]:
    v = cell.value(name)
    if v is None or v.get("value") is None:
        return None, "n/a"
    value = float(v["value"] or 0.0)
    text = f"{value * 100:.2f}"
    if v.get("ci_low") is not None and v.get("ci_high") is not None:
        text += f" [{float(v['ci_low'] or 0) * 100:.1f}, {float(v['ci_high'] or 0) * 100:.1f}]"
    if sig is not None and sig.p_holm < ALPHA:
        text += "*"
    return value, text


def _table(title: str, cells: list[CellRecord], sig: dict[int, Significance], ids: dict[int, int],
           label: Callable[[CellRecord], str]) -> Grid:
    """Rows labelled by `label(cell)` (first-seen order), columns datasets (first-seen order)."""
    datasets = list(dict.fromkeys(c.dataset for c in cells))
    grid = Grid(title, datasets)
    for name, by_ds in rows_of(cells, label, lambda c: c.dataset).items():
        grid.rows.append((name, [_fmt(c, None, sig.get(ids[id(c)])) if (c := by_ds.get(d)) else (None, "")
                                 for d in datasets]))
    return grid


def rows_of(cells: list[CellRecord], label: Callable[[CellRecord], str],
            column: Callable[[CellRecord], str]) -> dict[str, dict[str, CellRecord]]:
    """Row label → column → cell, rows in first-seen order. Cells that `label` would put in the same row
    and column (a plain cell and a method cell on one corpus, two dataset limits, two seeds...) each get a
    row of their own: their label gains the spec axes that tell them apart (`spec_axes`), only those.
    Cells whose whole spec is the same cannot be told apart: a ValueError names them."""
    groups: dict[str, list[CellRecord]] = {}
    for c in cells:
        groups.setdefault(label(c), []).append(c)
    rows: dict[str, dict[str, CellRecord]] = {}
    for base, group in groups.items():
        shown = [[text for _, text in spec_axes(c)] for c in group]
        chosen: list[int] = []
        while clash := _clash(group, column, shown, chosen):
            axis = next((j for j in range(len(shown[clash[0]])) if j not in chosen
                         and len({shown[i][j] for i in clash}) > 1), None)
            if axis is None:
                names = ", ".join(group[i].predictions.name for i in clash)
                raise ValueError(f"cells {names} would share the report's row {base!r}, column "
                                 f"{column(group[clash[0]])!r}: their specs are the same")
            chosen.append(axis)
        for i, c in enumerate(group):
            name = " / ".join([base, *(t for j in sorted(chosen) if (t := shown[i][j]))])
            row = rows.setdefault(name, {})
            if column(c) in row:
                raise ValueError(f"cells {row[column(c)].predictions.name} and {c.predictions.name} would "
                                 f"share the report's row {name!r}, column {column(c)!r}")
            row[column(c)] = c
    return rows


def _clash(group: list[CellRecord], column: Callable[[CellRecord], str], shown: list[list[str]],
           chosen: list[int]) -> list[int]:
    """The indices of the first cells of `group` that the `chosen` axes leave in one row and column."""
    seen: dict[tuple[str, ...], list[int]] = {}
    for i, c in enumerate(group):
        seen.setdefault((column(c), *(shown[i][j] for j in chosen)), []).append(i)
    return next((ix for ix in seen.values() if len(ix) > 1), [])


#: Spec fields shown by a named axis of `spec_axes` (the other fields are shown as ``field value``).
_NAMED = ("seed", "retrieval.method", "retrieval.exclude_test_duplicates", "retrieval.filter",
          "dataset.limit")


def spec_axes(c: CellRecord) -> list[tuple[str, str]]:
    """The cell's spec axis by axis, as the text a row label gains when that axis tells two cells apart
    (empty: the axis at its default, nothing added). The same axes in the same order for every cell."""
    spec = dict(c.spec)
    limit, kept = spec.get("dataset.limit"), spec.get("retrieval.filter", "null")
    axes = [("method", "" if c.method == "none" else c.method),
            ("exclude_test_duplicates", "test duplicates excluded" if c.excluded else ""),
            ("filter", "" if kept == "null" else f"filter {kept}"),
            ("limit", "" if limit is None else "all rows" if limit == "null" else f"{limit} rows"),
            ("ratio", c.ratio or ""),
            ("seed", f"seed {c.seed}")]
    return axes + [(k, f"{k.split('.', 1)[-1]} {v}") for k, v in c.spec if k not in _NAMED]


def build_tables(cells: list[CellRecord], sig: dict[int, Significance]) -> list[Grid]:
    """The report's tables (only those the sweep has cells for)."""
    ids = {id(c): i for i, c in enumerate(cells)}
    resampled = [c for c in cells if c.ratio is not None]
    cells = [c for c in cells if c.ratio is None]
    grids = []
    excluded = [c for c in cells if c.excluded]
    cells = [c for c in cells if not c.excluded]
    t1 = [c for c in cells if c.testbed in ("labeled", "none") and c.method == "none"]
    if any(c.retriever != "none" for c in t1):
        grid = _table("Table 1 shape: LLM × retriever (labeled corpus), headline metric ×100 [95% CI]",
                      t1, sig, ids, lambda c: f"{c.model} / {c.retriever}")
        grid.note = headline_note(t1)
        grids.append(grid)
    if excluded:
        grids.append(test_duplicates(t1, excluded, sig, ids))
    if any(c.leak is not None for c in cells + excluded + resampled):
        grids.append(_leaks(cells + excluded + resampled))
    other = [c for c in cells if c.testbed not in ("labeled", "none", "negative_awareness")]
    if other:
        models = {c.model for c in other}
        t2 = [c for c in cells if c.model in models and c.testbed != "negative_awareness"
              and (c.testbed != "labeled" or c.retriever in {o.retriever for o in other})]
        grids.append(_table("Table 2 shape: corpus settings (Testbeds 1-3), headline metric ×100 [95% CI]",
                            sorted(t2, key=_corpus_order), sig, ids,
                            lambda c: f"{c.model} / {c.retriever} / {c.corpus}"))
    methods = [c for c in cells if c.method != "none"]
    if methods:
        grids.append(_table("Tables 4-5 shape: methods", methods, sig, ids,
                            lambda c: f"{c.model} / {c.method} / {c.corpus}"))
        grids.append(_scores("Tables 4-5: the methods' own scores against the true ledger, ×100 [95% CI]",
                             methods, METHOD_SCORES, lambda c: f"{c.model} / {c.method} / {c.corpus} / "
                             f"{c.dataset}"))
    aware = [c for c in cells if any(m in c.metrics for m in AWARENESS)]
    if aware:
        grids.append(_awareness(aware))
    if resampled:
        grids.append(_scores("Table 6 shape: sampling bias (positive:negative ratio), ×100 [95% CI]",
                             resampled, SAMPLING_BIAS, lambda c: f"{c.model} / {c.retriever} / {c.dataset} / "
                             f"{c.ratio}"))
    return grids


def _scores(title: str, cells: list[CellRecord], names: tuple[str, ...],
            label: Callable[[CellRecord], str]) -> Grid:
    """Rows labelled by `label(cell)`, columns the metrics of `names` that any of the cells has."""
    columns = [m for m in names if any(m in c.metrics for c in cells)]
    grid = Grid(title, [SHOWN_AS.get(m, m).replace("_", " ") for m in columns])
    for name, row in rows_of(cells, label, _one_column).items():
        grid.rows.append((name, [_fmt(row[""], m, None) for m in columns]))
    return grid


def _one_column(c: CellRecord) -> str:
    """A table whose row is one cell (its columns are metrics): every cell in the same column."""
    return ""


def _corpus_order(c: CellRecord) -> tuple[str, int, float]:
    order = ["unlabeled", "counterfactual", "diverse", "labeled", "none"]
    return (c.model, order.index(c.testbed) if c.testbed in order else 9, c.rate or 0.0)


def _awareness(cells: list[CellRecord]) -> Grid:
    grid = Grid("Table 3 shape: negative awareness (Testbed 4), rate ×100 [95% CI]",
                ["true negative awareness", "false negative awareness"])
    for name, row in rows_of(cells, lambda c: f"{c.model} / {c.dataset}", _one_column).items():
        grid.rows.append((name, [_fmt(row[""], m, None) for m in AWARENESS]))
    grid.note = AWARENESS_CONVENTION
    return grid


def headline_note(cells: list[CellRecord]) -> str:
    """Which metric each dataset's column shows (accuracy where micro-F1 equals it)."""
    shown = {c.dataset: headline_name(single_label(c.task), c.metric) for c in cells}
    return "Headline metric per dataset: " + ", ".join(f"{d}: {m}" for d, m in shown.items()) + "."


def test_duplicates(t1: list[CellRecord], excluded: list[CellRecord], sig: dict[int, Significance],
                    ids: dict[int, int]) -> Grid:
    """Rows (LLM, retriever, dataset) where both ran: the paper's cell and its leak share, then the cell
    with the test duplicates excluded (leak share 0 by construction, shown as measured)."""
    paper = {(c.model, c.seed, c.dataset, c.setting): c for c in t1 if c.retriever != "none"}
    grid = Grid("Table 1 with the test sentences' own copies excluded from retrieval (where both ran), "
                "headline metric ×100 [95% CI]",
                ["as the paper", "leak share ×100", "test duplicates excluded", "leak share ×100"],
                note=LEAK_SHARE)
    pairs = {id(c): base for c in excluded if (base := paper.get((c.model, c.seed, c.dataset, c.setting)))}
    shown = rows_of([c for c in excluded if id(c) in pairs],
                    lambda c: f"{c.model} / {pairs[id(c)].retriever} / {c.dataset}", _one_column)
    for name, row in shown.items():
        c = row[""]
        base = pairs[id(c)]
        grid.rows.append((name, [_fmt(base, None, sig.get(ids[id(base)])), _leak(base),
                                 _fmt(c, None, sig.get(ids[id(c)])), _leak(c)]))
    return grid


def _leak(c: CellRecord) -> tuple[float | None, str]:
    # Lower is better, so the column's "best" (max) marking would mislead: the value is left unranked.
    return (None, "n/a") if c.leak is None else (None, f"{c.leak * 100:.1f}")


def _leaks(cells: list[CellRecord]) -> Grid:
    """Every retrieving cell's leak share ×100: rows (LLM, retriever, corpus), columns datasets."""
    retrieving = [c for c in cells if c.leak is not None]
    datasets = list(dict.fromkeys(c.dataset for c in retrieving))
    grid = Grid("Leak share ×100: queries whose retrieved hits include their own text", datasets,
                note=LEAK_SHARE)
    for name, by_ds in rows_of(retrieving, _leak_label, lambda c: c.dataset).items():
        grid.rows.append((name, [_leak(by_ds[d]) if d in by_ds else (None, "") for d in datasets]))
    return grid


def _leak_label(c: CellRecord) -> str:
    label = f"{c.model} / {c.retriever} / {c.corpus}"
    return label + (f" / {c.method}" if c.method != "none" else "") + (f" / {c.ratio}" if c.ratio else "")


def to_markdown(grid: Grid) -> str:
    best = grid.best()
    lines = [f"### {grid.title}", "", "| | " + " | ".join(grid.columns) + " |",
             "|---|" + "---|" * len(grid.columns)]
    for name, row in grid.rows:
        texts = [f"**{t}**" if v is not None and v == best[j] else t for j, (v, t) in enumerate(row)]
        lines.append(f"| {name} | " + " | ".join(texts) + " |")
    return "\n".join(lines) + ("\n\n" + grid.note if grid.note else "") + "\n"


def to_html(grid: Grid) -> str:
    best = grid.best()
    head = "".join(f"<th>{html.escape(c)}</th>" for c in grid.columns)
    body = []
    for name, row in grid.rows:
        tds = "".join(f"<td class='best'>{html.escape(t)}</td>" if v is not None and v == best[j]
                      else f"<td>{html.escape(t)}</td>" for j, (v, t) in enumerate(row))
        body.append(f"<tr><th>{html.escape(name)}</th>{tds}</tr>")
    note = f"<p>{html.escape(grid.note.replace('`', ''))}</p>\n" if grid.note else ""
    return (f"<h3>{html.escape(grid.title)}</h3>\n<table><tr><th></th>{head}</tr>\n" + "\n".join(body)
            + "</table>\n" + note)


def long_table(cells: list[CellRecord]) -> dict[str, list[object]]:
    """Every cell as one row (its axes, headline metric and 95% CI): the sweep's table as MLflow shows it
    (a table artifact on the sweep's parent run), one column per axis so the UI can sort and filter."""
    rows = sorted(cells, key=lambda c: (c.model, c.dataset, c.retriever, _corpus_order(c), c.method))
    out: dict[str, list[object]] = {k: [] for k in (
        "model", "dataset", "task", "retriever", "corpus", "method", "metric", "value", "ci_low", "ci_high",
        "n")}
    for c in rows:
        v = c.value() or {}
        for key, item in (("model", c.model), ("dataset", c.dataset), ("task", c.task),
                          ("retriever", c.retriever), ("corpus", c.corpus), ("method", c.method),
                          ("metric", c.metric), ("value", v.get("value")), ("ci_low", v.get("ci_low")),
                          ("ci_high", v.get("ci_high")), ("n", c.n)):
            out[key].append(item)
    return out
