"""Load and check an experiment config before any work starts.

Pydantic checks shapes and ranges; this module checks the names against the registries, each component's
own params against its ``Params`` and each dataset split against what is staged, so a typo fails in a
second with the key and the file, not an hour into a run.
"""

from __future__ import annotations

from pathlib import Path

from biorab.common.build import build_params
from biorab.common.config_loading import load_config
from biorab.common.errors import BioRABError, ConfigError, UnknownNameError
from biorab.common.registry import BACKENDS, CORPORA, DATASETS, RETRIEVERS, Registry
from biorab.experiment import ExperimentConfig
from biorab.generation.capabilities import capabilities_of, check_engine
from biorab.generation.reasoning import thinking_key


def load_experiment(
    path: str | Path, *, check_data: bool = True, data_dir: str | Path | None = None
) -> ExperimentConfig:
    """Read `path` into an `ExperimentConfig` and check names, component params, splits and data files.

    Args:
        data_dir: replaces the config's ``data_dir`` (the ``--data-dir`` option).

    Raises:
        ConfigError: naming the dotted key (e.g. ``retrieval.1.retriever``) and the file.
    """
    config = load_config(ExperimentConfig, path)
    if data_dir is not None:
        config = config.model_copy(update={"data_dir": str(data_dir)})
    check_experiment(config, path=path, check_data=check_data)
    return config


def _check_name(registry: Registry[object], name: str, key: str, path: str | Path | None) -> None:
    try:  # a component registered with a light params module is not imported (its worker imports it)
        registry.params_of(name)
    except UnknownNameError as e:
        raise ConfigError(str(e), key=key, path=path) from e
    except ImportError as e:  # a lazily registered component whose package is not installed here
        raise ConfigError(f"{registry.kind} {name!r} cannot be loaded here ({e}); install its extra or "
                          "validate on the machine that runs it", key=key, path=path) from e


def check_experiment(
    config: ExperimentConfig, *, path: str | Path | None = None, check_data: bool = True,
    check_resources: bool = True,
) -> None:
    """Check every name and component param of `config` (see `load_experiment`); `check_resources`:
    also that the actor pools fit a local Ray (`check_local_pools`; the sweep's launch checks list
    resources with their own `biorab.runner.checks.launch.resource_problems`)."""
    if check_resources:
        check_local_pools(config, path)
    _check_name(BACKENDS, config.backend.name, "backend.name", path)
    backend_params = build_params(BACKENDS, config.backend.name, config.backend.params, key="backend.params",
                                  path=path)
    check_sampling = getattr(backend_params, "check_sampling", None)
    if check_sampling is not None:  # what the backend's params refuse of the sampling (a reasoning model)
        check_sampling(config.sampling, path=path)
    for i, spec in enumerate(config.retrieval):
        if not spec.retrieves:
            continue
        if spec.testbed not in CORPORA:
            raise ConfigError(f"unknown corpus kind {spec.testbed!r}; known: {', '.join(CORPORA.names())}",
                              key=f"retrieval.{i}.testbed", path=path)
        _check_name(RETRIEVERS, spec.retriever, f"retrieval.{i}.retriever", path)
        build_params(RETRIEVERS, spec.retriever, spec.retriever_params, key=f"retrieval.{i}.params",
                     path=path)
    for i, ds in enumerate(config.datasets):
        _check_name(DATASETS, ds.name, f"datasets.{i}.name", path)
        if check_data:
            _check_split(config, i, path)
    if check_data:
        _check_files(config, path)
    _check_templates(config, path)
    check_engine(config.resources.llm_engine, config.backend.name, engine_asks(config, backend_params),
                 path=path)
    _check_thinking(config, backend_params, path)
    _check_tensor_parallel(config, path)
    from biorab.runner.plan.experiment_source import experiment_sources

    for source in experiment_sources():
        source.check(config, path=path, check_data=check_data)


def check_local_pools(config: ExperimentConfig, path: str | Path | None) -> None:
    """Actor pools that hold every CPU of a local Ray leave none for the render/parse/write tasks, and Ray
    Data then waits forever without an error (docs/notes/ray_on_small_machines.md): refused. A check here,
    not a validator of the config model, so that a sweep's expansion does not stop at it: `biorab validate`
    and `biorab sweep` list it with the grid's other problems."""
    res = config.resources
    if res.address is not None:
        return
    need = res.llm.pool_size * res.llm.num_cpus + res.task_num_cpus
    if any(spec.retrieves for spec in config.retrieval):
        need += res.retrieval.pool_size * res.retrieval.num_cpus
    if need > res.num_cpus:
        raise ConfigError(f"the actor pools and tasks need {need:g} CPUs but the local Ray has "
                          f"resources.num_cpus={res.num_cpus}; lower the pools' num_cpus/pool_size or raise "
                          "resources.num_cpus (logical CPUs may exceed the cores)", key="resources",
                          path=path)


def _check_tensor_parallel(config: ExperimentConfig, path: str | Path | None) -> None:
    """A ``vllm`` engine in a GPU actor sees only the actor's GPUs: tensor parallelism over more GPUs than
    ``resources.llm.num_gpus`` would fail when the engine starts on the cluster, so it is refused here."""
    if config.resources.llm_engine != "actors" or not capabilities_of(config.backend.name).tensor_parallel:
        return
    tp = int(config.backend.params.get("tensor_parallel_size", 1))
    gpus = config.resources.llm.num_gpus
    if gpus and tp > gpus:
        raise ConfigError(f"backend.params.tensor_parallel_size={tp} needs {tp} GPUs per LLM actor but "
                          f"resources.llm.num_gpus={gpus:g}; set both to the same number",
                          key="resources.llm.num_gpus", path=path)


