"""The sweep config: one YAML file → one frozen `SweepConfig` whose `matrix:` expands into the cells that
`biorab run` already knows (`biorab.sweep.expand`).

Example (``jobs/sweep_smoke.yaml``)::

    name: sweep-smoke
    models:
      smollm2: {backend: transformers, model: smollm2, size_b: 0.135}
      fake: {backend: fake, params: {mode: choice}}
    matrix:
      models: [smollm2, fake]
      datasets: [{name: ade_corpus_v2, limit: 4}, {name: medmcqa, limit: 4}]
      retrievers: [none, bm25]
      testbeds: [counterfactual]
      rates: [0.2, 1.0]

Models and retrievers are named profiles (the paper's five LLMs and three retrievers are built in and can
be overridden); the other axes are plain values. A retriever ``none`` ignores the testbed and rate axes
(one zero-shot cell). ``matrix`` may be a list of blocks (their union, duplicates dropped), so that one file
holds the paper's Tables 1–6, each table a block.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_validator

from biorab.common.config_loading import read_yaml, validate_mapping
from biorab.common.params import Params
from biorab.drugmech.experiment.spec import DrugMechSpec
from biorab.experiment import DatasetSpec, ExperimentConfig, ParserMode, TrackingConfig
from biorab.generation.base import SamplingParams
from biorab.generation.capabilities import capabilities_of, takes_param
from biorab.ral.specs.evidence_order import EvidenceOrder
from biorab.ral.specs.retrieval_spec import RATED_TESTBEDS, TestbedKind
from biorab.retrieval.selection import Selection
from biorab.sweep.reasoning_axes import ReasoningEffort

#: The axes an ``exclude`` entry may name (and the keys of a `biorab.sweep.expand.SweepCell`).
AXES = ("model", "dataset", "retriever", "testbed", "rate", "method", "seed", "order", "reasoning_effort",
        "thinking_budget")


class ModelProfile(Params):
    """One LLM of the sweep: the backend and how it loads the model.

    Attributes:
        backend: a `BACKENDS` name (``vllm``, ``transformers``, ``openai``, ``fake``).
        model: hub id, local folder or known name (``smollm2``); unused by ``fake``.
        tensor_parallel_size: GPUs per engine (vLLM); also the LLM actor's ``num_gpus`` on GPU profiles.
        dtype: weights dtype (vLLM and transformers).
        params: further backend params (``chat``, ``max_model_len``, ``base_url``...).
        size_b: parameters in billions, for the GPU-hour estimate (``None``: read from the model name).
        resources: overrides of the sweep's ``resources`` for this model (e.g. ``llm: {pool_size: 2}``).
        drugmech: overrides of the sweep's ``drugmech`` block for this model (e.g. ``runs: 1``).
    """

    backend: str = "vllm"
    model: str | None = None
    tensor_parallel_size: int = Field(default=1, ge=1)
    dtype: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    size_b: float | None = Field(default=None, gt=0)
    resources: dict[str, Any] = Field(default_factory=dict)
    drugmech: dict[str, Any] = Field(default_factory=dict)

    def backend_params(self) -> dict[str, Any]:
        """The backend's own params: `params` plus model, dtype and tensor parallelism where it takes them
        (its `biorab.generation.capabilities.Capabilities`: dtype where it loads weights itself)."""
        can = capabilities_of(self.backend)
        out = dict(self.params)
        if self.model is not None and takes_param(self.backend, "model"):
            out["model"] = self.model
        if can.tensor_parallel:
            out["tensor_parallel_size"] = self.tensor_parallel_size
        if self.dtype is not None and can.local_weights:
            out["dtype"] = self.dtype
        return out


class _ProfileRetriever(Params):
    """The retriever of a profile (see `RetrieverProfile`)."""

    retriever: str = "bm25"
    params: dict[str, Any] = Field(default_factory=dict)


# Bases in this order keep the fields in their order: retriever, params, the selection, template.
class RetrieverProfile(Selection, _ProfileRetriever):
    """One retriever of the sweep (``retriever: none`` is the no-retrieval baseline): the retriever, its
    params and selection (`biorab.retrieval.selection.Selection`: k, keep_ties, tie_pool, dedupe) as in a
    run config's retrieval entry.

    `template` is the prompt variant; ``None`` means ``noexample`` without retrieval, ``negative_awareness``
    on that testbed and ``default`` otherwise.
    """

    template: str | None = None

    @property
    def retrieves(self) -> bool:
        return self.retriever != "none"


#: The paper's LLMs (Table 1) by hub id; a sweep may override any of them or add its own.
PAPER_MODELS: dict[str, ModelProfile] = {
    "llama2-13b": ModelProfile(model="meta-llama/Llama-2-13b-chat-hf", size_b=13, dtype="bfloat16"),
    "medllama-13b": ModelProfile(model="chaoyi-wu/MedLLaMA_13B", size_b=13, dtype="bfloat16"),
    "llama3-8b": ModelProfile(model="meta-llama/Meta-Llama-3-8B-Instruct", size_b=8, dtype="bfloat16"),
    "phi4-14b": ModelProfile(model="microsoft/phi-4", size_b=14, dtype="bfloat16"),
    "qwen2.5-32b": ModelProfile(model="Qwen/Qwen2.5-32B-Instruct", size_b=32, dtype="bfloat16",
                                tensor_parallel_size=2),
}

#: The paper's retrievers (BM25, Contriever, MedCPT) and the no-retrieval baseline.
PAPER_RETRIEVERS: dict[str, RetrieverProfile] = {
    "none": RetrieverProfile(retriever="none"),
    "bm25": RetrieverProfile(retriever="bm25", template="bm25"),
    "contriever": RetrieverProfile(retriever="dense", params={"encoder": "contriever"}),
    "medcpt": RetrieverProfile(retriever="dense", params={"encoder": "medcpt"}),
}


class MatrixBlock(Params):
    """One block of the matrix: the cross product of its axes, minus its `exclude` entries."""

    models: tuple[str, ...] = Field(min_length=1)
    datasets: tuple[DatasetSpec, ...] = ()
    retrievers: tuple[str, ...] = ("none",)
    testbeds: tuple[TestbedKind, ...] = ("labeled",)
    rates: tuple[float, ...] = ()
    methods: tuple[str, ...] = ("none",)
    # Evidence orders (`biorab.ral.specs.evidence_order`); a ``misleading_*`` order applies only to the
    # testbeds
    # that corrupt labels (counterfactual, negative_awareness) and is skipped on the others.
    orders: tuple[EvidenceOrder, ...] = ("retrieved",)
    seeds: tuple[int, ...] = (0,)
    # The reasoning axes (`biorab.sweep.reasoning_axes`): an OpenAI reasoning model's effort, and the
    # thinking budget in tokens; None is the profile's own params (``[null, 256]``: thinking-budget twins).
    reasoning_efforts: tuple[ReasoningEffort | None, ...] = (None,)
    thinking_budgets: tuple[int | None, ...] = (None,)
    exclude: tuple[dict[str, Any], ...] = ()
    # Overrides of the sweep's `sampling` for this block's cells (Table 6 needs ``score_labels: true`` for
    # AUROC/AUPRC); sampling is part of every generation key, so the other blocks keep theirs.
    sampling: dict[str, Any] = Field(default_factory=dict)

    @field_validator("datasets", mode="before")
    @classmethod
    def _names_are_datasets(cls, value: Any) -> Any:
        # ``datasets: [ade, medmcqa]`` is short for ``[{name: ade}, {name: medmcqa}]``.
        if isinstance(value, list | tuple):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("rates")
    @classmethod
    def _rates_in_range(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if any(not 0.0 <= r <= 1.0 for r in value):
            raise ValueError("counterfactual rates lie in 0..1")
        return value

    @field_validator("exclude")
    @classmethod
    def _known_axes(cls, value: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
        return check_excludes(value)

    @field_validator("thinking_budgets")
    @classmethod
    def _budgets_positive(cls, value: tuple[int | None, ...]) -> tuple[int | None, ...]:
        if any(b is not None and b < 1 for b in value):
            raise ValueError("a thinking budget is at least 1 token (null: no budget)")
        return value

    @model_validator(mode="after")
    def _rates_for_counterfactual(self) -> MatrixBlock:
        rated = [t for t in self.testbeds if t in RATED_TESTBEDS]
        if rated and not self.rates:
            raise ValueError(f"the {rated[0]} testbed needs 'rates' (e.g. [0.2, 0.8, 1.0])")
        return self


def check_excludes(value: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
    for entry in value:
        unknown = sorted(set(entry) - set(AXES))
        if unknown:
            raise ValueError(f"exclude names unknown axis {unknown[0]!r}; axes: {', '.join(AXES)}")
        if not entry:
            raise ValueError("an empty exclude entry would drop every cell")
    return value


class ThroughputSpec(Params):
    """Generation throughput for the GPU-hour estimate: tokens per second of one engine on `gpu`.

    `per_size` maps a model size in billions to (prompt tokens/s, decode tokens/s) per engine (one engine
    spans `tensor_parallel_size` GPUs); sizes between two entries take the nearer larger one. Measured
    throughput recorded by earlier runs (``throughput.json``) replaces these numbers for that model.
    """

    gpu: str = "A100-80GB"
    per_size: dict[float, tuple[float, float]] = Field(default_factory=lambda: {
        1.0: (40_000.0, 6_000.0),
        8.0: (12_000.0, 2_500.0),
        14.0: (7_000.0, 1_500.0),
        34.0: (3_500.0, 700.0),
        72.0: (1_600.0, 350.0),
    })


class SweepConfig(Params):
    """A whole sweep: named model and retriever profiles, the matrix, and what every cell shares.

    Attributes:
        name: the sweep's name; outputs go to ``<output_dir>/<name>/<run>`` (one run per model group).
        models, retrievers: profiles by name, on top of `PAPER_MODELS` / `PAPER_RETRIEVERS`.
        matrix: one block or a list of blocks (union, duplicate cells dropped).
        exclude: entries dropped from every block (``{model: fake, dataset: ade}``; a list value means any).
        drugmech: DrugMech query files evaluated by every model of the sweep (the DrugMech evaluation).
        sampling, parser, n_boot, data_dir, resources, tracking: as in `ExperimentConfig`, shared.
        throughput: the GPU-hour model of `biorab plan`.
    """

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    output_dir: str = "runs"
    data_dir: str | None = None
    models: dict[str, ModelProfile] = Field(default_factory=dict)
    retrievers: dict[str, RetrieverProfile] = Field(default_factory=dict)
    matrix: tuple[MatrixBlock, ...] = ()
    exclude: tuple[dict[str, Any], ...] = ()
    drugmech: dict[str, Any] | None = None
    sampling: SamplingParams = SamplingParams()
    parser: ParserMode = "robust"
    n_boot: int = Field(default=1000, ge=0)
    resources: dict[str, Any] = Field(default_factory=dict)
    tracking: TrackingConfig = TrackingConfig()
    throughput: ThroughputSpec = ThroughputSpec()

    @field_validator("matrix", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    @field_validator("exclude")
    @classmethod
    def _known_axes(cls, value: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
        return check_excludes(value)

    @field_validator("drugmech")
    @classmethod
    def _drugmech_shape(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            DrugMechSpec.model_validate(value)  # the same checks as in a run config, named under drugmech
        return value

    @model_validator(mode="after")
    def _known_profiles(self) -> SweepConfig:
        for b, block in enumerate(self.matrix):
            for i, name in enumerate(block.models):
                if name not in self.all_models():
                    raise ValueError(f"matrix.{b}.models.{i}: unknown model profile {name!r}; known: "
                                     f"{', '.join(sorted(self.all_models()))}")
            for i, name in enumerate(block.retrievers):
                if name not in self.all_retrievers():
                    raise ValueError(f"matrix.{b}.retrievers.{i}: unknown retriever profile {name!r}; "
                                     f"known: {', '.join(sorted(self.all_retrievers()))}")
            try:
                self.block_sampling(block)
            except ValidationError as e:
                first = e.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise ValueError(f"matrix.{b}.sampling.{where}: {first['msg']}") from None
        if not self.matrix and self.drugmech is None:
            raise ValueError("a sweep needs a 'matrix' (cells) or 'drugmech' (with a matrix of models)")
        return self

    def block_sampling(self, block: MatrixBlock) -> SamplingParams:
        """The sampling of a block's cells: the sweep's, with the block's overrides on top."""
        if not block.sampling:
            return self.sampling
        return SamplingParams.model_validate({**self.sampling.model_dump(), **block.sampling})

    def all_models(self) -> dict[str, ModelProfile]:
        return {**PAPER_MODELS, **self.models}

    def all_retrievers(self) -> dict[str, RetrieverProfile]:
        return {**PAPER_RETRIEVERS, **self.retrievers}

    def sweep_dir(self) -> Path:
        return Path(self.output_dir).expanduser().resolve() / self.name


def load_sweep(path: str | Path) -> SweepConfig:
    """Read and validate a sweep YAML; errors name the file and the dotted key."""
    return validate_mapping(SweepConfig, read_yaml(path), path=path)


def is_run_config(data: dict[str, Any]) -> bool:
    """Whether a YAML mapping is a run config (`ExperimentConfig`) rather than a sweep: it has none of the
    keys only a sweep has (``models``, ``matrix``, ``retrievers``, ``exclude``, ``throughput``). A run
    config may hold just ``name`` and ``drugmech`` (every other key has a default)."""
    sweep_only = set(SweepConfig.model_fields) - set(ExperimentConfig.model_fields)
    return not sweep_only & data.keys()
