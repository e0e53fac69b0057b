"""`plan_sweep`: what a sweep will cost before it runs: cells, unique retrieval and generation keys after
dedupe across cells and against the caches, prompt and decode tokens, and GPU-hours; every config error.
`plan_experiment` plans one run config the same way (its one model, the default throughput table).
Both can list every cell with its rows and prompt tokens (`CellEstimate`), from the same prompts.

Keys are the runner's own (`biorab.caches.hits_key`, `biorab.caches.generation_key` over prompts rendered
by `biorab.ral.render_prompt`), so a finished slice plans 0 new generations. Where a prompt cannot be known
without running (hits not cached, a dense retriever, a model not prepared), it is counted as new and its
tokens are estimated; the plan says how many (`estimated_prompts`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from biorab.caches import GenerationStore, HitStore, default_store_paths
from biorab.common.errors import BioRABError
from biorab.common.records import Prompt
from biorab.experiment import Cell, ExperimentConfig
from biorab.generation.base import SamplingParams
from biorab.generation.capabilities import capabilities_of
from biorab.generation.model_info import ModelInfo, model_info
from biorab.sweep.config import ModelProfile, SweepConfig, ThroughputSpec
from biorab.sweep.expand import SweepRun, expand_runs
from biorab.sweep.keys import generation_keys
from biorab.sweep.models import CHARS_PER_TOKEN, TokenCounter
from biorab.sweep.prompts import CellPrompts, PromptPlanner
from biorab.sweep.reasoning_axes import reasoning_bound
from biorab.sweep.throughput import Measured, gpu_hours, read_measured

#: Characters a DrugMech prompt is estimated at (rendering it loads DrugMechDB).
DRUGMECH_PROMPT_CHARS = 2400


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
    #: What `new_decode_tokens` (and the cost) rest on (`DECODE_BASES`).
    decode_basis: str = "max_tokens"
    #: Where the reasoning's share of the decode tokens is unknown or bounded apart (`reasoning_bound`).
    reasoning_note: str | None = None


#: What a plan's decode tokens per answer are: ``measured_mean``, the mean completion length a finished
#: run of the model measured (an estimate); ``max_tokens``, the limit sent with every request (a bound);
#: ``max_output``, no limit is sent (``token_limit: omit``) and the model's maximum output
#: (``max_output_tokens``) bounds it; ``assumed_max_tokens``, no limit is sent and no maximum is known, so
#: ``max_tokens`` is assumed per answer (neither a bound nor a measurement).
DECODE_BASES: dict[str, str] = {
    "measured_mean": "~", "max_tokens": "≤", "max_output": "≤", "assumed_max_tokens": "?",
}  # fmt: skip


def decode_per_answer(config: Any, measured: Measured | None) -> tuple[float, str]:
    """Completion tokens per answer for the plan, and their basis (`DECODE_BASES`).

    >>> from types import SimpleNamespace as NS
    >>> omit = NS(backend=NS(name="openai", params={"token_limit": "omit", "max_output_tokens": 100000}),
    ...           sampling=NS(max_tokens=4096))
    >>> decode_per_answer(omit, None)
    (100000.0, 'max_output')
    >>> decode_per_answer(NS(backend=NS(name="fake", params={}), sampling=NS(max_tokens=64)), None)
    (64.0, 'max_tokens')
    """
    if measured is not None:
        return measured.mean_completion_tokens, "measured_mean"
    params = config.backend.params if capabilities_of(config.backend.name).server_client else {}
    if params.get("token_limit") == "omit":
        most = params.get("max_output_tokens")
        if most:
            return float(most), "max_output"
        return float(config.sampling.max_tokens), "assumed_max_tokens"
    bound, _ = reasoning_bound(config.backend.name, config.backend.params, config.sampling.max_tokens)
    return float(bound), "max_tokens"


@dataclass(frozen=True)
class CellEstimate:
    """One cell as the plan saw it: its id (as `biorab validate` lists it), its rows, and the tokens of all
    its prompts (before dedupe across cells and against the cache; awareness probes not included)."""

    model: str
    run: str
    cell: str
    rows: int
    estimated_rows: int  # rows whose prompt is estimated from length (hits not cached, DrugMech)
    prompt_tokens: int
    tokens_exact: bool  # every prompt exact and counted with the model's tokenizer


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
    #: Retrieval indexes (corpus x retriever) the runs read, built once per sweep (`biorab.sweep.indexes`).
    indexes: int = 0
    #: Of those, the indexes that embed their corpus (dense, hybrid), the items and tokens they encode
    #: and their GPU-hours on `gpu` (`biorab.sweep.indexes.index_cost`; not in `gpu_hours`).
    encoded_indexes: int = 0
    index_items: int = 0
    index_tokens: int = 0
    index_gpu_hours: float = 0.0
    models: list[ModelPlan] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cell_estimates: list[CellEstimate] | None = None  # filled when asked (`list_cells`)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if self.cell_estimates is None:  # not asked: the JSON stays as it was
            del out["cell_estimates"]
        return out


def plan_sweep(sweep: SweepConfig, *, path: str | Path | None = None, check_data: bool = True,
               list_cells: bool = False) -> SweepPlan:
    """Plan every cell of `sweep` against the caches under `biorab.common.paths.cache_dir`; `list_cells` keeps
    each cell's estimate in `SweepPlan.cell_estimates`."""
    start = time.perf_counter()
    plan = SweepPlan(sweep.name, gpu=sweep.throughput.gpu)
    runs = _checked_runs(sweep, path, check_data, plan.errors)
    profiles = sweep.all_models()
    return _plan_runs(plan, runs, lambda model: profiles[model], sweep.throughput,
                      read_measured(sweep.sweep_dir()), list_cells, start)


