"""The tuned adapter from a real (local sqlite) MLflow registry: ``models:/biorab-ral-adapter@best`` is
resolved inside the generator to the PEFT folder, loaded on the base model, and changes its outputs.

The generator deployment's class is instantiated directly (no Serve): its constructor is what a replica
runs. Its `run_batch` is what each `serve.batch` batch runs (the batch queue itself needs a replica)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from biorab.common.errors import ConfigError
from biorab.common.records import Prompt
from biorab.generation.base import SamplingParams
from serve.deadlines import Ticket
from tests.support.tiny_causal_lm import build_tiny_lm, build_tiny_lora

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

NAME = "biorab-ral-adapter"


def register_adapter(tracking_uri: str, adapter: Path, *, alias: str = "best") -> str:
    """Log `adapter` as a run artifact and register it as a version of NAME with `alias` (as training
    does). Through a client of its own: a global `mlflow.set_registry_uri` would reach every later
    subprocess of the session through ``$MLFLOW_REGISTRY_URI``."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri, registry_uri=tracking_uri)
    experiment = client.create_experiment("adapters", artifact_location=(Path.cwd() / "art").as_uri())
    run = client.create_run(experiment)
    client.log_artifacts(run.info.run_id, str(adapter), artifact_path="adapter")
    client.set_terminated(run.info.run_id)
    if not client.search_registered_models(filter_string=f"name='{NAME}'"):
        client.create_registered_model(NAME)
    version = client.create_model_version(NAME, source=f"{run.info.artifact_uri}/adapter",
                                          run_id=run.info.run_id)
    client.set_registered_model_alias(NAME, alias, version.version)
    return str(version.version)


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("mlflow")
    base = build_tiny_lm(root / "base")
    lora = build_tiny_lora(base, root / "lora")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)  # the default artifact root (./mlartifacts) lands in the temp dir
        version = register_adapter(uri, lora)
    return {"uri": uri, "base": base, "lora": lora, "version": version, "root": root}


def generator(registry: dict[str, Any], adapter: str | None, tmp_path: Path) -> Any:
    from serve.generator import Generator

    backend = {"name": "transformers", "params": {"model": str(registry["base"]), "dtype": "float32",
                                                  "merge_adapter": False}}
    return Generator.func_or_class(backend, adapter=adapter, tracking_uri=registry["uri"],
                                   cache_dir=str(tmp_path / "cache"), max_batch_size=4)


def test_models_alias_uri_resolves_to_the_registered_peft_folder(registry: dict[str, Any],
                                                                 tmp_path: Path) -> None:
    from serve.adapter import resolve_adapter

    resolved = resolve_adapter(f"models:/{NAME}@best", tracking_uri=registry["uri"], cache_dir=tmp_path)
    folder = Path(resolved.path)
    assert resolved.version == registry["version"] == "1"
    assert (folder / "adapter_config.json").is_file() and folder.is_relative_to(tmp_path / "mlflow-models")
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in registry["lora"].iterdir())
    local = resolve_adapter(str(registry["lora"]))
    assert (local.path, local.version) == (str(registry["lora"]), None)


def test_generator_loads_base_plus_registered_adapter(registry: dict[str, Any], tmp_path: Path) -> None:
    tuned = generator(registry, f"models:/{NAME}@best", tmp_path)
    plain = generator(registry, None, tmp_path)
    info = tuned.info()
    assert (info["base_model"], info["adapter"], info["adapter_version"]) == \
        (str(registry["base"]), f"models:/{NAME}@best", "1")
    assert info["model_digest"] != plain.info()["model_digest"]
    assert info["context_tokens"] == 128  # the tiny model's max_position_embeddings
    prompts = [Prompt("a", "Sentence: aspirin treats headache. Answer:"), Prompt("b", "Question: which drug")]
    sampling = SamplingParams(max_tokens=6)
    with_adapter = asyncio.run(tuned.run_batch([(p, sampling, Ticket()) for p in prompts]))
    without = asyncio.run(plain.run_batch([(p, sampling, Ticket()) for p in prompts]))
    assert [g.error for g in with_adapter] == [None, None]
    assert [g.text for g in with_adapter] != [g.text for g in without]  # the LoRA weights are non-zero
    assert list(tuned.batch_stats()) == [2]  # both prompts went to the backend in one batch


def test_generator_answers_prompts_over_the_context_with_the_numbers(registry: dict[str, Any],
                                                                     tmp_path: Path) -> None:
    plain = generator(registry, None, tmp_path)
    long = Prompt("x", "aspirin " * 200)
    (gen,) = asyncio.run(plain.run_batch([(long, SamplingParams(max_tokens=8), Ticket())]))
    assert gen.error is not None and gen.error.startswith("prompt has ")
    assert gen.error.endswith("with max_tokens=8 it exceeds the model's context of 128 tokens")
    assert list(plain.batch_stats()) == []  # refused before any compute


def test_unknown_alias_is_a_config_error_naming_the_uri(registry: dict[str, Any], tmp_path: Path) -> None:
    from serve.adapter import resolve_adapter

    with pytest.raises(ConfigError, match=rf"adapter 'models:/{NAME}@nope' is not in the MLflow registry"):
        resolve_adapter(f"models:/{NAME}@nope", tracking_uri=registry["uri"], cache_dir=tmp_path)
    with pytest.raises(ConfigError, match="no adapter_config.json found"):
        resolve_adapter(str(tmp_path))
