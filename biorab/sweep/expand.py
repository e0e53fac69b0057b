"""Expand a `SweepConfig` into cells, then into the `ExperimentConfig`s that `biorab run` runs.

A run has one backend and one seed, and its cells are the product (datasets × retrieval settings), so the
cells of one (model, seed) are grouped into rectangles: datasets that share the same set of retrieval
settings form one `ExperimentConfig`. Retrieval settings are ordered by prompt prefix (template, retriever,
testbed, rate), so that rows whose prompts share an instruction run next to each other (vLLM's prefix
cache); the runner keeps config order (dataset-major).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.common.config_loading import validate_mapping
from biorab.common.errors import ConfigError
from biorab.experiment import DatasetSpec, ExperimentConfig
from biorab.generation.base import SamplingParams, stable_digest
from biorab.ral.specs.evidence_order import MISLEADING_ORDERS
from biorab.ral.specs.retrieval_spec import RATED_TESTBEDS, RetrievalSpec
from biorab.sweep.config import MatrixBlock, RetrieverProfile, SweepConfig
from biorab.sweep.reasoning_axes import ReasoningSetting, with_reasoning


@dataclass(frozen=True)
class SweepCell:
    """One cell of the sweep: a model profile, a seed, a dataset slice and a retrieval setting."""

    model: str
    seed: int
    dataset: DatasetSpec
    retriever: str
    method: str
    retrieval: RetrievalSpec
    sampling: SamplingParams = SamplingParams()
    reasoning: ReasoningSetting = ReasoningSetting()

    def axes(self) -> dict[str, Any]:
        """The cell's value on every axis (what ``exclude`` entries and the report match on)."""
        r = self.retrieval
        return {"model": self.model, "dataset": self.dataset.name, "retriever": self.retriever,
                "testbed": r.testbed, "rate": r.rate, "method": self.method, "seed": self.seed,
                "order": r.order, "reasoning_effort": self.reasoning.effort,
                "thinking_budget": self.reasoning.budget}


@dataclass(frozen=True)
class SweepRun:
    """One `ExperimentConfig` of the sweep, the model profile it runs and its reasoning setting (the
    profile's params changed on the reasoning axes)."""

    model: str
    config: ExperimentConfig
    reasoning: ReasoningSetting = ReasoningSetting()

    @property
    def label(self) -> str:
        """The model as the plan and the report name it: ``o4-mini [effort=high]``."""
        return f"{self.model} [{self.reasoning.label}]" if self.reasoning.label else self.model


def expand_cells(sweep: SweepConfig, *, path: str | Path | None = None) -> list[SweepCell]:
    """Every cell of every matrix block, in block order, without excluded or duplicate cells."""
    seen: set[tuple[Any, ...]] = set()
    cells: list[SweepCell] = []
    for b, block in enumerate(sweep.matrix):
        for cell in _block_cells(sweep, b, block, path):
            key = (cell.model, cell.seed, cell.dataset, cell.retrieval.model_dump_json(),
                   cell.sampling.model_dump_json(), cell.reasoning)
            if key in seen:
                continue
            seen.add(key)
            cells.append(cell)
    return cells


def _block_cells(sweep: SweepConfig, b: int, block: MatrixBlock, path: str | Path | None) -> list[SweepCell]:
    """The block's cells without its excluded ones. Excludes are matched before a setting is validated,
    so a combination that could not run (``llm_label`` on the labeled testbed) can simply be excluded."""
    retrievers = sweep.all_retrievers()
    excludes = (*sweep.exclude, *block.exclude)
    sampling = sweep.block_sampling(block)
    out = []
    reasonings = [ReasoningSetting(e, t) for e in block.reasoning_efforts for t in block.thinking_budgets]
    for model in block.models:
        for seed in block.seeds:
            for ds in block.datasets:
                for rname in block.retrievers:
                    for method in block.methods:
                        for data in _settings(retrievers[rname], block, method):
                            for why in reasonings:
                                axes = {"model": model, "dataset": ds.name, "retriever": rname,
                                        "testbed": data["testbed"], "rate": data.get("rate"),
                                        "method": method, "seed": seed,
                                        "order": data.get("order", "retrieved"),
                                        "reasoning_effort": why.effort, "thinking_budget": why.budget}
                                if any(_matches(axes, e) for e in excludes):
                                    continue
                                spec = validate_mapping(RetrievalSpec, data, path=path,
                                                        key_prefix=f"matrix.{b}")
                                out.append(SweepCell(model, seed, ds, rname, method, spec, sampling, why))
    return out


def _settings(profile: RetrieverProfile, block: MatrixBlock, method: str) -> list[dict[str, Any]]:
    """The retrieval entries of one retriever profile on the block's testbeds and rates."""
    extra = {} if method == "none" else {"method": method}  # validated by RetrievalSpec (the methods branch)
    if not profile.retrieves:
        return [{"testbed": "none", "template": profile.template or "noexample", **extra}]
    base = profile.model_dump(exclude={"template"})
    out = []
    for testbed in block.testbeds:
        rates: tuple[float | None, ...] = block.rates if testbed in RATED_TESTBEDS else (None,)
        template = "negative_awareness" if testbed == "negative_awareness" else profile.template or "default"
        orders = [o for o in block.orders if o not in MISLEADING_ORDERS
                  or testbed in (*RATED_TESTBEDS, "negative_awareness")]
        for rate in rates:
            for order in orders:
                shown = {} if order == "retrieved" else {"order": order}
                out.append({**base, "testbed": testbed, "rate": rate, "template": template, **extra, **shown})
    return out


