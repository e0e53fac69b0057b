"""`write_report`: a sweep's results as the paper's tables (``report/report.md`` and a static
``report/report.html``) and plots, beside the outputs, and logged on the sweep's MLflow parent run."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from biorab.metrics.definitions import ACCURACY_IDENTITY
from biorab.sweep.attribution_report import attribution_grids
from biorab.sweep.claims_report import claim_grids
from biorab.sweep.collect import CellRecord, collect, finished_cells, usage_by_model
from biorab.sweep.config import SweepConfig
from biorab.sweep.reasoning_twins import reasoning_twin_grids
from biorab.sweep.robustness_report import ROBUSTNESS_PLOTS, SECTION, robustness_grids, robustness_plots
from biorab.sweep.significance import Significance, versus_baselines
from biorab.sweep.tables import build_tables, to_html, to_markdown
from biorab.tasks import single_label

LEGEND = ("Headline metric ×100 with its 95% bootstrap CI; **bold**: best in column; `*`: differs from the "
          "same LLM without retrieval (paired bootstrap on the same instances, Holm-corrected over this "
          "report, p < 0.05).")
CSS = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}"
       "td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px}td.best{font-weight:bold;"
       "text-decoration:underline}img{max-width:48%;margin:4px}")


def write_report(sweep: SweepConfig, *, path: str | Path | None = None, track: bool = True) -> list[Path]:
    """Write the report files (markdown, HTML, plots); returns their paths. A sweep that asks the
    robustness questions (`biorab.sweep.robustness_report`) opens with their section."""
    cells, missing = collect(sweep, path=path)
    counted = finished_cells(sweep, path=path)  # DrugMech cells too: `cells` holds the BioRAB ones
    out = sweep.sweep_dir() / "report"
    out.mkdir(parents=True, exist_ok=True)
    apart: list[str] = []  # cells that share no instance with their baseline: named, not tested
    sig = versus_baselines(cells, n_boot=sweep.n_boot, seed=0, not_comparable=apart) if cells else {}
    plots = _plots(cells, out)
    md = out / "report.md"
    usage = usage_markdown(usage_by_model(sweep, path=path))
    chain = chain_depth_markdown(sweep, path=path)
    md.write_text(_markdown(sweep, counted, cells, sig, missing, plots, apart) + usage + chain,
                  encoding="utf-8")
    page = out / "report.html"
    page.write_text(_html(sweep, counted, cells, sig, missing, plots, apart), encoding="utf-8")
    files = [md, page, *plots]
    if track and sweep.tracking.enabled:
        _log_on_parent(sweep, files)
    return files


def chain_depth_markdown(sweep: SweepConfig, *, path: str | Path | None = None) -> str:
    """The DrugMech chain-depth fit pooled over the sweep's models (the paper's design: each model's first
    run, the model a covariate; or every run clustered by query, as the sweep's ``drugmech.chain_depth``
    says); empty without DrugMech answers to fit."""
    from biorab.drugmech.scoring.chain_depth import pool_reports, render_chain_depth
    from biorab.sweep.collect import chain_depth_sections

    design = (sweep.drugmech or {}).get("chain_depth", "paper")
    pooled = pool_reports(chain_depth_sections(sweep, path=path), design=design)
    if pooled is None:
        return ""
    return "\n## DrugMech, pooled over the sweep's models\n" + render_chain_depth(pooled)


def usage_markdown(usage: dict[str, dict[str, float]]) -> str:
    """Token use per model and the sweep's API cost (where the models' configs have prices)."""
    if not usage:
        return ""
    lines = ["", "## Token use and cost", "",
             "| model | prompt tokens | completion tokens | reasoning tokens | cost $ |",
             "|---|---|---|---|---|"]
    for model, u in usage.items():
        cost = f"{u['cost_usd']:,.2f}" if "cost_usd" in u else "-"
        tokens = " | ".join(f"{int(u.get(k, 0)):,}" for k in ("prompt_tokens", "completion_tokens",
                                                                  "reasoning_tokens"))
        lines.append(f"| {model} | {tokens} | {cost} |")
    costs = [u["cost_usd"] for u in usage.values() if "cost_usd" in u]
    if costs:
        lines += ["", f"Sweep API cost: ${sum(costs):,.2f} (the configs' prices; cells served from the "
                      "generation cache count at what they cost to make)."]
    return "\n".join(lines) + "\n"


def _plots(cells: list[CellRecord], out: Path) -> list[Path]:
    try:
        from biorab.sweep.plots import all_plots
    except ImportError:  # matplotlib missing: tables only (install the `report` extra)
        return []
    from biorab.sweep.attribution_report import dose_response

    if not cells:
        return []
    made = robustness_plots(cells, out) + all_plots(cells, out)
    # the dose-response reads the retrieved order: an ordered cell is the same rate's other question
    curve = dose_response([c for c in cells if c.ratio is None and c.order == "retrieved"], out)
    return made + ([curve] if curve is not None else [])


def legend(cells: list[CellRecord]) -> str:
    """The report's legend, with the accuracy identity once where a single-label task is shown."""
    if any(single_label(c.task) for c in cells):
        return f"{LEGEND} {ACCURACY_IDENTITY}"
    return LEGEND


