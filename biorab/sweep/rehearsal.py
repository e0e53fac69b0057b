"""`--rehearse`: a sweep made runnable on this machine, with every substitution named.

Every cell keeps its real data, corpora, retrieval, prompts, parsing, scoring, attribution and report;
what the machine cannot provide is replaced, and each replacement is a `Substitution` printed at the top
and written to ``rehearsal.json`` (and into each run's ``summary.json``):

- each model profile → the fake engine in mode ``constraint`` (an answer drawn from the prompt's own
  constraint, so every parser and metric runs), named ``rehearsal:<profile>`` (its cache digest can never
  be a real model's);
- the resources → a local Ray of this machine's CPUs, no GPU (pool sizes of the laptop profile, the
  sweep's batch sizes kept);
- the tracking server → a local MLflow store (``sqlite:///<rehearsal dir>/mlflow.db``);
- a dense encoder that cannot be loaded here → the packaged MiniLM, with ``stand_in_for`` naming the real
  one, so two encoders on one stand-in stay two cells (the cell fingerprint differs; the hits are one);
- outputs → ``<root>/<sweep>`` (default root ``runs/rehearsal``), caches → ``<cache dir>/rehearsal``:
  nothing a rehearsal writes is read back by a real run;
- DrugMech prompts carry no output constraint (a real model answers them in free text), so each row gets
  the answer options of its prompt kind as one (``drugmech.answer_constraint``,
  `biorab.drugmech.parsing.answer_options`), for the fake to draw from: answers that parse, sometimes right.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from biorab.sweep.config import ModelProfile, RetrieverProfile, SweepConfig

#: Default root of rehearsal outputs (relative to the working directory), apart from any real run's.
REHEARSAL_ROOT = "runs/rehearsal"
#: The cache namespace of rehearsals: a folder under the real cache root.
REHEARSAL_CACHE = "rehearsal"
#: The fake engine's mode in a rehearsal (see `biorab.generation.fake`).
FAKE_MODE = "constraint"
#: Written beside the rehearsal's runs: the substitutions and what the real sweep would need.
REHEARSAL_FILE = "rehearsal.json"
#: Dense params that select the encoder: dropped when MiniLM stands in.
_ENCODER_KEYS = ("encoder", "model", "query_model", "doc_model", "pooling", "normalize", "max_length")


@dataclass(frozen=True)
class Substitution:
    """One thing a rehearsal replaced: what (``model``, ``encoder``...), its name, real and stand-in."""

    what: str
    name: str
    real: str
    stand_in: str

    def line(self) -> str:
        return f"replaced {self.what} {self.name}: {self.real} -> {self.stand_in}"


def rehearsal_cache_dir() -> Path:
    """The rehearsal's cache root: ``<cache dir>/rehearsal`` (the CLI points ``$BIORAB_CACHE_DIR`` at it,
    for itself and the local Ray it starts); unchanged when the cache dir already is one."""
    from biorab.common.paths import cache_dir

    root = cache_dir()
    return root if root.name == REHEARSAL_CACHE else root / REHEARSAL_CACHE


def rehearse(sweep: SweepConfig, *, output_dir: str | Path | None = None
             ) -> tuple[SweepConfig, list[Substitution]]:
    """`sweep` with every substitution of the module docstring applied, and the substitutions."""
    subs: list[Substitution] = []
    used_models = list(dict.fromkeys(m for block in sweep.matrix for m in block.models))
    models = {}
    for name in used_models:
        profile = sweep.all_models()[name]
        models[name] = _fake_profile(name, profile)
        subs.append(Substitution("model", name, f"{profile.backend} {profile.model or ''}".strip(),
                                 f"fake ({FAKE_MODE})"))
    retrievers = {}
    for name, rprofile in sweep.all_retrievers().items():
        stood_in = _encoder_stand_in(rprofile)
        if stood_in is not None:
            retrievers[name] = stood_in
            real = str(stood_in.params["stand_in_for"])
            subs.append(Substitution("encoder", name, real, "minilm (packaged)"))
    resources, root, uri = _local_parts(sweep.resources, sweep.name, sweep.tracking.uri, sweep.output_dir,
                                        output_dir, subs)
    tracking = sweep.tracking.model_copy(update={"uri": uri})
    out = sweep.model_copy(update={
        "models": {**sweep.models, **models},
        "retrievers": {**sweep.retrievers, **retrievers},
        "resources": resources,
        "tracking": tracking,
        "output_dir": str(root),
        "drugmech": _drugmech_answers(sweep.drugmech, sweep.name, subs),
    })
    return SweepConfig.model_validate(out.model_dump(mode="json")), subs


def _local_parts(real: dict[str, Any], name: str, real_uri: str | None, real_root: str,
                 output_dir: str | Path | None, subs: list[Substitution]) -> tuple[dict[str, Any], Path, str]:
    """The local resources, the rehearsal's root and its MLflow store for a sweep or run called `name`;
    each substitution appended to `subs`."""
    resources = _local_resources(real)
    subs.append(Substitution("resources", "cluster", _describe(real),
                             f"local Ray, {resources['num_cpus']} CPUs, no GPU"))
    root = Path(output_dir) if output_dir is not None else Path(REHEARSAL_ROOT)
    uri = f"sqlite:///{root.expanduser().resolve() / name / 'mlflow.db'}"
    subs.append(Substitution("tracking", "server", real_uri or "(default)", uri))
    subs.append(Substitution("outputs", "root", real_root, str(root)))
    return resources, root, uri


def _drugmech_answers(drugmech: dict[str, Any] | None, name: str, subs: list[Substitution]
                      ) -> dict[str, Any] | None:
    """A ``drugmech`` section whose rows carry their answer options (the module docstring), the
    substitution appended to `subs`; `None` stays `None`."""
    if drugmech is None:
        return None
    subs.append(Substitution("answers", f"drugmech of {name}", "free text (no output constraint)",
                             "the answer options of each prompt kind (output constraint)"))
    return {**drugmech, "answer_constraint": True}


def _fake_profile(name: str, profile: ModelProfile) -> ModelProfile:
    """The fake engine for `profile`: its size (the planner's GPU-hours), DrugMech overrides kept."""
    return ModelProfile(backend="fake", params={"mode": FAKE_MODE, "name": f"rehearsal:{name}"},
                        size_b=profile.size_b, drugmech=profile.drugmech)


def _encoder_stand_in(profile: RetrieverProfile) -> RetrieverProfile | None:
    """MiniLM for a dense profile whose encoder cannot be loaded here (`None`: it loads, or not dense)."""
    from biorab.runner.checks.launch import encoder_refs
    from biorab.runner.checks.loadable import why_not_loadable

    if profile.retriever != "dense":
        return None
    refs = encoder_refs("dense", profile.params)
    if not any(why_not_loadable(ref, what="encoder") for ref in refs):
        return None
    real = str(profile.params.get("encoder") or profile.params.get("model") or "+".join(refs))
    params = {k: v for k, v in profile.params.items() if k not in _ENCODER_KEYS}
    return profile.model_copy(update={"params": {**params, "encoder": "minilm", "stand_in_for": real}})


def _local_resources(real: dict[str, Any]) -> dict[str, Any]:
    """The laptop profile (`ResourcesConfig`'s defaults) on this machine's CPUs; the batch sizes kept."""
    out: dict[str, Any] = {"num_cpus": max(2, os.cpu_count() or 2)}
    for stage in ("retrieval", "llm"):
        batch = (real.get(stage) or {}).get("batch_size")
        if batch is not None:
            out[stage] = {"batch_size": batch}
    return out


def _describe(resources: dict[str, Any]) -> str:
    llm = resources.get("llm") or {}
    where = resources.get("address") or "local"
    return f"{where}, llm pool {llm.get('pool_size', 1)} x {llm.get('num_gpus', 0)} GPU"


def write_rehearsal_file(sweep_dir: Path, subs: list[Substitution], needs: dict[str, Any] | None) -> Path:
    """``rehearsal.json``: the substitutions and (after the run) what the real sweep would need."""
    import json

    from biorab.common.atomic_files import write_text_atomic

    path = sweep_dir / REHEARSAL_FILE
    data = {"substitutions": [asdict(s) for s in subs], "real_sweep_needs": needs}
    write_text_atomic(path, json.dumps(data, indent=2) + "\n")
    return path


def mark_summaries(run_dirs: list[Path], subs: list[Substitution]) -> None:
    """Each run's ``summary.json`` says it is a rehearsal and what was replaced."""
    import json

    from biorab.common.atomic_files import write_text_atomic

    for run_dir in run_dirs:
        path = run_dir / "summary.json"
        if not path.is_file():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        data["rehearsal"] = {"substitutions": [asdict(s) for s in subs]}
        write_text_atomic(path, json.dumps(data, indent=2) + "\n")


def real_sweep_needs(real: SweepConfig, *, path: str | Path | None, rehearsal_dir: Path) -> dict[str, Any]:
    """What the real sweep would need, by the planner (`biorab.sweep.cost_estimate.plan_sweep`) on the
    real config: cells, rows, prompt tokens (each model's tokenizer where it is here, else estimated from
    length), GPU-hours; disk is this rehearsal's outputs scaled from its rows to every row."""
    from biorab.sweep.cost_estimate import plan_sweep

    plan = plan_sweep(real, path=path, list_cells=True)
    cells = plan.cell_estimates or []
    rows = sum(c.rows for c in cells)
    written_rows, disk = _rows_and_bytes(rehearsal_dir)
    return {
        "cells": plan.cells,
        "rows": rows,
        "prompt_tokens": sum(c.prompt_tokens for c in cells),
        "tokens_exact": bool(cells) and all(c.tokens_exact for c in cells),
        "disk_bytes": int(disk * rows / written_rows) if written_rows else 0,
        "rehearsal_rows": written_rows,
        "rehearsal_bytes": disk,
        "gpu_hours": plan.gpu_hours,
        "gpu": plan.gpu,
        "plan_errors": plan.errors,
    }


def _rows_and_bytes(sweep_dir: Path) -> tuple[int, int]:
    """Rows in the rehearsal's cells (their parquet metadata) and bytes of its run folders."""
    import pyarrow.parquet as pq

    rows = 0
    for f in sweep_dir.glob("*/predictions/*.parquet"):  # one scored file per cell
        rows += pq.ParquetFile(f).metadata.num_rows
    size = sum(f.stat().st_size for f in sweep_dir.rglob("*") if f.is_file())
    return rows, size


def rehearse_run(config: Any, *, output_dir: str | Path | None = None) -> tuple[Any, list[Substitution]]:
    """A run config (`biorab.experiment.ExperimentConfig`) rehearsed as one run of a sweep is: its backend
    → the fake engine, resources → local, tracking → a local store, encoders that cannot load → MiniLM,
    outputs → the rehearsal root. Returns the config and the substitutions."""
    from biorab.experiment import BackendSpec, ExperimentConfig, ResourcesConfig

    model = str(config.backend.params.get("model") or config.backend.name)
    subs = [Substitution("model", config.name, f"{config.backend.name} {model}", f"fake ({FAKE_MODE})")]
    backend = BackendSpec(name="fake", params={"mode": FAKE_MODE, "name": f"rehearsal:{model}"})
    retrieval = []
    for spec in config.retrieval:
        profile = RetrieverProfile(retriever=spec.retriever, params=dict(spec.params))
        stood_in = _encoder_stand_in(profile) if spec.retrieves else None
        if stood_in is not None:
            subs.append(Substitution("encoder", spec.retriever, str(stood_in.params["stand_in_for"]),
                                     "minilm (packaged)"))
            spec = spec.model_copy(update={"params": stood_in.params})
        retrieval.append(spec.model_dump(mode="json"))
    real = config.resources.model_dump(mode="json")
    local, root, uri = _local_parts(real, config.name, config.tracking.uri, config.output_dir, output_dir,
                                    subs)
    resources = ResourcesConfig.model_validate(local)
    data = config.model_dump(mode="json")
    data.update(backend=backend.model_dump(mode="json"), retrieval=retrieval,
                resources=resources.model_dump(mode="json"), output_dir=str(root),
                tracking={**data["tracking"], "uri": uri},
                drugmech=_drugmech_answers(data.get("drugmech"), config.name, subs))
    return ExperimentConfig.model_validate(data), subs
