"""A short markdown report of a run (also logged to MLflow as an artifact)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
    TWIN_RATES,
    is_attribution_metric,
)
from biorab.attribution.twin import PRIOR_BIN_LABELS, PRIOR_BINS
from biorab.diagnostics.cell_claims import is_claim_metric
from biorab.diagnostics.report import claim_lines
from biorab.metrics.definitions import (
    ACCURACY_IDENTITY,
    AWARENESS_CONVENTION,
    LEAK_SHARE,
    display_name,
)
from biorab.metrics.paired import holm_or_none
from biorab.metrics.selective import is_abstention_metric
from biorab.ral.specs.cell_records import CellResult
from biorab.runner.scoring.abstention_report import abstention_lines
from biorab.tasks import single_label

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
            if is_attribution_metric(metric) or is_claim_metric(metric) or is_abstention_metric(metric):
                # in the tables below
                continue
            shown = metric_cell(value)
            shown = f"incomplete ({shown} over a partial cell)" if r.incomplete else shown
            name = display_name(single_label(r.plan.task), metric)
            lines.append(f"| {r.plan.label} | {r.plan.task} | {r.n} | {name} | "
                         f"{shown} | {r.parse_failures} | {r.generation_failures} |")
    lines += _definitions(results) + _leak_lines(results) + attribution_lines(results) + claim_lines(results)
    lines += abstention_lines(results)
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
    "Evidence attribution (docs/metrics.md). A retrieved item is misleading when its label is wrong (the "
    "testbed's corruption, or a corpus method's relabelling) and its wrong items are not all in the gold;"
    " misled = answers that follow a misleading item, among instances whose evidence holds one (parse "
    "failures count as not misled); misled share = the same misled answers over every instance; resisted "
    "= right answers among those instances; corruption agrees with gold = instances whose corrupted "
    "evidence all carries the gold, out of those with corrupted evidence; copy = answers equal to a "
    "retrieved item's label, on clean evidence and on corrupted evidence; helped / hurt = wrong → right /"
    " right → wrong against the same model without retrieval, with McNemar's p and its Holm adjustment "
    "over this table. Per instance: `cells/<cell>/attribution.parquet`.")
TWIN_NOTE = (
    "Against the same model without evidence (its no-retrieval twin's answer flagged against this cell's "
    "hits, paired by instance): on a closed label set a wrong answer equals a corrupted label by chance, so "
    "the twin's rate is the chance level for this model and the excess (cell − twin, paired bootstrap CI) "
    "is what the evidence caused; switched = the cell answered a hit's label (a misleading hit's) that the "
    "twin did not. \"no baseline\": the cell has no twin; its rates above are then not influence.")
POSITION_NOTE = (
    "Misled rate by the rank of the first misleading hit, and by the twin's prior (the label log-prob margin "
    "of its answer where labels are scored, else whether it was right), among instances with misleading "
    "evidence; (misled / instances) after each rate.")


def attribution_lines(results: Sequence[CellResult]) -> list[str]:
    """The attribution rates of the retrieving cells (with the Holm-adjusted McNemar p over the cells
    listed), those against each cell's twin, by position and prior, and the §2.8 error types of the triple
    cells."""
    cells = [r for r in results if any(m in r.metrics for m in (*EVIDENCE_RATES, *FLIP_RATES))]
    out: list[str] = []
    if cells:
        raw = [(r.metrics.get(MCNEMAR_P) or {}).get("value") for r in cells]
        out += ["", "## Evidence attribution", "", ATTRIBUTION_NOTE, "",
                "| cell | misleading evidence / n | corruption agrees with gold | misled | misled share "
                "| resisted | copy (clean) | copy (corrupted) | helped | hurt | McNemar p | Holm p |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r, p, adjusted in zip(cells, raw, holm_or_none(raw), strict=True):
            a = r.extra.get("attribution", {})
            shown = [_rate(r, m) for m in (AGREES, "misled_rate", MISLED_SHARE, "resisted_rate",
                                           "copy_rate_clean", "copy_rate_corrupted", *FLIP_RATES)]
            out.append(f"| {r.plan.label} | {a.get('with_misleading', 0)} / {r.n} | " + " | ".join(shown)
                       + f" | {_num(p)} | {_num(adjusted)} |")
        out += _twin_lines(cells) + _position_lines(cells) + _reasoning_lines(cells)
    typed = [r for r in results if r.extra.get("attribution", {}).get("error_types")]
    for task in dict.fromkeys(r.plan.task for r in typed):
        out += error_type_table(task, [r for r in typed if r.plan.task == task])
    return out


def _reasoning_lines(cells: Sequence[CellResult]) -> list[str]:
    """The thinking cells' reasoning against misleading evidence (docs/metrics.md: denominator *R*)."""
    thinking = [r for r in cells if "reasoning" in r.extra.get("attribution", {})]
    if not thinking:
        return []
    out = ["", "Reasoning against misleading evidence: over the instances with a misleading hit and "
           "reasoning text (R), the reasoning quotes a corrupted label; it does and the answer followed the "
           "corruption (named the lie and still followed it).", "",
           "| cell | R | quoted corruption | named the lie and followed it |", "|---|---|---|---|"]
    for r in thinking:
        counts = r.extra["attribution"]["reasoning"]
        out.append(f"| {r.plan.label} | {counts['misleading_with_reasoning']} | "
                   f"{_rate(r, 'quoted_corruption_rate')} | {_rate(r, 'named_lie_followed_rate')} |")
    return out


def _twin_lines(cells: Sequence[CellResult]) -> list[str]:
    retrieving = [r for r in cells if "baseline" in r.extra.get("attribution", {})]
    if not retrieving:
        return []
    out = ["", TWIN_NOTE, "",
           "| cell | twin | misled (twin) | misled excess | switched to evidence | switched to corruption "
           "| copy clean (twin) | copy clean excess | copy corrupted (twin) | copy corrupted excess |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in retrieving:
        baseline = r.extra["attribution"]["baseline"]
        if baseline == NO_BASELINE:
            out.append(f"| {r.plan.label} | {NO_BASELINE} |" + f" {NO_BASELINE} |" * len(TWIN_RATES))
        else:
            shown = " | ".join(_rate(r, m) for m in TWIN_RATES)
            out.append(f"| {r.plan.label} | {baseline} | {shown} |")
    return out


def _position_lines(cells: Sequence[CellResult]) -> list[str]:
    retrieving = [r for r in cells if "by_rank" in r.extra.get("attribution", {})]
    if not retrieving:
        return []
    bins = [b for b in PRIOR_BINS if any(b in (r.extra["attribution"].get("prior") or {}).get("bins", {})
                                         for r in retrieving)]
    out = ["", POSITION_NOTE, "",
           "| cell | first misleading at 1 | at 2 | at ≥ 3 | " + " | ".join(PRIOR_BIN_LABELS[b] for b in bins)
           + " |",
           "|---|---|---|---|" + "---|" * len(bins)]
    for r in retrieving:
        a = r.extra["attribution"]
        ranks = [f"{_rate(r, BY_RANK + k)} ({v['misled']}/{v['n']})" for k, v in a["by_rank"].items()]
        prior = (a.get("prior") or {}).get("bins", {})
        shown = [f"{_rate(r, BY_PRIOR + b)} ({prior[b]['misled']}/{prior[b]['misleading']})" if b in prior
                 else (NO_BASELINE if a.get("baseline") == NO_BASELINE else "n/a") for b in bins]
        out.append(f"| {r.plan.label} | " + " | ".join(ranks + shown) + " |")
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
