"""`plan_sweep`: what a sweep will cost before it runs: cells, unique retrieval and generation keys after
dedupe across cells and against the caches, prompt and decode tokens, and GPU-hours; every config error.

Keys are the runner's own (`biorab.caches.hits_key`, `biorab.caches.generation_key` over prompts rendered
by `biorab.ral.render_prompt`), so a finished slice plans 0 new generations. Where a prompt cannot be known
without running (hits not cached, a dense retriever, a model not prepared), it is counted as new and its
tokens are estimated; the plan says how many (`estimated_prompts`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from biorab.caches import GenerationStore, HitStore, default_store_paths
from biorab.errors import BioRABError
from biorab.experiment import Cell
from biorab.generation.base import SamplingParams
from biorab.generation.model_info import ModelInfo, model_info
from biorab.records import Prompt
from biorab.sweep.config import SweepConfig
from biorab.sweep.expand import SweepRun, expand_runs
from biorab.sweep.keys import generation_keys
from biorab.sweep.models import CHARS_PER_TOKEN, TokenCounter
from biorab.sweep.prompts import CellPrompts, PromptPlanner
from biorab.sweep.throughput import Measured, gpu_hours, read_measured


@dataclass
class ModelPlan:
    """One model's share of the sweep."""

    model: str
    backend: str
    runs: list[str]
    cells: int = 0
    unique_generation_keys: int = 0
    new_generations: int = 0
    estimated_prompts: int = 0
    prompt_tokens: int = 0
    new_prompt_tokens: int = 0
    new_decode_tokens: int = 0
    gpu_hours: float = 0.0
    digest_exact: bool = True
    tokens_exact: bool = False
    throughput: str = "table"
    cost_usd: float | None = None


@dataclass
class SweepPlan:
    """The whole sweep's plan (`to_json` is ``biorab plan --json``)."""

    sweep: str
    cells: int = 0
    runs: int = 0
    unique_retrieval_keys: int = 0
    new_retrieval_keys: int = 0
    unique_generation_keys: int = 0
    new_generations: int = 0
    estimated_prompts: int = 0
    prompt_tokens: int = 0
    new_prompt_tokens: int = 0
    new_decode_tokens: int = 0
    gpu_hours: float = 0.0
    cost_usd: float | None = None
    gpu: str = ""
    models: list[ModelPlan] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def plan_sweep(sweep: SweepConfig, *, path: str | Path | None = None, check_data: bool = True) -> SweepPlan:
    """Plan every cell of `sweep` against the caches under `biorab.paths.cache_dir`."""
    from biorab.paths import cache_dir

    start = time.perf_counter()
    plan = SweepPlan(sweep.name, gpu=sweep.throughput.gpu)
    runs = _checked_runs(sweep, path, check_data, plan.errors)
    hits_path, gens_path = default_store_paths(cache_dir())
    hit_store = HitStore(hits_path) if hits_path.is_file() else None
    gen_store = GenerationStore(gens_path) if gens_path.is_file() else None
    planner = PromptPlanner(hit_store, cache_dir() / "sweep" / "corpus_digests.json")
    measured = read_measured(sweep.sweep_dir())
    hit_keys: set[str] = set()
    new_hits: set[str] = set()
    try:
        for model, model_runs in _by_model(runs):
            plan.models.append(_plan_model(sweep, model, model_runs, planner, gen_store, measured,
                                           hit_keys, new_hits, plan.errors))
    finally:
        planner.close()
    _totals(plan, runs, hit_keys, new_hits)
    plan.seconds = round(time.perf_counter() - start, 3)
    return plan


def _checked_runs(sweep: SweepConfig, path: str | Path | None, check_data: bool, errors: list[str]
                  ) -> list[SweepRun]:
    """The sweep's runs whose config passes `biorab validate`'s checks; the others become errors."""
    from biorab.runner.checks.validate import check_experiment

    try:
        runs = expand_runs(sweep, path=path)
    except BioRABError as e:
        errors.append(str(e))
        return []
    good = []
    for run in runs:
        try:
            check_experiment(run.config, path=path, check_data=check_data)
            good.append(run)
        except BioRABError as e:
            errors.append(f"model {run.model!r} (run {run.config.name!r}): {e}")
    return good


def _by_model(runs: list[SweepRun]) -> Iterator[tuple[str, list[SweepRun]]]:
    groups: dict[str, list[SweepRun]] = {}
    for run in runs:
        groups.setdefault(run.model, []).append(run)
    yield from groups.items()


