"""The serve config: one YAML file → one frozen `EndpointConfig`, validated once at the edge.

An `EndpointConfig` is the endpoint (auth, limits, HTTP, Ray, one block per deployment: replicas,
autoscaling, queue limits, batching) holding the `RALConfig` of each RAL it serves. A RAL reuses the run
config's blocks (a retrieval entry, the backend, sampling, parser), so a served RAL is declared exactly
like an evaluated cell. The file (`ServeConfigFile`) writes one RAL flat at the top level, or several
under ``rals:`` whose entries take what they leave out from there; `load_serve_config` resolves it.
Unknown keys are errors that name the key and the file, as `biorab validate` does for run configs. The
config is inert: API keys are read from ``$BIORAB_API_KEYS`` or `AuthConfig.api_keys_file` by
`serve.auth`, never stored here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from biorab.common.config_loading import read_yaml, validate_mapping
from biorab.common.errors import ConfigError
from biorab.common.params import Params
from biorab.experiment import BackendSpec, ParserMode
from biorab.generation.base import SamplingParams
from biorab.generation.capabilities import capabilities_of
from biorab.ral.specs.retrieval_spec import RetrievalSpec
from pipelines.ray_setup import RaySettings

#: The embedded default (`biorab serve` without a config): BM25 over ADE-corpus-v2's labeled corpus.
SMOKE_CONFIG = Path(__file__).with_name("smoke.yaml")
#: What ``--backend fake`` selects: a deterministic label choice (tests and load benches).
FAKE_BACKEND: dict[str, Any] = {"name": "fake", "params": {"mode": "choice"}}
#: The backend ``--backend NAME`` selects, by name: its own default params unless listed here.
BACKEND_OPTION: dict[str, dict[str, Any]] = {FAKE_BACKEND["name"]: FAKE_BACKEND}
#: Blocks an override replaces whole: another backend's params, or another retrieval setting, never mix.
REPLACED_BLOCKS = frozenset({"backend", "retrieval", "sampling"})


class Autoscaling(Params):
    """Ray Serve's ``autoscaling_config`` for one deployment (the keys a platform team sets; checked
    again by Ray's own ``AutoscalingConfig``, so ``max_replicas < min_replicas`` is a config error here).

    Attributes:
        min_replicas / max_replicas: the replica range (``min_replicas: 0`` scales to zero when idle).
        initial_replicas: replicas at deploy time (``None``: `min_replicas`).
        target_ongoing_requests: ongoing requests per replica Serve scales towards.
        upscale_delay_s / downscale_delay_s: how long the load must stay above / below target first.
    """

    min_replicas: int = Field(default=1, ge=0)
    max_replicas: int = Field(default=1, ge=1)
    initial_replicas: int | None = Field(default=None, ge=0)
    target_ongoing_requests: float = Field(default=2.0, gt=0)
    upscale_delay_s: float = Field(default=30.0, ge=0)
    downscale_delay_s: float = Field(default=600.0, ge=0)

    def ray_config(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)

    @model_validator(mode="after")
    def _ray_accepts_it(self) -> Autoscaling:
        from ray.serve.config import AutoscalingConfig

        try:
            AutoscalingConfig.model_validate(self.ray_config())
        except ValueError as e:  # pydantic's ValidationError: Ray's own rule, in its words
            message = e.errors()[0]["msg"] if hasattr(e, "errors") else str(e)
            raise ValueError(str(message).removeprefix("Value error, ")) from None
        return self


class DeploymentOptions(Params):
    """Ray Serve options of one deployment.

    Attributes:
        num_replicas: fixed replica count (ignored when `autoscaling` is given).
        autoscaling: Ray Serve's ``autoscaling_config`` (`Autoscaling`: min_replicas, max_replicas,
            target_ongoing_requests...); replaces `num_replicas`.
        num_cpus / num_gpus: per replica; fractional CPUs so that three deployments fit on 2 cores.
        max_ongoing_requests: concurrent requests per replica.
        max_queued_requests: requests waiting for a replica; beyond it callers get 429/503 at once
            (``-1``: unbounded, which can hang clients under overload).
        graceful_shutdown_timeout_s: how long a stopping replica may finish its in-flight requests.
        request_router: Ray Serve's ``request_router_config`` for calls to this deployment. A caller
            whose replicas are all busy retries with exponential backoff (Serve's default: up to 0.5 s),
            which leaves freed slots idle under heavy load; ``max_backoff_s: 0.05`` keeps them busy.
    """

    num_replicas: int = Field(default=1, ge=1)
    autoscaling: Autoscaling | None = None
    num_cpus: float = Field(default=0.25, ge=0.0)
    num_gpus: float = Field(default=0.0, ge=0.0)
    max_ongoing_requests: int = Field(default=16, ge=1)
    max_queued_requests: int = Field(default=64, ge=-1)
    graceful_shutdown_timeout_s: float = Field(default=20.0, ge=0.0)
    request_router: dict[str, Any] | None = None

    def ray_options(self) -> dict[str, Any]:
        """Keyword options for ``Deployment.options``."""
        opts: dict[str, Any] = {
            "ray_actor_options": {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus},
            "max_ongoing_requests": self.max_ongoing_requests,
            "max_queued_requests": self.max_queued_requests,
            "graceful_shutdown_timeout_s": self.graceful_shutdown_timeout_s,
        }
        if self.request_router is not None:
            opts["request_router_config"] = dict(self.request_router)
        if self.autoscaling is not None:
            opts["autoscaling_config"] = self.autoscaling.ray_config()
        else:
            opts["num_replicas"] = self.num_replicas
        return opts

    @property
    def admission_limit(self) -> int | None:
        """The calls an ingress replica may have in flight to this deployment (`serve.admission`): all its
        replicas' ``max_ongoing_requests`` (with autoscaling, at ``max_replicas``) plus
        ``max_queued_requests`` (``None``: unbounded, ``max_queued_requests: -1``)."""
        if self.max_queued_requests < 0:
            return None
        replicas = self.num_replicas
        if self.autoscaling is not None:
            replicas = self.autoscaling.max_replicas
        return replicas * self.max_ongoing_requests + self.max_queued_requests


class GeneratorOptions(DeploymentOptions):
    """The generator deployment: also how requests are batched (`serve.batch`), and where a
    tensor-parallel vLLM engine's GPUs come from.

    Attributes:
        placement_group_strategy: with ``tensor_parallel_size > 1``, how each replica's GPU bundles are
            placed (``STRICT_PACK``: all ranks of a replica on one node, where its GPUs share a fast link).
    """

    num_cpus: float = Field(default=1.0, ge=0.0)
    max_ongoing_requests: int = Field(default=32, ge=1)
    max_batch_size: int = Field(default=8, ge=1)
    batch_wait_timeout_s: float = Field(default=0.02, ge=0.0)
    placement_group_strategy: Literal["PACK", "STRICT_PACK", "SPREAD", "STRICT_SPREAD"] = "STRICT_PACK"

    def ray_options(self, tensor_parallel_size: int = 1) -> dict[str, Any]:
        """`DeploymentOptions.ray_options`; with `tensor_parallel_size` > 1, one placement-group bundle per
        tensor-parallel rank (``{"GPU": 1}``, the replica's CPUs in the first, where Serve starts the
        replica): vLLM's Ray executor starts one worker per bundle of the replica's group. The replica
        itself then holds no GPU (its ``ray_actor_options`` must fit in the first bundle)."""
        opts = super().ray_options()
        if tensor_parallel_size > 1:
            opts["ray_actor_options"] = {"num_cpus": self.num_cpus, "num_gpus": 0.0}
            opts["placement_group_bundles"] = ([{"CPU": self.num_cpus, "GPU": 1.0}]
                                               + [{"GPU": 1.0}] * (tensor_parallel_size - 1))
            opts["placement_group_strategy"] = self.placement_group_strategy
        return opts

    @model_validator(mode="after")
    def _room_for_a_batch(self) -> GeneratorOptions:
        # Serve sends a replica at most max_ongoing_requests calls: a larger batch could never fill.
        if self.max_ongoing_requests < self.max_batch_size:
            raise ValueError(f"max_ongoing_requests={self.max_ongoing_requests} is below max_batch_size="
                             f"{self.max_batch_size}; batches could never fill")
        return self


class IngressOptions(DeploymentOptions):
    """The HTTP ingress: rejects with 429 + ``Retry-After`` when its queue is full."""

    max_ongoing_requests: int = Field(default=64, ge=1)
    max_queued_requests: int = Field(default=256, ge=-1)
    retry_after_s: float = Field(default=1.0, ge=0.0)


class Deployments(Params):
    ingress: IngressOptions = IngressOptions()
    retriever: DeploymentOptions = DeploymentOptions()
    generator: GeneratorOptions = GeneratorOptions()


class AuthConfig(Params):
    """API keys: ``$BIORAB_API_KEYS`` (comma-separated) and/or `api_keys_file` (one key per line)."""

    enabled: bool = True
    api_keys_file: str | None = None


class Limits(Params):
    """Request limits (see docs/serve.md).

    Attributes:
        max_body_bytes: larger request bodies get 413.
        max_input_chars: longer inputs (the instance text, or the last user message) get 422.
        max_k: the largest ``k`` a request may ask for.
        max_tokens: the largest ``max_tokens`` (``max_completion_tokens``) a chat request may ask for:
            a generation cannot be stopped once it runs on the transformers backend.
        max_labels / max_label_chars: the most labels a `/v1/ral` request may send, and the longest one
            (each label is scored as a continuation of the prompt: cost grows with labels x tokens).
        context_tokens: the model's context in tokens (``None``: the backend's own, if it has one);
            prompts that do not fit after retrieval get 400 with the numbers.
    """

    max_body_bytes: int = Field(default=65_536, ge=256)
    max_input_chars: int = Field(default=8_000, ge=1)
    max_k: int = Field(default=16, ge=1)
    max_tokens: int = Field(default=4_096, ge=1)
    max_labels: int = Field(default=64, ge=1)
    max_label_chars: int = Field(default=200, ge=1)
    context_tokens: int | None = Field(default=None, ge=1)


class HttpConfig(Params):
    """Where `biorab serve` listens (``serve run`` reads ``http_options`` of serve_config.yaml instead);
    `request_timeout_s` is also every request's deadline at the ingress."""

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    request_timeout_s: float | None = Field(default=120.0, gt=0)
    #: A client that sends its timeout (``X-Stainless-Read-Timeout``...) gets its answer or a 503 this much
    #: before it would give up (see `serve.deadlines`).
    deadline_margin_s: float = Field(default=1.0, ge=0.0)