def plan_experiment(config: ExperimentConfig, *, path: str | Path | None = None, check_data: bool = True,
                    list_cells: bool = True) -> SweepPlan:
    """Plan a run config as `plan_sweep` plans each run of a sweep: one model (named by its backend's
    ``model`` param, else the backend), GPU-hours from the default throughput table (only a sweep records
    measured throughput). ``SweepPlan.sweep`` is the run's name."""
    from biorab.runner.checks.validate import check_experiment

    start = time.perf_counter()
    plan = SweepPlan(config.name, gpu=ThroughputSpec().gpu)
    model = str(config.backend.params.get("model") or config.backend.name)
    runs = [SweepRun(model, config)]
    try:
        check_experiment(config, path=path, check_data=check_data)
    except BioRABError as e:
        plan.errors.append(str(e))
        runs = []
    profile = _run_profile(config)
    return _plan_runs(plan, runs, lambda _: profile, ThroughputSpec(), {}, list_cells, start)


def _run_profile(config: ExperimentConfig) -> ModelProfile:
    """The model profile a run config's backend amounts to (what the GPU-hour estimate reads of it)."""
    params = config.backend.params
    model, tp = params.get("model"), params.get("tensor_parallel_size", 1)
    return ModelProfile(backend=config.backend.name, model=model if isinstance(model, str) else None,
                        tensor_parallel_size=tp if isinstance(tp, int) and tp >= 1 else 1)


def _plan_runs(plan: SweepPlan, runs: list[SweepRun], profile_of: Callable[[str], ModelProfile],
               throughput: ThroughputSpec, measured: dict[str, Measured], list_cells: bool,
               start: float) -> SweepPlan:
    """Plan `runs` model by model into `plan` (shared by sweeps and run configs)."""
    from biorab.common.paths import cache_dir

    if list_cells:
        plan.cell_estimates = []
    hits_path, gens_path = default_store_paths(cache_dir())
    hit_store = HitStore(hits_path) if hits_path.is_file() else None
    gen_store = GenerationStore(gens_path) if gens_path.is_file() else None
    planner = PromptPlanner(hit_store, cache_dir() / "sweep" / "corpus_digests.json")
    hit_keys: set[str] = set()
    new_hits: set[str] = set()
    try:
        for model, model_runs in _by_model(runs):
            profile = profile_of(model_runs[0].model)
            plan.models.append(_plan_model(profile, throughput, model, model_runs, planner, gen_store,
                                           measured, hit_keys, new_hits, plan.errors, plan.cell_estimates))
    finally:
        planner.close()
    _totals(plan, runs, hit_keys, new_hits)
    from biorab.sweep.indexes import index_cost, index_jobs

    try:
        cost = index_cost(index_jobs([r.config for r in runs]), throughput)
    except BioRABError as e:  # a corpus that cannot be built: the run would fail the same way
        plan.errors.append(f"retrieval indexes: {e}")
    else:
        plan.indexes, plan.encoded_indexes = cost.indexes, cost.encoded
        plan.index_items, plan.index_tokens, plan.index_gpu_hours = (cost.encoded_items, cost.encoded_tokens,
                                                                     cost.gpu_hours)
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
    # a reasoning variant (`SweepRun.label`) is planned as a model of its own: its params, tokens and cost
    groups: dict[str, list[SweepRun]] = {}
    for run in runs:
        groups.setdefault(run.label, []).append(run)
    yield from groups.items()


