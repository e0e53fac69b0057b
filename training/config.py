"""The tune job YAML: one frozen pydantic `TuneJobConfig` (``extra="forbid"``; errors name the key and file).

Example (``jobs/tune_encoder.yaml``)::

    name: tune-encoder
    kind: encoder
    training: {dataset: ade_corpus_v2, limit: 96, testbed: counterfactual, rate: 0.5, k: 2}
    encoder: {kind: sentence, model: minilm, max_steps: 12, checkpoint_every: 4}
    search: {lr: {loguniform: [1.0e-5, 1.0e-4]}}
    tune: {metric: eval_loss, mode: min, num_samples: 2}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from biorab.common.config_loading import read_yaml, validate_mapping
from biorab.common.params import Params
from biorab.learn.config import EncoderTrainParams, PeftTrainParams, TrainingSource
from biorab.learn.holdout import CorpusHoldOut
from pipelines.ray_setup import RaySettings

SPACE_KINDS = ("grid", "choice", "uniform", "loguniform", "randint")


class SchedulerConfig(Params):
    """ASHA early stopping (``kind: none`` runs every trial to the end). Time is Tune iterations, i.e.
    evaluated checkpoints (one every ``checkpoint_every`` steps)."""

    kind: Literal["asha", "none"] = "asha"
    grace_period: int = Field(default=1, ge=1)
    reduction_factor: float = Field(default=2.0, gt=1.0)


class TuneSettings(Params):
    metric: str = "eval_loss"
    mode: Literal["min", "max"] = "min"
    num_samples: int = Field(default=2, ge=1)
    max_concurrent_trials: int | None = Field(default=None, ge=1)
    scheduler: SchedulerConfig = SchedulerConfig()
    seed: int = 0


class ResourceSettings(Params):
    """Per trial: Ray Train workers and what each holds (one trial may span several GPUs)."""

    num_workers: int = Field(default=1, ge=1)
    use_gpu: bool = False
    cpus_per_worker: float = Field(default=1.0, gt=0.0)
    gpus_per_worker: float = Field(default=0.0, ge=0.0)



class MlflowSettings(Params):
    """MLflow: ``tracking_uri`` ``None`` means ``$MLFLOW_TRACKING_URI`` or ``sqlite:///<storage>/mlflow.db``."""

    enabled: bool = True
    tracking_uri: str | None = None
    experiment: str = "biorab-tune"
    register_as: str | None = None
    alias: str = "best"


class StopSettings(Params):
    """Stop a trial after this many Tune iterations (evaluated checkpoints) or seconds (``None``: never)."""

    training_iteration: int | None = Field(default=None, ge=1)
    time_total_s: float | None = Field(default=None, gt=0)


class TuneJobConfig(Params):
    """A tune job: what to train on, the base hyper-parameters, what to search and how to run it.

    Attributes:
        kind: ``encoder`` (the triplet-loss awareness encoder) or ``peft`` (instruction tuning).
        storage: where Tune keeps the job (``<storage>/<name>``, resumable); relative to the working dir.
        search: dotted parameter name (``lr``, ``lora.r``) -> ``{grid|choice: [..]}`` or
            ``{uniform|loguniform|randint: [low, high]}``.
        evaluation: the slice (e.g. the test split) whose retrieved items the best encoder's and the untrained
            encoder's ledger AUROC/AUPRC are measured on: under `hold_out`, held-out items only.
        hold_out: the seeded hash split of the corpus items (`biorab.learn.holdout.CorpusHoldOut`) made
            before the triplets are built (their train side) and scored on (the held-out side).
            ``fraction: 0`` turns it off: evaluation then scores items the training triplets contain.
        n_boot: bootstrap resamples of the AUROC/AUPRC CIs.
        max_failures: retries of a failed trial (Ray Train restarts it from its last checkpoint).
        num_to_keep: checkpoints kept per trial.
    """

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    kind: Literal["encoder", "peft"]
    storage: str = "runs/tune"
    training: TrainingSource
    evaluation: TrainingSource | None = None
    hold_out: CorpusHoldOut = CorpusHoldOut()
    n_boot: int = Field(default=1000, ge=0)
    negatives: Literal["random", "corrupted", "both"] = "both"
    encoder: EncoderTrainParams = EncoderTrainParams()
    peft: PeftTrainParams = PeftTrainParams()
    search: dict[str, dict[str, list[Any]]] = Field(default_factory=dict)
    tune: TuneSettings = TuneSettings()
    resources: ResourceSettings = ResourceSettings()
    ray: RaySettings = RaySettings()
    mlflow: MlflowSettings = MlflowSettings()
    stop: StopSettings = StopSettings()
    max_failures: int = Field(default=1, ge=0)
    num_to_keep: int = Field(default=2, ge=1)

    @field_validator("search")
    @classmethod
    def _known_spaces(cls, value: dict[str, dict[str, list[Any]]]) -> dict[str, dict[str, list[Any]]]:
        for name, space in value.items():
            if len(space) != 1 or next(iter(space)) not in SPACE_KINDS:
                raise ValueError(f"search.{name}: give exactly one of {', '.join(SPACE_KINDS)}")
            kind, args = next(iter(space.items()))
            if kind in ("uniform", "loguniform", "randint") and len(args) != 2:
                raise ValueError(f"search.{name}.{kind}: give [low, high]")
        return value

    @model_validator(mode="after")
    def _searched_params_exist(self) -> TuneJobConfig:
        base = self.base_params().model_dump()
        for name in self.search:
            node: Any = base
            for part in name.split("."):
                if not isinstance(node, dict) or part not in node:
                    raise ValueError(f"search: {self.kind} has no parameter {name!r}")
                node = node[part]
        return self

    def base_params(self) -> EncoderTrainParams | PeftTrainParams:
        return self.encoder if self.kind == "encoder" else self.peft

    def job_dir(self, root: Path | None = None) -> Path:
        return ((root or Path.cwd()) / self.storage).resolve() / self.name


def load_tune_config(path: str | Path) -> TuneJobConfig:
    """Read and validate a tune job YAML (a `biorab.common.errors.ConfigError` names the key and file)."""
    return validate_mapping(TuneJobConfig, read_yaml(path), path=path)


def trial_params(cfg: TuneJobConfig, overrides: dict[str, Any]) -> dict[str, Any]:
    """The base params with a trial's dotted overrides applied, as a plain dict (validated by the caller)."""
    params = cfg.base_params().model_dump()
    for name, value in overrides.items():
        node = params
        *parents, leaf = name.split(".")
        for part in parents:
            node = node[part]
        node[leaf] = value
    return params
