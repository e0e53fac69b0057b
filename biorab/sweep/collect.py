"""Read a sweep's finished cells back from disk (``summary.json`` of each run) with their sweep axes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from biorab.experiment import DatasetSpec, RetrievalSpec
from biorab.generation.base import SamplingParams
from biorab.sweep.config import SweepConfig
from biorab.sweep.expand import expand_cells, expand_runs


@dataclass(frozen=True)
class CellRecord:
    """One finished cell: its axes, its headline metric, all metrics and its predictions file."""

    model: str
    dataset: str
    task: str
    retriever: str  # the sweep's retriever profile name (``none`` for no retrieval)
    testbed: str
    rate: float | None
    method: str
    seed: int
    metric: str
    metrics: dict[str, dict[str, float | None]]
    predictions: Path
    n: int
    ratio: str | None = None  # the positive:negative ratio of a resampled test split (Table 6), else None
    excluded: bool = False  # retrieval with `exclude_test_duplicates: true`
    setting: str = ""  # the whole spec with the switch off: pairs an excluded cell with the paper's
    leak: float | None = None  # share of queries whose hits include their own text (retrieving cells)
    #: The whole cell spec, field by field (``dataset.limit``, ``retrieval.filter``, ``sampling.max_tokens``,
    #: ...: `spec_items`), so that the report keys its rows by all of it, never by a few axes.
    spec: tuple[tuple[str, str], ...] = ()
    order: str = "retrieved"  # the evidence order of the hits (`biorab.ral.specs.evidence_order`)
    framing: str = "none"  # the query framing of the dataset slice (`biorab.datasets.framing`)
    #: The reliability bins of a cell with label scores (``summary.json``'s ``abstention.reliability``,
    #: `biorab.metrics.selective.reliability`): the sweep report's reliability plot.
    reliability: tuple[dict[str, float], ...] = field(default=(), compare=False, hash=False)
    #: Instances with a misleading hit and reasoning text: the denominator of the reasoning rates (None: none)
    reasoning_n: int | None = None
    #: The run's reasoning setting (``effort=high``, ``budget=256``; '' none): pairs reasoning twins
    reasoning: str = ""

    @property
    def corpus(self) -> str:
        """``labeled``, ``counterfactual (20%)``, ``none``...: the row label of the paper's Table 2."""
        if self.rate is None:
            return self.testbed
        return f"{self.testbed} ({self.rate * 100:g}%)"

    def value(self, name: str | None = None) -> dict[str, float | None] | None:
        return self.metrics.get(name or self.metric)


def collect(sweep: SweepConfig, *, path: str | Path | None = None) -> tuple[list[CellRecord], list[str]]:
    """Every finished cell of the sweep, and the runs that have no results yet."""
    from biorab.tasks import PRIMARY_METRIC

    # keyed by the whole cell spec: two sweep cells that differ only in a dataset limit or their sampling
    # (two blocks) are two cells here too
    axes = {(c.model, c.seed, c.dataset, c.retrieval.model_dump_json(), c.sampling.model_dump_json(),
             c.reasoning): c for c in expand_cells(sweep, path=path)}
    records, missing = [], []
    for run in expand_runs(sweep, path=path):
        summary = run.config.run_dir() / "summary.json"
        if not summary.is_file():
            missing.append(run.config.name)
            continue
        by_id = {c.cell_id: c for c in run.config.cells()}
        for cell in json.loads(summary.read_text(encoding="utf-8"))["cells"]:
            spec = by_id.get(cell["cell_id"])
            if spec is None or cell.get("task") not in PRIMARY_METRIC:
                continue  # a cell of an older config, or a DrugMech cell (reported in the run's report.md)
            sweep_cell = axes.get((run.model, run.config.seed, spec.dataset, spec.retrieval.model_dump_json(),
                                   run.config.sampling.model_dump_json(), run.reasoning))
            items = spec_items(run.config.seed, spec.dataset, spec.retrieval, run.config.sampling)
            # a reasoning variant is a model of its own in the report (``o4-mini [effort=high]``)
            record = _record(run.label, run.config.seed, cell, spec, sweep_cell, PRIMARY_METRIC, items)
            records.append(replace(record, reasoning=run.reasoning.label))
    return records, missing