def _matches(axes: dict[str, Any], entry: dict[str, Any]) -> bool:
    """Whether a cell's axes match an ``exclude`` entry (a list value matches any of its items)."""
    for key, want in entry.items():
        options = want if isinstance(want, list | tuple) else [want]
        if axes[key] not in options:
            return False
    return True


def prefix_key(spec: RetrievalSpec) -> tuple[str, str, str, float]:
    """Order of retrieval settings in a run: prompts that share a template (the instruction, the prompt's
    prefix) run together, then those that share a retriever and a corpus."""
    return (spec.template, spec.retriever if spec.retrieves else "", spec.testbed, spec.rate or 0.0)


def expand_runs(sweep: SweepConfig, *, path: str | Path | None = None) -> list[SweepRun]:
    """The `ExperimentConfig`s of the sweep: one per (model, seed, set of retrieval settings), model by
    model in matrix order. Each is validated like a run config; errors name the sweep file and key."""
    cells = expand_cells(sweep, path=path)
    Slot = tuple[DatasetSpec, SamplingParams]
    # a reasoning setting changes the backend's params: a run of its own
    groups: dict[tuple[str, int, ReasoningSetting], dict[Slot, list[RetrievalSpec]]] = {}
    for cell in cells:
        slot = (cell.dataset, cell.sampling)
        group = groups.setdefault((cell.model, cell.seed, cell.reasoning), {})
        group.setdefault(slot, []).append(cell.retrieval)
    for name in _drugmech_models(sweep):
        for seed in _seeds_of(sweep, name):
            groups.setdefault((name, seed, ReasoningSetting()), {})
    multi_seed = len({seed for _, seed, _ in groups}) > 1
    runs: list[SweepRun] = []
    Rect = tuple[tuple[RetrievalSpec, ...], SamplingParams, list[DatasetSpec]]
    for (model, seed, why), by_slot in groups.items():
        rects: dict[str, Rect] = {}
        for (ds, sampling), specs in by_slot.items():
            ordered = tuple(sorted(specs, key=prefix_key))
            parts: list[Any] = [s.entry_json() for s in ordered]
            if sampling != sweep.sampling:  # a block's own sampling is a run of its own (one per run)
                parts.append(sampling.model_dump(mode="json"))
            key = stable_digest(parts)[:6]
            rects.setdefault(key, (ordered, sampling, []))[2].append(ds)
        base = _run_name(model, seed if multi_seed else None) + why.run_suffix
        entries: list[tuple[str, Rect]] = list(rects.items()) or [("", ((), sweep.sampling, []))]
        for i, (key, (ordered_specs, sampling, datasets)) in enumerate(entries):
            name = base if len(rects) <= 1 else f"{base}__{key}"
            drugmech = (sweep.drugmech if i == 0 and model in _drugmech_models(sweep) and not why.label
                        else None)
            config = _experiment(sweep, model, seed, name, datasets, ordered_specs, sampling, drugmech, path,
                                 why)
            runs.append(SweepRun(model, config, why))
    return runs


def _drugmech_models(sweep: SweepConfig) -> list[str]:
    if sweep.drugmech is None:
        return []
    return list(dict.fromkeys(m for block in sweep.matrix for m in block.models))


def _seeds_of(sweep: SweepConfig, model: str) -> list[int]:
    return list(dict.fromkeys(s for block in sweep.matrix if model in block.models for s in block.seeds))


def _run_name(model: str, seed: int | None) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", model)
    return name if seed is None else f"{name}__s{seed}"


def _experiment(
    sweep: SweepConfig,
    model: str,
    seed: int,
    name: str,
    datasets: list[DatasetSpec],
    specs: tuple[RetrievalSpec, ...],
    sampling: SamplingParams,
    drugmech: dict[str, Any] | None,
    path: str | Path | None,
    reasoning: ReasoningSetting | None = None,
) -> ExperimentConfig:
    profile = sweep.all_models()[model]
    try:
        params = with_reasoning(profile.backend, profile.backend_params(), reasoning or ReasoningSetting(),
                                profile=model)
    except ValueError as e:
        raise ConfigError(f"{e} (run {name!r})", path=path) from e
    data: dict[str, Any] = {
        "name": name,
        "output_dir": str(Path(sweep.output_dir) / sweep.name),
        "data_dir": sweep.data_dir,
        "seed": seed,
        "datasets": [d.model_dump() for d in datasets],
        "retrieval": [s.entry_json() for s in specs] or [{"testbed": "none"}],
        "backend": {"name": profile.backend, "params": params},
        "sampling": sampling.model_dump(),
        "parser": sweep.parser,
        "n_boot": sweep.n_boot,
        "resources": _merge(sweep.resources, profile.resources),
        "tracking": sweep.tracking.model_dump(),
    }
    if drugmech is not None:
        data["drugmech"] = {**drugmech, **profile.drugmech}
    try:
        return validate_mapping(ExperimentConfig, data, path=path, key_prefix=f"models.{model}")
    except ConfigError as e:
        raise ConfigError(f"{e} (run {name!r} of model profile {model!r})", path=None) from e


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` on top of `base`, one level of nested mappings deep (``llm: {pool_size: 2}`` keeps the rest)."""
    out = dict(base)
    for key, value in over.items():
        nested = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = {**out[key], **value} if nested else value
    return out
