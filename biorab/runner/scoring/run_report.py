"""A short markdown report of a run (also logged to MLflow as an artifact)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from biorab.attribution.cells import ERROR_RATE, EVIDENCE_RATES, FLIP_RATES, MCNEMAR_P, is_attribution_metric
from biorab.cells import CellResult
from biorab.metrics.definitions import (
    ACCURACY_IDENTITY,
    AWARENESS_CONVENTION,
    LEAK_SHARE,
    display_name,
    single_label,
)

#: The metric names of the awareness rates (`biorab.metrics.awareness`).
_AWARENESS = ("true_negative_awareness_rate", "false_negative_awareness_rate")


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def metric_cell(value: dict[str, float | None]) -> str:
    """``0.512 [0.431, 0.598]`` (``n/a`` for an undefined value or bound).

    >>> metric_cell({"value": 0.5, "ci_low": 0.25, "ci_high": None})
    '0.500 [0.250, n/a]'
    """
    return f"{_num(value['value'])} [{_num(value['ci_low'])}, {_num(value['ci_high'])}]"


def render_report(name: str, results: Sequence[CellResult], stats: dict[str, Any], backend: str) -> str:
    """Markdown: one table row per cell and metric (metrics equal to accuracy shown as such), what the
    numbers mean where the report shows them, the leak share of each retrieving cell, then the execution
    counts."""
    lines = [
        f"# BioRAB run `{name}`",
        "",
        f"Backend: `{backend}`. Values are point estimates with 95% bootstrap CIs.",
        "",
        "| cell | task | n | metric | value [95% CI] | parse failures | generation failures |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for metric, value in r.metrics.items():
            if is_attribution_metric(metric):  # in the attribution tables below
                continue
            shown = metric_cell(value)
            shown = f"incomplete ({shown} over a partial cell)" if r.incomplete else shown
            lines.append(f"| {r.plan.label} | {r.plan.task} | {r.n} | {display_name(r.plan.task, metric)} | "
                         f"{shown} | {r.parse_failures} | {r.generation_failures} |")
    lines += _definitions(results) + _leak_lines(results) + attribution_lines(results)
    lines += ["", "Execution: " + ", ".join(f"{k}={v}" for k, v in stats.items() if not isinstance(v, dict))]
    return "\n".join(lines) + "\n"


def _definitions(results: Sequence[CellResult]) -> list[str]:
    """The identity and convention notes, each once, for the metrics this report shows."""
    out = []
    if any(single_label(r.plan.task) for r in results):
        out += ["", ACCURACY_IDENTITY]
    if any(name in r.metrics for r in results for name in _AWARENESS):
        out += ["", AWARENESS_CONVENTION]
    return out


def _leak_lines(results: Sequence[CellResult]) -> list[str]:
    """One line per retrieving cell: leaking queries / queries, and whether test duplicates were excluded."""
    leaks = [(r, r.extra["leak_share"]) for r in results if r.extra.get("leak_share")]
    if not leaks:
        return []
    out = ["", LEAK_SHARE, "", "| cell | leak share | leaking / queries | exclude_test_duplicates |",
           "|---|---|---|---|"]
    for r, leak in leaks:
        excluded = r.plan.retrieval is not None and r.plan.retrieval.exclude_test_duplicates
        out.append(f"| {r.plan.label} | {_num(leak['value'])} | {leak['leaking']} / {leak['queries']} | "
                   f"{'on' if excluded else 'off'} |")
    return out


ATTRIBUTION_NOTE = (
    "Evidence attribution (docs/metrics.md): misled = answers that follow a corrupted retrieved item, among "
    "instances whose evidence holds one (parse failures count as not misled); resisted = right answers among "
    "those; copy = answers equal to a retrieved item's label, on clean evidence (no corrupted item) and on "
    "corrupted evidence (the label of a corrupted item); helped / hurt = wrong → right / right → wrong "
    "against the same model without retrieval, with McNemar's p. Per instance: "
    "`cells/<cell>/attribution.parquet`.")


def attribution_lines(results: Sequence[CellResult]) -> list[str]:
    """The attribution rates of the retrieving cells, and the §2.8 error types of the triple cells."""
    cells = [r for r in results if any(m in r.metrics for m in (*EVIDENCE_RATES, *FLIP_RATES))]
    out: list[str] = []
    if cells:
        out += ["", "## Evidence attribution", "", ATTRIBUTION_NOTE, "",
                "| cell | corrupted evidence / n | misled | resisted | copy (clean) | copy (corrupted) "
                "| helped | hurt | McNemar p |", "|---|---|---|---|---|---|---|---|---|"]
        for r in cells:
            a = r.extra.get("attribution", {})
            shown = [_rate(r, m) for m in (*EVIDENCE_RATES, *FLIP_RATES)]
            p = (r.metrics.get(MCNEMAR_P) or {}).get("value")
            out.append(f"| {r.plan.label} | {a.get('with_corrupted', 0)} / {r.n} | " + " | ".join(shown)
                       + f" | {_num(p)} |")
    typed = [r for r in results if r.extra.get("attribution", {}).get("error_types")]
    for task in dict.fromkeys(r.plan.task for r in typed):
        out += error_type_table(task, [r for r in typed if r.plan.task == task])
    return out


def error_type_table(task: str, cells: Sequence[CellResult]) -> list[str]:
    """The error types of one task's cells: per type its count, the share of the cell's errors it explains
    and the share of instances with one [95% CI]; each type is marked as the paper's (§2.8, Table 7) or
    ours (`biorab.tasks.TaskType.error_type_origin`)."""
    from biorab.tasks import get_task

    origin = get_task(task).error_type_origin
    names = list(dict.fromkeys(n for r in cells for n in r.extra["attribution"]["error_types"]))
    paper = any(origin.get(n) == "paper" for n in names)
    title = f"Error types of {task}" + (" (the paper's are §2.8, Table 7's)" if paper else " (ours)")
    headers = [f"{n.replace('_', ' ')} ({origin.get(n, 'ours')})" for n in names]
    out = ["", f"{title}, per cell: count, the share of the cell's errors it explains, and the share of "
           "instances with one [95% CI].", "",
           "| cell | errors | " + " | ".join(headers) + " |", "|---|---|" + "---|" * len(names)]
    for r in cells:
        counts = r.extra["attribution"]["error_types"]
        total = sum(counts.values())
        out.append(f"| {r.plan.label} | {total} | " + " | ".join(
            f"{counts.get(n, 0)} ({_share(counts.get(n, 0), total)}): {_rate(r, ERROR_RATE + n)}"
            for n in names) + " |")
    return out


def _share(count: int, total: int) -> str:
    return "n/a" if not total else f"{count / total:.0%}"


def _rate(result: CellResult, name: str) -> str:
    value = result.metrics.get(name)
    return "n/a" if value is None else metric_cell(value)
