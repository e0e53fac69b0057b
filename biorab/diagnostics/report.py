"""The run report's claim-diagnostics table (`biorab.runner.scoring.run_report`), and the names and note the
sweep report's table shares (`biorab.sweep.claims_report`)."""

from __future__ import annotations

from collections.abc import Sequence

from biorab.diagnostics.cell_claims import METRICS
from biorab.ral.specs.cell_records import CellResult

#: Each metric's column heading, in report order.
HEADINGS: tuple[str, ...] = ("claim recall", "context precision", "context utilization", "noise (relevant)",
                             "noise (irrelevant)", "hallucination", "self-knowledge", "knew it",
                             "right without support", "faithfulness")
NOTE = ("Claim diagnostics (docs/metrics.md, \"Claim diagnostics\"): RAGChecker's metrics with the answer "
        "items as claims and \"a retrieved hit's label holds the item\" as entailment, no judge. Retriever: "
        "claim recall = gold items some hit holds / gold items; context precision = hits holding a gold "
        "item / hits; context utilization = recalled gold items the answer holds / recalled gold items. "
        "Generator, each over the answer's items: noise = wrong items held by a relevant / only by "
        "irrelevant hits; hallucination = wrong items no hit holds; self-knowledge = right items no hit "
        "holds, split by the "
        "no-retrieval twin's answer into knew it (the twin answers it too) and right without support; "
        "faithfulness = items some hit holds. Mean over the instances where each is defined (parse failures "
        "have no answer items), 95% bootstrap CI. Not computed for MedMCQA (option letters mean different "
        "things in different questions).")


def claim_lines(results: Sequence[CellResult]) -> list[str]:
    """The table of the cells with claim metrics (none: no lines)."""
    cells = [r for r in results if any(m in r.metrics for m in METRICS)]
    if not cells:
        return []
    out = ["", "## Claim diagnostics", "", NOTE, "", "| cell | answered / n | " + " | ".join(HEADINGS) + " |",
           "|---|---|" + "---|" * len(HEADINGS)]
    for r in cells:
        answered = r.extra.get("claims", {}).get("n_faithfulness", 0)
        out.append(f"| {r.plan.label} | {answered} / {r.n} | "
                   + " | ".join(_shown(r.metrics.get(m)) for m in METRICS) + " |")
    return out


def _shown(value: dict[str, float | None] | None) -> str:
    if value is None or value.get("value") is None:
        return "n/a"
    low, high = value.get("ci_low"), value.get("ci_high")
    bounds = f" [{_num(low)}, {_num(high)}]" if low is not None or high is not None else ""
    return f"{_num(value['value'])}{bounds}"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"