def _plan_model(
    sweep: SweepConfig,
    model: str,
    runs: list[SweepRun],
    planner: PromptPlanner,
    gen_store: GenerationStore | None,
    measured: dict[str, Measured],
    hit_keys: set[str],
    new_hits: set[str],
    errors: list[str],
) -> ModelPlan:
    profile = sweep.all_models()[model]
    out = ModelPlan(model, profile.backend, [r.config.name for r in runs])
    info = model_info(runs[0].config.backend)
    counter = TokenCounter(info.tokenizer_location)
    out.digest_exact, out.tokens_exact = info.exact, counter.exact
    exact: dict[str, Prompt] = {}
    estimated: dict[str, int] = {}
    for run in runs:
        sampling = run.config.sampling
        for cell in run.config.cells():
            out.cells += 1
            try:
                prompts = planner.cell(cell)
            except BioRABError as e:
                errors.append(f"model {model!r}, cell {cell.label}: {e}")
                continue
            hit_keys |= prompts.hit_keys
            new_hits |= prompts.new_hit_keys
            _add_keys(info, cell, prompts, sampling, exact, estimated)
        out.cells += _drugmech_estimate(run, info, estimated, errors)
    found = gen_store.store.get_many(list(exact)) if gen_store is not None and info.exact else {}
    new_exact = [p for k, p in exact.items() if k not in found]
    new_tokens = sum(counter.count([p.text for p in new_exact])) if new_exact else 0
    out.unique_generation_keys = len(exact) + len(estimated)
    out.estimated_prompts = len(estimated)
    out.new_generations = len(new_exact) + len(estimated)
    est_tokens = sum(math.ceil(chars / CHARS_PER_TOKEN) for chars in estimated.values())
    out.new_prompt_tokens = new_tokens + est_tokens
    out.prompt_tokens = out.new_prompt_tokens + _tokens_of_cached(counter, exact, found)
    rec = measured.get(info.digest)
    per_gen = rec.mean_completion_tokens if rec else float(runs[0].config.sampling.max_tokens)
    out.new_decode_tokens = int(out.new_generations * per_gen)
    out.throughput = "measured" if rec else f"table ({sweep.throughput.gpu})"
    out.gpu_hours = round(gpu_hours(profile, sweep.throughput, prompt_tokens=out.new_prompt_tokens,
                                    decode_tokens=out.new_decode_tokens, generations=out.new_generations,
                                    measured=rec), 4)
    out.cost_usd = _cost(runs[0].config, out.new_prompt_tokens, out.new_decode_tokens)
    return out


def _cost(config: Any, prompt_tokens: int, decode_tokens: int) -> float | None:
    """US dollars of the new tokens at the openai backend's ``price`` (None without one). Decode tokens
    are bounded by ``max_tokens`` (or the measured mean), reasoning tokens included."""
    price = config.backend.params.get("price") if config.backend.name == "openai" else None
    if not price:
        return None
    from biorab.generation.openai_params import Price

    return round(Price.model_validate(price).cost(prompt_tokens, decode_tokens), 2)


def _add_keys(info: ModelInfo, cell: Cell, prompts: CellPrompts, sampling: SamplingParams,
              exact: dict[str, Prompt], estimated: dict[str, int]) -> None:
    """The cell's generation keys (task and awareness-probe prompts) into `exact` / `estimated`."""
    from biorab.ral import probe_prompt, probe_sampling

    if not info.exact:  # no real digest: the keys cannot match the cache, every prompt is new
        for p in prompts.exact:
            estimated[f"{info.digest}:{cell.cell_id}:{p.example_id}"] = len(p.text)
    else:
        for key, p in zip(generation_keys(info.digest, prompts.exact, sampling), prompts.exact, strict=True):
            exact.setdefault(key, p)
    # a stand-in key is per (model, sampling, setting, instance): a block with its own sampling (Table 6's
    # label scores) generates anew what another block generates for the same prompt
    model = f"{info.digest}:{sampling.digest()[:12]}"
    for key, chars in prompts.estimated.items():
        estimated[f"{model}:{key}"] = chars
    if not cell.retrieval.probes:
        return
    probes = [q for ex, hits in prompts.exact_hits if (q := probe_prompt(ex, list(hits))) is not None]
    if info.exact:
        keys = generation_keys(info.digest, probes, probe_sampling(sampling))
        for key, q in zip(keys, probes, strict=True):
            exact.setdefault(key, q)
    for key, chars in prompts.estimated.items():
        estimated[f"{info.digest}:probe:{key}"] = chars // 2


def _drugmech_estimate(run: SweepRun, info: ModelInfo, estimated: dict[str, int], errors: list[str]) -> int:
    """DrugMech cells are counted with estimated prompts (rendering them loads DrugMechDB); returns cells."""
    if run.config.drugmech is None:
        return 0
    from biorab.drugmech.experiment.cell_slices import drugmech_cells

    try:
        cells = drugmech_cells(run.config)
    except BioRABError as e:
        errors.append(f"model {run.model!r}, drugmech: {e}")
        return 0
    for loaded, plan in cells:
        n = len(loaded.qfile.queries) if hasattr(loaded.qfile, "queries") else 0
        limit = run.config.drugmech.limit or n
        for i in range(min(n, limit)):
            estimated[f"{info.digest}:{plan.cell_id}:{i}"] = 2400
    return len(cells)


def _tokens_of_cached(counter: TokenCounter, exact: dict[str, Prompt], found: dict[str, str]) -> int:
    cached = [exact[k].text for k in found]
    return sum(counter.count(cached)) if cached else 0


def _totals(plan: SweepPlan, runs: list[SweepRun], hit_keys: set[str], new_hits: set[str]) -> None:
    plan.runs = len(runs)
    plan.unique_retrieval_keys = len(hit_keys)
    plan.new_retrieval_keys = len(new_hits)
    for m in plan.models:
        plan.cells += m.cells
        plan.unique_generation_keys += m.unique_generation_keys
        plan.new_generations += m.new_generations
        plan.estimated_prompts += m.estimated_prompts
        plan.prompt_tokens += m.prompt_tokens
        plan.new_prompt_tokens += m.new_prompt_tokens
        plan.new_decode_tokens += m.new_decode_tokens
        plan.gpu_hours = round(plan.gpu_hours + m.gpu_hours, 4)
        if m.cost_usd is not None:
            plan.cost_usd = round((plan.cost_usd or 0.0) + m.cost_usd, 2)
