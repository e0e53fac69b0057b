"""`biorab corpus transform`: run Detect-and-Correct or LLM labeling on a testbed corpus alone and write the
transformed corpus (BEIR ``corpus.jsonl``), the true ledger, the transform ledger and its scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from biorab.common.errors import ConfigError

Method = Annotated[str, typer.Option("--method", help="detect_correct (labeled/counterfactual) | llm_label "
                                                      "(unlabeled).")]
BackendConfig = Annotated[Path, typer.Option(
    "--backend-config", help="YAML: a run config (its backend: and sampling: are used) or a backend spec "
                             "{name:, params:}.")]


def corpus_transform(
    dataset: Annotated[str, typer.Option("--dataset", "-d", help="Target dataset.")],
    testbed: Annotated[str, typer.Option("--testbed", help="labeled|unlabeled|counterfactual|...")],
    method: Method,
    backend_config: BackendConfig,
    out: Annotated[Path, typer.Option("--out", help="Folder for the transformed corpus.")],
    rate: Annotated[float | None, typer.Option("--rate", help="Counterfactual rate in [0, 1].")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the testbed and the bootstrap.")] = 0,
    n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples for the CIs.")] = 1000,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="BioRAB data folder.")] = None,
) -> None:
    """Transform a testbed corpus with the paper's method, through the shared generation cache."""
    from biorab.caches import GenerationStore, default_store_paths
    from biorab.common.paths import cache_dir
    from biorab.corpora import build_corpus
    from biorab.generation import build_backend
    from biorab.generation.prepare import prepare_for_backend
    from biorab.methods import score_transform, transform_corpus, write_transformed
    from biorab.methods.corpus_transform import check_method
    from biorab.methods.prompts import PROMPT_VERSION
    from biorab.ral import CachedGenerator

    check_method(method, testbed)
    backend_spec, sampling = _read_backend(backend_config)
    source, truth = build_corpus(testbed, dataset, rate=rate, seed=seed, data_dir=data_dir)
    prepare_for_backend(backend_spec.name, backend_spec.params)
    backend = build_backend(backend_spec.name, backend_spec.params)
    try:
        generator = CachedGenerator(backend, GenerationStore(default_store_paths(cache_dir())[1]),
                                    name=backend_spec.name)
        corpus, ledger = transform_corpus(method, source, generator, sampling)
    finally:
        backend.close()
    write_transformed(out, corpus, truth, ledger, {"source_digest": source.digest,
                                                   "prompt_version": PROMPT_VERSION,
                                                   "generator": generator.model_digest})
    scores = score_transform(truth, ledger, n_boot=n_boot, seed=seed)
    typer.echo(f"wrote {out}: {len(corpus.items)} items, digest {corpus.digest} "
               f"({ledger.cached} of {len(ledger.entries)} generations from the cache)")
    typer.echo(json.dumps({"counts": ledger.counts(), "metrics": {k: v.to_json() for k, v in scores.items()}},
                          sort_keys=True))


def _read_backend(path: Path) -> tuple[Any, Any]:
    from biorab.experiment import BackendSpec
    from biorab.generation.base import SamplingParams

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read the backend config: {e}", path=path) from e
    if not isinstance(data, dict):
        raise ConfigError("the backend config must be a mapping", path=path)
    if "backend" in data:
        return BackendSpec(**data["backend"]), SamplingParams(**data.get("sampling", {}))
    return BackendSpec(**data), SamplingParams()