class CacheConfig(Params):
    """Content-keyed caches: retrieval hits (on by default) and generations (off: a server that replays
    cached answers hides load from benchmarks and sampling from users)."""

    dir: str | None = None
    hits: bool = True
    generations: bool = False


NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class TracingConfig(Params):
    """MLflow traces of served answers (`serve.tracing`): off by default; when on, a `sample_rate`
    fraction of answers is written into `experiment` at ``mlflow_tracking_uri`` (``None``:
    ``$MLFLOW_TRACKING_URI``), with the RAL's name and adapter version as tags."""

    enabled: bool = False
    sample_rate: float = Field(default=0.1, ge=0.0, le=1.0)
    experiment: str = "biorab-serve"
    seed: int | None = None


class RALSpec(Params):
    """One entry of ``rals:`` in a serve config file, as written: what it leaves out comes from the file's
    top level (`ServeConfigFile.endpoint` resolves it into a `RALConfig`).

    Attributes:
        name: the ``model`` id clients send (unique in the config).
        adapter: a PEFT folder or MLflow model URI on the base model (``None``: the base model).
        backend: the model (``None``: the top-level backend). RALs with the same backend block share one
            generator deployment, i.e. one engine: their adapters are applied per request (vLLM's
            ``LoRARequest``, PEFT adapter switching on transformers).
        retrieval: the retrieval setting, its ``method`` included (``None``: the top-level one).
        dataset / task / labels: as at the top level (``None``: the top-level ones).
    """

    name: str = Field(pattern=NAME_PATTERN)
    adapter: str | None = None
    backend: BackendSpec | None = None
    retrieval: RetrievalSpec | None = None
    dataset: str | None = None
    task: str | None = None
    labels: tuple[str, ...] | None = None