def _plan_model(
    profile: ModelProfile,
    throughput: ThroughputSpec,
    model: str,
    runs: list[SweepRun],
    planner: PromptPlanner,
    gen_store: GenerationStore | None,
    measured: dict[str, Measured],
    hit_keys: set[str],
    new_hits: set[str],
    errors: list[str],
    listing: list[CellEstimate] | None,
) -> ModelPlan:
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
            if listing is not None:
                listing.append(_cell_estimate(model, run, cell, prompts, counter))
        out.cells += _drugmech_estimate(run, info, estimated, errors, listing)
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
    per_gen, out.decode_basis = decode_per_answer(runs[0].config, rec)
    backend = runs[0].config.backend
    out.reasoning_note = reasoning_bound(backend.name, backend.params, runs[0].config.sampling.max_tokens)[1]
    out.new_decode_tokens = int(out.new_generations * per_gen)
    out.throughput = "measured" if rec else f"table ({throughput.gpu})"
    out.gpu_hours = round(gpu_hours(profile, throughput, prompt_tokens=out.new_prompt_tokens,
                                    decode_tokens=out.new_decode_tokens, generations=out.new_generations,
                                    measured=rec), 4)
    out.cost_usd = _cost(runs[0].config, out.new_prompt_tokens, out.new_decode_tokens)
    return out


def _cost(config: Any, prompt_tokens: int, decode_tokens: int) -> float | None:
    """US dollars of the new tokens at the openai backend's ``price`` (None without one); the decode tokens
    are `decode_per_answer`'s (a bound, an estimate or an assumption: `ModelPlan.decode_basis`),
    reasoning tokens included."""
    price = config.backend.params.get("price") if capabilities_of(config.backend.name).server_client else None
    if not price:
        return None
    from biorab.generation.openai.params import Price

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


def _cell_estimate(model: str, run: SweepRun, cell: Cell, prompts: CellPrompts,
                   counter: TokenCounter) -> CellEstimate:
    """A cell's rows and prompt tokens, from the prompts the plan counts (exact ones by `counter`)."""
    exact_tokens = sum(counter.count([p.text for p in prompts.exact])) if prompts.exact else 0
    est_tokens = sum(math.ceil(chars / CHARS_PER_TOKEN) for chars in prompts.estimated.values())
    return CellEstimate(model, run.config.name, cell.cell_id, len(prompts.exact) + len(prompts.estimated),
                        len(prompts.estimated), exact_tokens + est_tokens,
                        counter.exact and not prompts.estimated)


def _drugmech_estimate(run: SweepRun, info: ModelInfo, estimated: dict[str, int], errors: list[str],
                       listing: list[CellEstimate] | None) -> int:
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
        rows = min(n, run.config.drugmech.limit or n)
        for i in range(rows):
            estimated[f"{info.digest}:{plan.cell_id}:{i}"] = DRUGMECH_PROMPT_CHARS
        if listing is not None:
            tokens = rows * math.ceil(DRUGMECH_PROMPT_CHARS / CHARS_PER_TOKEN)
            listing.append(CellEstimate(run.model, run.config.name, plan.cell_id, rows, rows, tokens, False))
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
