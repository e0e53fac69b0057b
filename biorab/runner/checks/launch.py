"""Every problem of a launch, listed at once, before any actor starts (`biorab validate` on a sweep file,
the start of `biorab sweep`; `biorab run` stops at the first of `check_experiment`'s): each model, adapter
and encoder the configs name loads here (`biorab.runner.checks.loadable`), each data file exists, each
template and parser fits its dataset's task (`biorab.runner.checks.task_fit`), the resources fit the
machine or cluster, and every other check of `biorab validate` (`check_experiment`).

One problem is one line; the same problem met by several runs (a model shared by 14 runs) is listed once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.common.errors import BioRABError, ConfigError
from biorab.experiment import ExperimentConfig, ResourcesConfig
from biorab.runner.checks.loadable import why_not_loadable


@dataclass(frozen=True)
class LaunchUnit:
    """One run config to check, and where its names come from (``models.llama2-13b`` in a sweep,
    ``backend.params`` in a run config)."""

    label: str
    config: ExperimentConfig
    run: str = ""


def launch_problems(units: Sequence[LaunchUnit], *, path: str | Path | None = None,
                    check_data: bool = True) -> list[str]:
    """Every problem of `units`, in order, each once (see the module docstring)."""
    out: list[str] = []
    for unit in units:
        found = [*model_problems(unit), *encoder_problems(unit)]
        if check_data:
            found += data_file_problems(unit)
        found += template_problems(unit)
        if not found:  # the remaining checks stop at their first problem: run them once the above pass
            found += _validate_problems(unit, path, check_data)
        out += found
    out += resource_problems([u.config.resources for u in units])
    return list(dict.fromkeys(out))


def raise_if_problems(problems: list[str], *, path: str | Path | None) -> None:
    """One `ConfigError` naming every problem, one per line (the CLI prints it and exits 2)."""
    if problems:
        listed = "\n  ".join(problems)
        raise ConfigError(f"{len(problems)} problem(s) found before launch, nothing was started:\n  {listed}",
                          path=path)


def model_problems(unit: LaunchUnit) -> list[str]:
    """The backend's model and adapter, for a backend that loads weights (``vllm``, ``transformers``)."""
    from biorab.common.model_refs import is_mlflow_uri
    from biorab.generation.capabilities import capabilities_of

    backend = unit.config.backend
    if not capabilities_of(backend.name).local_weights:
        return []
    out = []
    model = backend.params.get("model")
    if isinstance(model, str) and (why := why_not_loadable(model, what="model")):
        out.append(f"{unit.label}: {why}")
    adapter = backend.params.get("adapter_path") or backend.params.get("adapter")
    if isinstance(adapter, str) and not is_mlflow_uri(adapter) and (why := why_not_loadable(adapter,
                                                                                              what="adapter")):
        out.append(f"{unit.label}: {why}")
    return out


def encoder_refs(retriever: str, params: dict[str, Any]) -> list[str]:
    """The encoder models a retriever loads: both sides of a ``dense`` one (preset or folders), those of
    a ``hybrid``'s parts; none for the others."""
    if retriever == "hybrid":
        from biorab.retrieval.hybrid import HybridParams

        hp = HybridParams.model_validate({k: v for k, v in params.items() if k in HybridParams.model_fields})
        first, second = hp.first, hp.second
        return [*encoder_refs(first.name, first.params), *encoder_refs(second.name, second.params)]
    if retriever != "dense":
        return []
    from biorab.retrieval.dense import DenseParams, encoder_specs

    query, doc = encoder_specs(DenseParams.model_validate(params))
    return list(dict.fromkeys([query.model, doc.model]))


def encoder_problems(unit: LaunchUnit) -> list[str]:
    """Each encoder of each retrieval setting loads here."""
    out = []
    for i, spec in enumerate(unit.config.retrieval):
        if not spec.retrieves:
            continue
        try:
            refs = encoder_refs(spec.retriever, spec.retriever_params)
        except (BioRABError, ValueError) as e:  # bad params are `check_experiment`'s to name
            out.append(f"{unit.label}: retrieval.{i}: {e}")
            continue
        for ref in refs:
            if why := why_not_loadable(ref, what="encoder"):
                out.append(f"retriever {_retriever_name(spec)}: {why}")
    return out