class RALSettings(Params):
    """What one RAL answers with: a `RALConfig` less its name; at the top level of a serve config file,
    the one RAL's settings or the defaults of its ``rals:`` entries.

    Attributes:
        dataset: the dataset whose template, label set and retrieval corpus are used.
        task: for bring-your-own datasets without a template, the task whose template to use.
        labels: override the template's label space (closed tasks).
        data_dir / seed: where the dataset lies and the seed of its slices, as in a run config.
        retrieval: one retrieval entry of a run config (testbed, retriever, k, template, probe...).
        backend / sampling / parser: as in a run config.
        adapter: a PEFT adapter on top of the backend's model: a local folder or an MLflow model URI
            (``models:/NAME@ALIAS``, ``models:/NAME/VERSION``, ``runs:/ID/PATH``), resolved inside the
            generator replica.
    """

    dataset: str
    task: str | None = None
    labels: tuple[str, ...] | None = None
    data_dir: str | None = None
    seed: int = 0
    retrieval: RetrievalSpec = RetrievalSpec()
    backend: BackendSpec = BackendSpec()
    adapter: str | None = None
    sampling: SamplingParams = SamplingParams()
    parser: ParserMode = "robust"

    @property
    def base_model(self) -> str:
        return str(self.backend.params.get("model", "default"))

    @property
    def tensor_parallel_size(self) -> int:
        """GPUs per generator replica: the ``tensor_parallel_size`` of a backend with
        `Capabilities.tensor_parallel` (``vllm``), else 1."""
        from biorab.common.registry import BACKENDS

        # an unknown name is not refused here but by `check_components`, which names the known ones
        if self.backend.name not in BACKENDS or not capabilities_of(self.backend.name).tensor_parallel:
            return 1
        return int(self.backend.params.get("tensor_parallel_size", 1))