NOT_COMPARABLE = "Not comparable with the same LLM without retrieval (no paired test)"


def _markdown(sweep: SweepConfig, counted: int, cells: list[CellRecord], sig: dict[int, Significance],
              missing: list[str], plots: list[Path], apart: Sequence[str] = ()) -> str:
    """`counted`: the finished runs' cells of every source (the title); `cells`: the BioRAB ones (tables)."""
    parts = [f"# Sweep {sweep.name}: {counted} cells\n", legend(cells) + "\n"]
    parts.append(f"Every instance, every cell side by side: [explorer](../explorer/index.html) (written by "
                 f"`biorab explore {sweep.sweep_dir()}`)\n")
    if missing:
        parts.append(f"Runs without results yet: {', '.join(missing)}\n")
    robust = robustness_grids(cells) + reasoning_twin_grids(cells, n_boot=sweep.n_boot)
    if robust:
        parts.append(f"## {SECTION}\n")
        parts += [to_markdown(g) for g in robust]
        parts += [f"![{p.stem}]({p.name})" for p in plots if p.stem in ROBUSTNESS_PLOTS]
    grids = build_tables(cells, sig) + attribution_grids(cells) + claim_grids(cells)
    parts += [to_markdown(g) for g in grids]
    if apart:
        parts.append(f"## {NOT_COMPARABLE}\n\n" + "\n".join(f"- {line}" for line in apart) + "\n")
    parts += [f"![{p.stem}]({p.name})" for p in plots if p.stem not in ROBUSTNESS_PLOTS]
    return "\n".join(parts) + "\n"


def _html(sweep: SweepConfig, counted: int, cells: list[CellRecord], sig: dict[int, Significance],
          missing: list[str], plots: list[Path], apart: Sequence[str] = ()) -> str:
    body = [f"<h1>Sweep {html.escape(sweep.name)}: {counted} cells</h1>",
            f"<p>{html.escape(legend(cells).replace('**', '').replace('`', ''))}</p>"]
    body.append(f"<p>Every instance, every cell side by side: <a href='../explorer/index.html'>explorer</a> "
                f"(written by <code>biorab explore {html.escape(str(sweep.sweep_dir()))}</code>)</p>")
    if missing:
        body.append(f"<p>Runs without results yet: {html.escape(', '.join(missing))}</p>")
    robust = robustness_grids(cells) + reasoning_twin_grids(cells, n_boot=sweep.n_boot)
    if robust:
        body.append(f"<h2>{html.escape(SECTION)}</h2>")
        body += [to_html(g) for g in robust]
        body += [f"<img src='{html.escape(p.name)}' alt='{html.escape(p.stem)}'>" for p in plots
                 if p.stem in ROBUSTNESS_PLOTS]
    body += [to_html(g) for g in build_tables(cells, sig) + attribution_grids(cells) + claim_grids(cells)]
    if apart:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in apart)
        body.append(f"<h2>{html.escape(NOT_COMPARABLE)}</h2><ul>{items}</ul>")
    body += [f"<img src='{html.escape(p.name)}' alt='{html.escape(p.stem)}'>" for p in plots
             if p.stem not in ROBUSTNESS_PLOTS]
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(sweep.name)}</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def _log_on_parent(sweep: SweepConfig, files: list[Path]) -> None:
    """Log the report files on the sweep's parent run (found by its key; none yet: nothing to log to)."""
    from biorab.tracking.experiment import parent_key
    from biorab.tracking.preflight import check_server, resolve_uri
    from biorab.tracking.runs import KEY, find_runs

    uri = resolve_uri(sweep.tracking.uri, sweep.sweep_dir())
    check_server(uri)
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(sweep.tracking.experiment or sweep.name)
    if experiment is None:
        return
    key = parent_key("sweep", sweep.name, sweep.sweep_dir())
    runs = find_runs(client, str(experiment.experiment_id), KEY, key)
    for run in runs[:1]:
        for f in files:
            client.log_artifact(run.info.run_id, str(f), "report")
