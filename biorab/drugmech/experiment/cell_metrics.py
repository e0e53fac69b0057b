"""Score DrugMech cells from the rows on disk with `biorab.drugmech` (as ``biorab drugmech score`` does).

Each cell's consolidated rows become responses (``gen_text``; a failed generation or a ``finish_reason``
other than ``stop`` is an incomplete answer: wrong, counted apart), are scored with
`biorab.drugmech.scoring.responses.score_responses`, and the verdicts are written into the cell's
predictions file (``pred_ok`` = strict correctness, ``pred_label`` = the parsed option or YES/NO,
``pred_scores`` = the row verdict of ``drugmech score --json``). The run-level table (per file × world/mode
over runs: mean, SD, 90% t-interval; the grouped stratified BCa bootstrap; precision/recall pairs) is
`biorab.drugmech.scoring.accuracy_tables.accuracy_report` over every DrugMech row of the run.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from biorab.drugmech.experiment.spec import DrugMechSpec, drugmech_info
from biorab.ral.specs.cell_records import CellResult, CellSlice
from biorab.ral.specs.rows import row_error, to_table
from biorab.runner.scoring.cell_metrics import final_rows

_EDIT_TYPES = ("DELETE_LINK", "CHANGE_LINK")


def _responses(rows: list[dict[str, Any]], info: Any) -> list[Any]:
    from biorab.drugmech.scoring.responses import Response

    keys = info.response_keys()
    out = []
    for row in rows:
        finish = "error" if row_error(row) is not None else row["gen_finish_reason"]
        index = int(row["order"])
        out.append(Response(query_file=info.query_file, index=index, response=row["gen_text"] or "",
                            world=info.world or "open", mode=info.mode or "NAMED_DISEASE", run=info.run,
                            finish_reason=finish, line=index + 1, explicit=frozenset(keys)))
    return out


def _moas_factory(spec: DrugMechSpec) -> Callable[[], Any]:
    """DrugMechDB, loaded on the first call and kept: one load for every cell of a run (building its MoAs
    takes about a second, and each cell with a YES answer to a positive needs them)."""

    @functools.cache
    def load() -> Any:
        from biorab.drugmech.graph.drugmechdb import load_drugmechdb

        return load_drugmechdb(spec.drugmechdb_dir)

    return load


def _value(x: float | None) -> dict[str, float | None]:
    return {"value": x, "ci_low": None, "ci_high": None}


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _cell_metrics(scored: list[Any], exclude_incomplete: bool = False) -> dict[str, dict[str, float | None]]:
    if exclude_incomplete:  # the paper's rule: neither numerator nor denominator (`DrugMechSpec`)
        scored = [r for r in scored if not r.score.incomplete]
    metrics = {"accuracy_strict": _value(_share([r.score.correct_strict for r in scored]))}
    if scored and scored[0].query_type in _EDIT_TYPES:
        metrics["accuracy_relaxed"] = _value(_share([bool(r.score.correct_relaxed) for r in scored]))
    complete = [r.score.correct_strict for r in scored if not r.score.incomplete]
    metrics["accuracy_strict_complete_only"] = _value(_share(complete))
    return metrics


def score_drugmech_cell(
    s: CellSlice, spec: DrugMechSpec, cells_dir: Path, out_dir: Path,
    moas: Callable[[], Any] | None = None,
) -> tuple[CellResult, list[Any]]:
    """One cell's result (one run: no CI; the CIs over runs are in the run-level report) and scored rows;
    `moas` loads DrugMechDB (default: a loader of the cell's own)."""
    import pyarrow.parquet as pq

    from biorab.drugmech.scoring.responses import score_responses

    plan, info = s.plan, drugmech_info(s.plan)
    rows = final_rows(plan, s.examples, cells_dir)
    scored = score_responses(_responses(rows, info), path=cells_dir / plan.cell_id, parser=spec.parser,
                             release_dir=spec.release_dir, moas_factory=moas or _moas_factory(spec),
                             matcher=spec.matcher)
    for row, sr in zip(rows, scored, strict=True):
        verdict = sr.score.option if sr.score.option is not None else sr.score.yes_no
        row.update(pred_ok=bool(sr.score.correct_strict), pred_label=verdict,
                   pred_scores=json.dumps(sr.to_json(), ensure_ascii=False))
    path = out_dir / "predictions" / f"{plan.cell_id}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(to_table(rows), path)
    # The cell's query file, world or mode and run are its plan's columns (`DrugMechCellInfo.columns`).
    extra = {"n_incomplete": sum(r.score.incomplete for r in scored)}
    n_unparsed = sum(1 for r in scored if not r.score.parsed and not r.score.incomplete)
    failures = sum(row_error(r) is not None for r in rows)
    metrics = _cell_metrics(scored, spec.exclude_incomplete)
    result = CellResult(plan, len(rows), metrics, n_unparsed, failures, path, extra)
    return result, scored


def score_drugmech(
    slices: Sequence[CellSlice], spec: DrugMechSpec | None, cells_dir: Path, out_dir: Path, *, model: str = ""
) -> tuple[list[CellResult], dict[str, Any] | None]:
    """Every DrugMech cell's result, and the run-level accuracy report (``None`` without DrugMech cells);
    `model` names the run's model in the chain-depth samples (a sweep pools them by model)."""
    if spec is None or not slices:
        return [], None
    from biorab.drugmech.scoring.accuracy_tables import accuracy_report

    results, scored = [], []
    moas = _moas_factory(spec)  # one DrugMechDB for the run's cells and its chain-depth analysis
    for s in slices:
        result, rows = score_drugmech_cell(s, spec, cells_dir, out_dir, moas)
        results.append(result)
        scored.extend(rows)
    report = accuracy_report(scored, n_resamples=spec.n_resamples, seed=spec.bootstrap_seed,
                             exclude_incomplete=spec.exclude_incomplete)
    section = {"parser": spec.parser, "matcher": spec.matcher, **report}
    chain = _chain_depth(scored, spec, model, moas)
    if chain is not None:
        section["chain_depth"] = chain
    return results, section


def _chain_depth(scored: list[Any], spec: DrugMechSpec, model: str, moas_of: Callable[[], Any]
                 ) -> dict[str, Any] | None:
    """The reasoning-chain-length analysis when the run answered deep Delete/Invert positives in the open
    world (`biorab.drugmech.scoring.chain_depth`); None otherwise (DrugMechDB is then not loaded)."""
    from biorab.drugmech.scoring.chain_depth import chain_depth_report, chain_samples

    if not any(r.link == "ppi" and not r.is_negative and r.query_type in _EDIT_TYPES
               and r.response.world == "open" for r in scored):
        return None
    moas = moas_of()
    samples, left_out = chain_samples(scored, lambda moa_id: moas[moa_id], model=model)
    return chain_depth_report(samples, left_out, design=spec.chain_depth)


def _fmt(stats: dict[str, Any] | None) -> str:
    if stats is None:
        return "-"
    if stats["ci_low"] is None:
        return f"{stats['mean']:.3f}"
    return f"{stats['mean']:.3f} ± {stats['std']:.3f} [{stats['ci_low']:.3f}, {stats['ci_high']:.3f}]"


def render_drugmech_section(report: dict[str, Any]) -> str:
    """Markdown: per query file × world/mode over runs, then the groups (stratified BCa, 90% CI)."""
    lines = ["", "## DrugMech", "",
             f"Parser `{report['parser']}`, matcher `{report['matcher']}`. Accuracy over runs: mean ± SD "
             "[90% t-interval]; unparsed answers count as wrong; incomplete answers (finish reason not "
             "`stop`) " + ("are left out (the paper's rule)." if report.get("exclude_incomplete") else
                           "count as wrong."), "",
             "| query file | world/mode | runs | n | strict | relaxed | unparsed | incomplete |",
             "|---|---|---|---|---|---|---|---|"]
    for c in report["cells"]:
        lines.append(f"| {c['query_file']} | {c['world'] or c['mode']} | {c['runs']} | {c['n']} | "
                     f"{_fmt(c['accuracy_strict'])} | {_fmt(c['accuracy_relaxed'])} | {c['n_unparsed']} | "
                     f"{c['n_incomplete']} |")
    if report["groups"]:
        lines += ["", "| group (strict, first run) | files | mean [90% BCa CI] | n |", "|---|---|---|---|"]
        for g in report["groups"]:
            lines.append(f"| {g['group']} | {g['files']} | {g['mean']:.3f} [{g['ci_low']:.3f}, "
                         f"{g['ci_high']:.3f}] | {g['n']} |")
    text = "\n".join(lines) + "\n"
    if report.get("chain_depth"):
        from biorab.drugmech.scoring.chain_depth import render_chain_depth

        text += render_chain_depth(report["chain_depth"])
    return text


def drugmech_console_summary(report: dict[str, Any]) -> str:
    """DrugMech accuracy per query file × world/mode over runs (the groups' BCa CIs are in report.md)."""
    lines = [f"DrugMech (parser {report['parser']}, matcher {report['matcher']}): strict accuracy over "
             "runs, mean ± SD [90% CI]; groups with BCa CIs in report.md and summary.json"]
    for c in report["cells"]:
        acc = c["accuracy_strict"]
        lo, hi = acc["ci_low"], acc["ci_high"]
        ci = "" if lo is None else f" ± {acc['std']:.3f} [{lo:.3f}, {hi:.3f}]"
        lines.append(f"  {c['query_file']:<22} {c['world'] or c['mode']:<36} runs={c['runs']} n={c['n']} "
                     f"strict={acc['mean']:.3f}{ci} unparsed={c['n_unparsed']} "
                     f"incomplete={c['n_incomplete']}")
    return "\n".join(lines)