class RALConfig(RALSettings):
    """One served RAL, resolved: its name (the ``model`` id of the OpenAI endpoints) and what it answers
    with. It holds nothing of the endpoint (auth, limits, deployments: `EndpointConfig`)."""

    name: str = Field(pattern=NAME_PATTERN)


class EndpointSettings(Params):
    """What the endpoint serves its RALs with: one for all of them.

    Attributes:
        name: the Serve application name (a file without ``rals:``: also its one RAL's name).
        mlflow_tracking_uri: the MLflow tracking/registry URI of adapters and traces (``None``: MLflow's
            default, ``$MLFLOW_TRACKING_URI``).
        cache / auth / limits / http / ray / deployments: `CacheConfig`, `AuthConfig`, `Limits`,
            `HttpConfig`, the Ray settings and the options of each deployment (`Deployments`).
        max_loaded_adapters: with ``rals:``, the adapters an engine holds at once (PEFT: loaded adapters,
            least recently used unloaded beyond it; vLLM: ``max_loras`` and ``max_cpu_loras``).
        tracing: sampled MLflow traces of served answers (`TracingConfig`, off by default).
    """

    name: str = Field(default="biorab-ral", pattern=NAME_PATTERN)
    mlflow_tracking_uri: str | None = None
    cache: CacheConfig = CacheConfig()
    auth: AuthConfig = AuthConfig()
    limits: Limits = Limits()
    http: HttpConfig = HttpConfig()
    ray: RaySettings = RaySettings()
    deployments: Deployments = Deployments()
    max_loaded_adapters: int = Field(default=4, ge=1)
    tracing: TracingConfig = TracingConfig()


class EndpointConfig(EndpointSettings):
    """The endpoint and the RALs behind it, resolved once when the config loads (`load_serve_config`).

    Attributes:
        rals: the served RALs, each a whole `RALConfig`; the first is the default of requests that name
            no model (``/v1/ral``).
        per_call_adapters: the file lists ``rals:``: a RAL's adapter travels with each of its calls to an
            engine its RAL may share (unmerged, `serve.adapters`). Without ``rals:`` the one RAL's adapter
            is its engine's own (merged into the weights on transformers), which keys generations
            differently, so the two forms stay apart even for one RAL.
    """

    rals: tuple[RALConfig, ...] = Field(min_length=1)
    per_call_adapters: bool = False

    @model_validator(mode="after")
    def _rals_served_together(self) -> EndpointConfig:
        names = [ral.name for ral in self.rals]
        if len(set(names)) != len(names):
            raise ValueError(f"rals: names must be unique, got {names}")
        if len(names) > 1 and not self.per_call_adapters:  # their engines may be shared: no merged adapter
            raise ValueError(f"rals: {len(names)} RALs behind one endpoint switch their adapters per call "
                             "(per_call_adapters: true)")
        return self