def finished_cells(sweep: SweepConfig, *, path: str | Path | None = None) -> int:
    """How many cells the sweep's finished runs (those with a ``summary.json``) ran, of every experiment
    source (`biorab.runner.plan.experiment_source.run_cells`): the report's title counts DrugMech cells too,
    which `collect` leaves to each run's report."""
    from biorab.runner.plan.experiment_source import run_cells

    return sum(len(run_cells(run.config)) for run in expand_runs(sweep, path=path)
               if (run.config.run_dir() / "summary.json").is_file())


def spec_items(seed: int, dataset: DatasetSpec, retrieval: RetrievalSpec,
               sampling: SamplingParams) -> tuple[tuple[str, str], ...]:
    """A cell's spec as (``group.field``, JSON value) pairs: the seed, every field of its dataset slice,
    retrieval setting and sampling."""
    out = [("seed", json.dumps(seed))]
    for group, part in (("dataset", dataset), ("retrieval", retrieval), ("sampling", sampling)):
        fields = part.model_dump(mode="json")
        out += [(f"{group}.{k}", json.dumps(v, sort_keys=True)) for k, v in fields.items()]
    return tuple(out)


def _record(model: str, seed: int, cell: dict[str, Any], spec: Any, sweep_cell: Any,
            primary: Mapping[str, str], items: tuple[tuple[str, str], ...]) -> CellRecord:
    r = spec.retrieval
    fallback = r.retriever if r.retrieves else "none"
    return CellRecord(model=model, dataset=cell["dataset"], task=cell["task"],
                      retriever=sweep_cell.retriever if sweep_cell else fallback,
                      testbed=r.testbed, rate=r.rate, method=sweep_cell.method if sweep_cell else "none",
                      seed=seed, metric=primary[cell["task"]], metrics=cell["metrics"],
                      predictions=Path(cell["predictions"]), n=int(cell["n"]),
                      ratio=spec.dataset.resample.ratio if spec.dataset.resample is not None else None,
                      excluded=r.exclude_test_duplicates,
                      setting=json.dumps([v for k, v in items if k != "retrieval.exclude_test_duplicates"]),
                      leak=(cell.get("leak_share") or {}).get("value"), spec=items, order=r.order,
                      framing=spec.dataset.framing,
                      reliability=tuple((cell.get("abstention") or {}).get("reliability") or ()),
                      reasoning_n=((cell.get("attribution") or {}).get("reasoning") or {}).get(
                          "misleading_with_reasoning"))


def usage_by_model(sweep: SweepConfig, *, path: str | Path | None = None) -> dict[str, dict[str, float]]:
    """Each model's token use and cost over its finished runs (``summary.json``'s ``usage``, written by
    `biorab.runner.scoring.usage`): ``{model: {"prompt_tokens", "completion_tokens", "reasoning_tokens",
    "cost_usd" (only with a price)}}``."""
    out: dict[str, dict[str, float]] = {}
    for run in expand_runs(sweep, path=path):
        summary = run.config.run_dir() / "summary.json"
        if not summary.is_file():
            continue
        usage = json.loads(summary.read_text(encoding="utf-8")).get("usage") or {}
        totals = out.setdefault(run.label, {})
        for key in ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_usd"):
            if key in usage:
                totals[key] = totals.get(key, 0) + usage[key]
    return out


def chain_depth_sections(sweep: SweepConfig, *, path: str | Path | None = None) -> list[dict[str, Any]]:
    """The DrugMech chain-depth section of every finished run of the sweep (``summary.json``'s
    ``drugmech.chain_depth``, `biorab.drugmech.scoring.chain_depth`), for the pooled fit over its models."""
    out = []
    for run in expand_runs(sweep, path=path):
        summary = run.config.run_dir() / "summary.json"
        if summary.is_file():
            drugmech = json.loads(summary.read_text(encoding="utf-8")).get("drugmech") or {}
            section = drugmech.get("chain_depth")
            if section:
                out.append(section)
    return out