def _retriever_name(spec: Any) -> str:
    encoder = spec.params.get("encoder")
    return f"{spec.retriever} ({encoder})" if encoder else str(spec.retriever)


def data_file_problems(unit: LaunchUnit) -> list[str]:
    """Each data file the cells read (split files, the training files the corpora are built from)."""
    from biorab.runner.checks.data_needs import missing_files

    if not unit.config.datasets:
        return []
    try:
        missing = missing_files(unit.config)
    except BioRABError as e:  # no data folder at all
        return [f"{unit.label}: {e}"]
    return [f"data file {f.path} not found ({f.dataset} {f.split} split); run `biorab data fetch "
            f"{f.dataset}` or set $BIORAB_DATA_DIR (or data_dir:)" for f in missing]


def template_problems(unit: LaunchUnit) -> list[str]:
    """Each (dataset, template, parser) of the run: the template variant exists for the dataset, is
    written for its task, and the run's parser reads the answers it asks for (`task_fit`)."""
    from biorab.common.registry import DATASETS
    from biorab.runner.checks.task_fit import fit_problems

    out = []
    for spec in unit.config.retrieval:
        for ds in unit.config.datasets:
            if ds.name not in DATASETS:
                continue  # an unknown dataset is named by `check_experiment`
            out += fit_problems(ds.name, spec.template, unit.config.parser, probes=bool(spec.probes))
    return out


def _validate_problems(unit: LaunchUnit, path: str | Path | None, check_data: bool) -> list[str]:
    from biorab.runner.checks.validate import check_experiment

    try:
        check_experiment(unit.config, path=path, check_data=check_data, check_resources=False)
    except BioRABError as e:
        where = f"{unit.label} (run {unit.run!r})" if unit.run else unit.label
        return [f"{where}: {e}"]
    return []


@dataclass(frozen=True)
class Capacity:
    """What a Ray cluster (or the local Ray to be started) offers."""

    cpus: float
    gpus: float
    where: str


def needed(resources: ResourcesConfig) -> tuple[float, float]:
    """(CPUs, GPUs) the pipeline's actor pools hold at once, plus one light task: what must fit."""
    r, llm = resources.retrieval, resources.llm
    cpus = r.pool_size * r.num_cpus + llm.pool_size * llm.num_cpus + resources.task_num_cpus
    gpus = r.pool_size * r.num_gpus + llm.pool_size * llm.num_gpus
    return cpus, gpus


def resource_problems(resources: Iterable[ResourcesConfig], capacity: Capacity | None = None) -> list[str]:
    """The runs whose pools do not fit `capacity` (default: the local Ray a run without an address starts;
    runs with an address are checked against the cluster by `cluster_capacity` once it is joined)."""
    out = []
    for res in resources:
        cap = capacity or (None if res.address else local_capacity(res))
        if cap is None:
            continue
        cpus, gpus = needed(res)
        if cpus > cap.cpus + 1e-9 or gpus > cap.gpus + 1e-9:
            r, llm = res.retrieval, res.llm
            out.append(f"resources: the actor pools need {cpus:g} CPUs and {gpus:g} GPUs (retrieval "
                       f"{r.pool_size} x {r.num_cpus:g} CPU, llm {llm.pool_size} x ({llm.num_cpus:g} CPU, "
                       f"{llm.num_gpus:g} GPU), tasks {res.task_num_cpus:g}); "
                       f"{cap.where} has {cap.cpus:g} CPUs and {cap.gpus:g} GPUs: lower the pools in "
                       "resources:, or point resources.address at a cluster (or rehearse with --rehearse)")
    return list(dict.fromkeys(out))


def local_capacity(resources: ResourcesConfig) -> Capacity:
    """The local Ray `init_ray` starts: `resources.num_cpus` CPUs and the GPUs torch sees here."""
    return Capacity(float(resources.num_cpus), float(_local_gpus()), "the local Ray (resources.num_cpus)")


def cluster_capacity() -> Capacity:
    """The joined Ray cluster's total resources (call after `ray.init`)."""
    import ray

    total = ray.cluster_resources()
    return Capacity(float(total.get("CPU", 0.0)), float(total.get("GPU", 0.0)), "the Ray cluster")


def _local_gpus() -> int:
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return 0
    import torch

    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