class ServeConfigFile(EndpointSettings, RALSettings):
    """A serve config file as written: the endpoint's settings, one RAL's settings flat at the top level,
    and optionally ``rals:`` entries (`RALSpec`) that take what they leave out from the top level.
    `endpoint` turns it into the `EndpointConfig` every other module uses.

    Attributes:
        rals: several named RALs behind this endpoint; empty: one RAL, named `name`.
    """

    rals: tuple[RALSpec, ...] = ()

    def endpoint(self, path: str | Path | None = None) -> EndpointConfig:
        """The endpoint with its RALs resolved: without ``rals:``, one RAL named `name` with the top-level
        settings; with them, each entry over the top-level settings (its ``adapter`` its own, given or
        not). An invalid endpoint (two RALs of one name) is a `ConfigError` naming `path`."""
        defaults = {key: getattr(self, key) for key in RALSettings.model_fields}
        if not self.rals:
            rals = [RALConfig(**defaults, name=self.name)]
        else:
            rals = [RALConfig(**{**defaults, **{key: value for key, value in spec
                                                if value is not None or key == "adapter"}})
                    for spec in self.rals]
        endpoint = {key: getattr(self, key) for key in EndpointSettings.model_fields}
        return validate_mapping(EndpointConfig, {**endpoint, "rals": tuple(rals),
                                                 "per_call_adapters": bool(self.rals)}, path=path)

    @model_validator(mode="after")
    def _one_adapter_per_ral(self) -> ServeConfigFile:
        if self.rals and self.adapter is not None:
            raise ValueError("adapter: with rals, give each RAL its own adapter")
        return self

    @model_validator(mode="after")
    def _gpus_of_a_tensor_parallel_replica(self) -> ServeConfigFile:
        # With TP > 1 the engine's workers hold the GPUs (one bundle each); a GPU on the replica itself
        # would be one more than the bundles give.
        if self.tensor_parallel_size > 1 and self.deployments.generator.num_gpus > 0:
            raise ValueError(f"deployments.generator.num_gpus: leave it 0 with backend.params."
                             f"tensor_parallel_size {self.tensor_parallel_size}: the generator then gets one "
                             f"GPU bundle per rank")
        return self


def load_serve_config(path: str | Path | None = None, *, backend: str | None = None,
                      overrides: Mapping[str, Any] | None = None) -> EndpointConfig:
    """Read, override and validate a serve config; errors name the file and the dotted key.

    Args:
        path: the YAML file (``None``: the embedded default, ``serve/smoke.yaml``).
        backend: replaces the file's backend: ``fake`` by `FAKE_BACKEND`, another name with its default
            params (`BACKEND_OPTION`).
        overrides: nested keys merged over the file (``{"limits": {"max_k": 4}}``).
    """
    path = Path(path) if path is not None else SMOKE_CONFIG
    data = merge(read_yaml(path), overrides or {}, replace=REPLACED_BLOCKS)
    if backend is not None:
        data["backend"] = BACKEND_OPTION.get(backend, {"name": backend, "params": {}})
    cfg = validate_mapping(ServeConfigFile, data, path=path).endpoint(path)
    for ral in cfg.rals:
        check_components(ral, path)
    return cfg


def merge(base: Mapping[str, Any], over: Mapping[str, Any], *, replace: frozenset[str] = frozenset()
          ) -> dict[str, Any]:
    """`over` merged into `base`, recursively for nested mappings except the top-level keys in `replace`."""
    out = dict(base)
    for key, value in over.items():
        if key not in replace and isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def check_components(cfg: RALConfig, path: str | Path | None = None) -> None:
    """Names and params of one RAL that only the registries know: the backend and its params, the
    retriever, the template variant. Builds nothing and loads no model or vLLM (the GPU path is validated
    here too)."""
    import biorab.generation
    import biorab.retrieval  # noqa: F401  (both register their components on import)
    from biorab.common.build import build_params
    from biorab.common.registry import BACKENDS, RETRIEVERS
    from biorab.tasks import get_template

    try:
        build_params(BACKENDS, cfg.backend.name, cfg.backend.params, key="backend.params", path=path)
        if cfg.retrieval.retrieves:
            build_params(RETRIEVERS, cfg.retrieval.retriever, cfg.retrieval.retriever_params,
                         key="retrieval.params", path=path)
        get_template(cfg.dataset, variant=cfg.retrieval.template, labels=cfg.labels, task=cfg.task)
    except KeyError as e:  # UnknownNameError: its message lists the known names
        raise ConfigError(str(e), path=path) from e
    if cfg.adapter is not None and "adapter_path" not in _backend_fields(cfg.backend.name):
        raise ConfigError(f"backend {cfg.backend.name!r} takes no adapter", key="adapter", path=path)
    if cfg.adapter is not None and "adapter_path" in cfg.backend.params:
        raise ConfigError("set the adapter once: 'adapter' or backend.params.adapter_path",
                          key="adapter", path=path)


def _backend_fields(name: str) -> set[str]:
    from biorab.common.build import params_model
    from biorab.common.registry import BACKENDS

    model = params_model(BACKENDS.get(name))
    return set(model.model_fields) if model is not None else set()

