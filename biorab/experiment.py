"""The experiment config: one YAML file → one frozen `ExperimentConfig`, validated once at the edge.

A run evaluates *cells*: every dataset slice × every retrieval setting. The config is inert (it never touches
the environment, devices or RNGs); `biorab.runner` reads it and does the work.

Example (``jobs/smoke.yaml``)::

    name: smoke
    datasets: [{name: ade, split: test, limit: 8}, {name: medmcqa, limit: 8}]
    retrieval: [{testbed: none}, {testbed: labeled, retriever: bm25, k: 1}]
    backend: {name: transformers, params: {model: smollm2}}
    sampling: {max_tokens: 32}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from biorab.common.config_sections import Section, prepare_sections
from biorab.common.params import Params
from biorab.generation.base import SamplingParams, stable_digest
from biorab.ral.specs.retrieval_spec import RetrievalSpec

ParserMode = Literal["robust", "strict_original"]
LLMEngine = Literal["actors", "vllm_processor"]


class ResampleSpec(Params):
    """Seeded resampling of a binary classification split to a positive:negative ratio (the paper's
    sampling-bias study, 1:1 vs 1:5); see `biorab.datasets.resample`.

    Attributes:
        ratio: ``"P:N"``, e.g. ``"1:1"`` or ``"1:5"``.
        seed: seeds which instances are drawn.
        positive: the positive label (``None``: the dataset's, e.g. ``1`` for Ade-corpus-v2, ``y`` SemClass).
    """

    ratio: str = Field(pattern=r"^[1-9][0-9]*:[1-9][0-9]*$")
    seed: int = 0
    positive: str | None = None

    @property
    def parts(self) -> tuple[int, int]:
        pos, neg = self.ratio.split(":")
        return int(pos), int(neg)

    @property
    def tag(self) -> str:
        """A label-safe name, e.g. ``1to5s0``."""
        pos, neg = self.parts
        return f"{pos}to{neg}s{self.seed}" + (f"p{self.positive}" if self.positive is not None else "")


#: A dataset slice's query framing (`biorab.datasets.framing`, which applies it).
Framing = Literal["none", "abbreviations", "typos", "leading"]


class DatasetSpec(Params):
    """One dataset slice: the first `limit` rows (all when ``None``) of `split`; `framing`: its queries
    asked another way (`biorab.datasets.framing`: ``abbreviations``, ``typos``, ``leading``; ``none``: as
    written)."""

    name: str
    split: str = "test"
    limit: int | None = Field(default=None, ge=1)
    resample: ResampleSpec | None = None
    framing: Framing = "none"

    def fingerprint_json(self) -> dict[str, Any]:
        """The slice as digested into cell fingerprints: without `limit`, and `resample` and `framing` only
        when set (so that existing configs keep their fingerprints)."""
        data = self.model_dump(mode="json", exclude={"limit", "resample", "framing"})
        if self.resample is not None:
            data["resample"] = self.resample.model_dump(mode="json")
        if self.framing != "none":
            data["framing"] = self.framing
        return data


class BackendSpec(Params):
    """The generation backend (a `BACKENDS` name) and its own params."""

    name: str = "transformers"
    params: dict[str, Any] = Field(default_factory=dict)


class StageResources(Params):
    """Resources of one Ray Data actor stage (fractional CPUs so that pools fit on 2 cores)."""

    pool_size: int = Field(default=1, ge=1)
    num_cpus: float = Field(default=0.5, gt=0.0)
    num_gpus: float = Field(default=0.0, ge=0.0)
    batch_size: int = Field(default=8, ge=1)


class ResourcesConfig(Params):
    """Where and how the Ray pipeline runs. Defaults work on a 2-CPU laptop; see docs/pipeline.md for the
    GPU profile (``llm: {num_gpus: 1, pool_size: <gpus>, batch_size: 64}`` or ``llm_engine: vllm_processor``).

    Attributes:
        address: Ray address to connect to (``auto``, ``ray://...``); ``None`` starts a local Ray.
        num_cpus: logical CPUs of the local Ray (ignored with an address).
        object_store_memory: bytes of the local object store (ignored with an address).
        temp_dir: Ray's temp dir for the local Ray (short path: Unix socket names are limited).
        blocks: number of blocks small inputs are repartitioned into (``None``: one per batch, at most 64).
        task_num_cpus: CPUs of the light task stages (render, parse, write).
        retrieval: the retrieval actor pool; `llm`: the LLM actor pool.
        llm_engine: ``actors`` (an actor pool of the configured backend) or ``vllm_processor``
            (``ray.data.llm``'s vLLM processor; GPU clusters).
    """

    address: str | None = None
    num_cpus: int = Field(default=2, ge=1)
    object_store_memory: int = Field(default=1_000_000_000, ge=78_643_200)
    temp_dir: str | None = None
    blocks: int | None = Field(default=None, ge=1)
    task_num_cpus: float = Field(default=0.25, gt=0.0)
    retrieval: StageResources = StageResources(num_cpus=0.25, batch_size=8)
    llm: StageResources = StageResources(num_cpus=1.0, batch_size=8)
    llm_engine: LLMEngine = "actors"

    @field_validator("retrieval", "llm", mode="before")
    @classmethod
    def _keep_stage_defaults(cls, value: Any, info: ValidationInfo) -> Any:
        # ``llm: {batch_size: 16}`` changes the batch size only: the stage's other fields keep this
        # profile's defaults (LLM 1.0 CPU, retrieval 0.25), not the generic `StageResources` ones.
        if isinstance(value, Mapping) and info.field_name is not None:
            default = cls.model_fields[info.field_name].default
            return {**default.model_dump(), **value}
        return value


class TrackingConfig(Params):
    """MLflow tracking. `uri` ``None`` means ``sqlite:///<run dir>/mlflow.db``; a server is one line.
    `traces`: MLflow traces per cell (its first instances, retrieve and generate spans; 0: none)."""

    enabled: bool = True
    uri: str | None = None
    experiment: str | None = None
    traces: int = Field(default=3, ge=0, le=1000)


class ExperimentConfig(Params):
    """A whole experiment: dataset slices × retrieval settings and/or DrugMech query files, one backend, one
    sampling setup.

    Attributes:
        name: the run's name; outputs go to ``<output_dir>/<name>``.
        datasets: the BioRAB dataset slices (cells: each × every retrieval setting); may be empty when
            `drugmech` is given.
        drugmech: DrugMech query files to evaluate (the block registered as ``drugmech`` in
            `biorab.common.registry.CONFIG_SECTIONS`).
        data_dir: the BioRAB data root (``None``: `biorab.common.paths.biorab_data_dir`).
        seed: seed of corpus corruption and of the bootstrap CIs.
        n_boot: bootstrap resamples for the CIs.
    """

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    data_dir: str | None = None
    output_dir: str = "runs"
    seed: int = 0
    datasets: tuple[DatasetSpec, ...] = ()
    drugmech: Annotated[Any, Section("drugmech")] | None = Field(default=None, validate_default=True)
    retrieval: tuple[RetrievalSpec, ...] = (RetrievalSpec(),)
    backend: BackendSpec = BackendSpec()
    sampling: SamplingParams = SamplingParams()
    parser: ParserMode = "robust"
    n_boot: int = Field(default=1000, ge=0)
    resources: ResourcesConfig = ResourcesConfig()
    tracking: TrackingConfig = TrackingConfig()

    @model_validator(mode="before")
    @classmethod
    def _drugmech_chat(cls, data: Any) -> Any:
        return prepare_sections(data, ("drugmech",))

    @field_validator("drugmech")
    @classmethod
    def _something_to_run(cls, value: Any, info: ValidationInfo) -> Any:
        # Checked on `drugmech` (validated even when absent), so the error names a key.
        if value is None and info.data.get("datasets", ("invalid",)) == ():  # absent, not invalid
            raise ValueError("a config needs 'datasets' (BioRAB cells), 'drugmech' (DrugMech query files), "
                             "or both")
        return value

    @field_validator("retrieval")
    @classmethod
    def _unique_retrieval(cls, value: tuple[RetrievalSpec, ...]) -> tuple[RetrievalSpec, ...]:
        seen = [spec.model_dump_json() for spec in value]
        if len(set(seen)) != len(seen):
            raise ValueError("two retrieval settings are identical")
        return value

    def run_dir(self) -> Path:
        return Path(self.output_dir).expanduser().resolve() / self.name

    def cells(self) -> list[Cell]:
        """Every (dataset slice, retrieval setting) pair, in config order."""
        return [Cell(ds, rs, self) for ds in self.datasets for rs in self.retrieval]

    def with_limit(self, limit: int | None) -> ExperimentConfig:
        """A copy whose every dataset slice (and DrugMech query file) is limited to `limit` rows (``None``:
        unchanged)."""
        if limit is None:
            return self
        datasets = tuple(d.model_copy(update={"limit": limit}) for d in self.datasets)
        drugmech = self.drugmech.model_copy(update={"limit": limit}) if self.drugmech else None
        return self.model_copy(update={"datasets": datasets, "drugmech": drugmech})


@dataclass(frozen=True)
class Cell:
    """One (dataset slice, retrieval setting) of an experiment."""

    dataset: DatasetSpec
    retrieval: RetrievalSpec
    config: ExperimentConfig

    @property
    def fingerprint(self) -> str:
        """Digest of everything that determines this cell's rows, except the slice size, so that a larger
        ``--limit`` resumes from a smaller one, while a changed backend or prompt never mixes outputs."""
        cfg = self.config
        return stable_digest(
            {
                "dataset": self.dataset.fingerprint_json(),
                "retrieval": self.retrieval.fingerprint_json(),
                "backend": cfg.backend.model_dump(mode="json"),
                "sampling": cfg.sampling.model_dump(mode="json"),
                "parser": cfg.parser,
                "seed": cfg.seed,
                "data_dir": cfg.data_dir,
            }
        )[:10]

    @property
    def label(self) -> str:
        """A readable name, e.g. ``ade-test__labeled-bm25-k1`` or ``medmcqa-test__none``."""
        r = self.retrieval
        parts = [f"{self.dataset.name}-{self.dataset.split}", r.testbed]
        if self.dataset.resample is not None:
            parts[0] += f"-{self.dataset.resample.tag}"
        if self.dataset.framing != "none":
            parts[0] += f"-{self.dataset.framing}"
        if r.rate is not None:
            parts[-1] += f"-{r.rate:g}"
        if r.retrieves:
            parts[-1] += f"-{r.retriever}-k{r.k}" + ("" if r.dedupe else "-dups")
            parts[-1] += "-notestdups" if r.exclude_test_duplicates else ""
        if r.method != "none":
            parts[-1] += f"-{r.method}"
        if r.order != "retrieved":
            parts[-1] += f"-{r.order}"
        if r.template != "default":
            parts.append(r.template)
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", "__".join(parts))

    @property
    def cell_id(self) -> str:
        return f"{self.label}__{self.fingerprint}"