def engine_asks(config: ExperimentConfig, params: object) -> dict[str, str]:
    """What the run asks of its LLM engine beyond plain generation (`biorab.generation.capabilities.Feature`
    → the key that asks it), for `check_engine`; `params`: the backend's validated params."""
    asks: dict[str, str] = {}
    if getattr(params, "adapter_path", None):
        asks["adapters"] = "backend.params.adapter_path"
    if getattr(params, "batch_invariant", False):
        asks["batch_invariance"] = "backend.params.batch_invariant"
    if config.sampling.score_labels:
        asks["label_scoring"] = "sampling.score_labels"
    probing = [i for i, spec in enumerate(config.retrieval) if spec.probes]
    if probing:
        asks["probes"] = f"retrieval.{probing[0]}.awareness_probe"
    if getattr(params, "chat", False):
        asks["chat"] = "backend.params.chat"
    elif config.drugmech is not None:  # its prompts are chat messages, each run sampled with its own seed
        asks["chat"] = "drugmech"
    thinking = thinking_key(params)
    if thinking is not None:
        asks["thinking"] = thinking
    return asks


#: Why label scoring and a thinking model do not mix (`_check_thinking`).
THINKING_SCORING = (
    "sampling.score_labels on a thinking model scores each label's log-prob right after the prompt, where "
    "the model would first write its reasoning: not the answer it gives (lm-evaluation-harness refuses "
    "log-likelihood tasks with thinking enabled for the same reason). Set sampling.score_labels: false "
    "(the answer is then parsed after the reasoning), or configure the backend without thinking"
)


def _check_thinking(config: ExperimentConfig, params: object, path: str | Path | None) -> None:
    """Label scoring skips a thinking model's reasoning (`THINKING_SCORING`), so the two are refused
    together (an engine that cannot apply thinking at all is `check_engine`'s)."""
    if thinking_key(params) is not None and config.sampling.score_labels:
        raise ConfigError(THINKING_SCORING, key="sampling.score_labels", path=path)


#: Echo label scoring through a server and the in-process engines' scoring read different token sequences.
ECHO_SCORING_CAVEAT = (
    "label log-probs through backend openai (label_scoring: echo) are not comparable with the in-process "
    "engines' for the same labels: echo sums the tokens of prompt + label that start inside the label, "
    "the engines score the label's own tokens after the prompt's, so a token spanning the boundary is "
    "counted differently (measured up to 9.39 nats apart on SmolLM2, docs/generation.md). AUROC/AUPRC "
    "(Table 6) of this run compare only with runs scored the same way"
)


def config_warnings(config: ExperimentConfig) -> list[str]:
    """What a valid config still does differently from what a reader may assume (printed by `biorab
    validate` and `biorab run`, not refused)."""
    out = []
    if (capabilities_of(config.backend.name).server_client and config.sampling.score_labels
            and config.backend.params.get("label_scoring") == "echo"):
        out.append(ECHO_SCORING_CAVEAT)
    return out


def _check_split(config: ExperimentConfig, i: int, path: str | Path | None) -> None:
    from biorab.datasets import dataset_splits

    ds = config.datasets[i]
    splits = dataset_splits(ds.name, data_dir=config.data_dir)
    if ds.split not in splits:
        raise ConfigError(f"dataset {ds.name!r} has no split {ds.split!r}; staged: {', '.join(splits)}",
                          key=f"datasets.{i}.split", path=path)


def _check_files(config: ExperimentConfig, path: str | Path | None) -> None:
    """Every data file the cells read exists (a config can be valid and still find no data on a cluster
    node: this is the check that names the file and the fix)."""
    from biorab.runner.checks.data_needs import missing_files
    from biorab.runner.checks.preflight import data_root

    data_root(config, path=path)  # a data folder that is not there is named by its key, as `run` names it
    try:
        missing = missing_files(config)
    except ConfigError as e:  # no data folder at all: say which config needed it
        raise ConfigError(str(e), path=path) from e
    if missing:
        first = missing[0]
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise ConfigError(f"data file {first.path} not found ({first.dataset} {first.split} split){more}; "
                          f"run `biorab data fetch {first.dataset}` or pass --data-dir DIR (or set "
                          "$BIORAB_DATA_DIR, or data_dir: in the config)",
                          key=first.key, path=path)


def _check_templates(config: ExperimentConfig, path: str | Path | None) -> None:
    """Each (dataset, template, parser) fits the dataset's task (`biorab.runner.checks.task_fit`): a misfit
    would make every answer a silent parse failure."""
    from biorab.common.registry import dataset_task
    from biorab.runner.checks.task_fit import fit_problems
    from biorab.tasks import get_template

    for i, spec in enumerate(config.retrieval):
        for ds in config.datasets:
            try:
                get_template(ds.name, variant=spec.template, task=dataset_task(ds.name))
            except ConfigError:
                raise
            except (BioRABError, KeyError, ValueError) as e:
                raise ConfigError(f"no template variant {spec.template!r} for {ds.name!r}: {e}",
                                  key=f"retrieval.{i}.template", path=path) from e
            misfit = fit_problems(ds.name, spec.template, config.parser, probes=bool(spec.probes))
            if misfit:
                raise ConfigError(misfit[0], key=f"retrieval.{i}.template", path=path)
