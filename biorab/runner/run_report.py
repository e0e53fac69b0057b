"""A short markdown report of a run (also logged to MLflow as an artifact)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from biorab.cells import CellResult


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def metric_cell(value: dict[str, float | None]) -> str:
    """``0.512 [0.431, 0.598]`` (``n/a`` for an undefined value or bound).

    >>> metric_cell({"value": 0.5, "ci_low": 0.25, "ci_high": None})
    '0.500 [0.250, n/a]'
    """
    return f"{_num(value['value'])} [{_num(value['ci_low'])}, {_num(value['ci_high'])}]"


def render_report(name: str, results: Sequence[CellResult], stats: dict[str, Any], backend: str) -> str:
    """Markdown: one table row per cell and metric, then the execution counts."""
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
            shown = metric_cell(value)
            shown = f"incomplete ({shown} over a partial cell)" if r.incomplete else shown
            lines.append(f"| {r.plan.label} | {r.plan.task} | {r.n} | {metric} | {shown} | "
                         f"{r.parse_failures} | {r.generation_failures} |")
    lines += ["", "Execution: " + ", ".join(f"{k}={v}" for k, v in stats.items() if not isinstance(v, dict))]
    return "\n".join(lines) + "\n"
