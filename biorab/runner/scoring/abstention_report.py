"""The run report's "Knowing when to abstain" section (`biorab.metrics.selective`): per cell, selective
accuracy at each coverage, AURC, ECE and the probe gate, then each cell's reliability bins; the note is the
one the sweep report's table shows too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from biorab.metrics.selective import PROBE_METRICS, SELECTIVE_METRICS, is_abstention_metric
from biorab.ral.specs.cell_records import CellResult

SECTION = "Knowing when to abstain"
HEADINGS: tuple[str, ...] = ("acc @100%", "acc @75%", "acc @50%", "acc @25%", "AURC", "ECE",
                             "probe-gated acc", "probe coverage", "probed acc")
NOTE = ("Confidence = the top-scored label's probability, the label log-probs normalised over the scored "
        "labels (instances with label scores only). acc @c% = accuracy of the answers on the ceil(c% × n) "
        "most confident instances (ties in slice order); AURC = mean error rate of the k most confident "
        "answers over k = 1..n (lower is better); ECE = Σ over 10 equal-width confidence bins of (bin "
        "instances / n) × |share of top labels equal to the gold − mean confidence|. Probe gate (probing "
        "cells): answer only where the awareness probe says the evidence is not negative (\"True\"); "
        "accuracy over those, coverage = those / probed instances, probed acc = accuracy over all probed. "
        "95% bootstrap CIs (docs/metrics.md § Knowing when to abstain).")


def abstention_lines(results: Sequence[CellResult]) -> list[str]:
    """The section (no lines when no cell has an abstention metric)."""
    cells = [r for r in results if any(is_abstention_metric(m) for m in r.metrics)]
    if not cells:
        return []
    out = ["", f"## {SECTION}", "", NOTE, "", "| cell | scored | probed | " + " | ".join(HEADINGS) + " |",
           "|---|---|---|" + "---|" * len(HEADINGS)]
    for r in cells:
        counts = (r.extra.get("abstention") or {}).get("counts") or {}
        out.append(f"| {r.plan.label} | {counts.get('scored', 0)} | {counts.get('probed', 0)} | "
                   + " | ".join(shown(r.metrics.get(m)) for m in (*SELECTIVE_METRICS, *PROBE_METRICS)) + " |")
    curves = [(r.plan.label, (r.extra.get("abstention") or {}).get("reliability") or []) for r in cells]
    if any(bins for _, bins in curves):
        out += ["", "Reliability (per confidence bin: instances, mean confidence, share of top labels equal "
                "to the gold):", "", "| cell | bin | n | confidence | accuracy |", "|---|---|---|---|---|"]
        for label, bins in curves:
            out += [f"| {label} | {b['low']:.1f}-{b['high']:.1f} | {b['n']:g} | {b['confidence']:.3f} | "
                    f"{b['accuracy']:.3f} |" for b in bins]
    return out


def shown(value: dict[str, Any] | None) -> str:
    """``0.512 [0.431, 0.598]``; ``n/a`` for a metric the cell lacks or an undefined value."""
    if value is None or value.get("value") is None:
        return "n/a"
    bounds = [("n/a" if value.get(k) is None else f"{value[k]:.3f}") for k in ("ci_low", "ci_high")]
    return f"{value['value']:.3f} [{bounds[0]}, {bounds[1]}]"
