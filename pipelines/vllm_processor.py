"""The GPU LLM stage through ``ray.data.llm``'s vLLM processor (``resources.llm_engine: vllm_processor``).

Rows whose generation is already in the content-keyed store skip the processor; the rest go through it and
are written back to the store. Backend params used here: ``model`` (hub id or local path) and the optional
``engine_kwargs`` mapping (e.g. ``tensor_parallel_size``, ``max_model_len``); the actor pool's
``pool_size`` is the number of engine replicas and ``batch_size`` the processor's batch size.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from biorab.experiment import ExperimentConfig
from biorab.generation.base import SamplingParams, stable_digest
from biorab.records import Generation
from biorab.runner.rows import COLUMNS, from_table, row_generation, row_prompt, set_generation, to_table
from biorab.runner.stores import GenerationStore, generation_key


def processor_model_digest(config: ExperimentConfig) -> str:
    """The cache identity of the processor's model: model source and engine kwargs."""
    params = config.backend.params
    return stable_digest({"engine": "ray.data.llm/vllm", "model": params.get("model"),
                          "engine_kwargs": params.get("engine_kwargs", {})})


def lookup_batch(batch: pa.Table, digest: str, sampling: dict[str, Any], store: str) -> pa.Table:
    """Fill ``gen_*`` for rows whose generation is cached; mark the rest with their key only."""
    params = SamplingParams(**sampling)
    rows = from_table(batch)
    keys = [generation_key(digest, row_prompt(r), params) for r in rows]
    cached = GenerationStore(store).get_many(keys)
    for row, key in zip(rows, keys, strict=True):
        if key in cached:
            set_generation(row, cached[key], key=key, cached=True)
        else:
            row["gen_key"] = key
    return to_table(rows)


def _preprocess(sampling: SamplingParams) -> Any:
    def preprocess(row: dict[str, Any]) -> dict[str, Any]:
        stops = list(sampling.stops_for(row_prompt(row)))
        return {**row, "prompt": row["prompt"], "sampling_params": {
            "temperature": sampling.temperature, "top_p": sampling.top_p, "max_tokens": sampling.max_tokens,
            "seed": sampling.seed, "stop": stops or None}}

    return preprocess


def _postprocess(row: dict[str, Any]) -> dict[str, Any]:
    gen = Generation(text=row.get("generated_text") or "",
                     prompt_tokens=int(row.get("num_input_tokens") or 0),
                     completion_tokens=int(row.get("num_generated_tokens") or 0), finish_reason="stop")
    out = {k: row.get(k) for k in COLUMNS}
    set_generation(out, gen, key=row["gen_key"], cached=False)
    return out


def store_batch(batch: pa.Table, store: str) -> pa.Table:
    """Cast the processor's rows back to the row schema and store their fresh generations."""
    rows = from_table(batch)
    GenerationStore(store).put_many({r["gen_key"]: row_generation(r) for r in rows if not r["gen_cached"]})
    return to_table(rows)


def vllm_processor_stage(ds: Any, config: ExperimentConfig, generations_store: str) -> Any:
    """``ds`` (rendered rows) → rows with generations, cached ones without touching the engine.

    Prompts are sent as raw completions (no chat template): the templates are few-shot completion prompts
    with stop strings, which LLM_NOTES.md found chat templating to break.
    """
    from ray.data.llm import build_processor, vLLMEngineProcessorConfig

    res = config.resources
    task: dict[str, Any] = {"num_cpus": res.task_num_cpus, "batch_format": "pyarrow"}
    ds = ds.map_batches(lookup_batch, **task, fn_kwargs={"digest": processor_model_digest(config),
                        "sampling": config.sampling.model_dump(), "store": generations_store})
    cached = ds.filter(lambda row: row["gen_cached"] is True)
    todo = ds.filter(lambda row: row["gen_cached"] is not True)
    params = config.backend.params
    engine = vLLMEngineProcessorConfig(
        model_source=params["model"], engine_kwargs=dict(params.get("engine_kwargs", {})),
        concurrency=res.llm.pool_size, batch_size=res.llm.batch_size, chat_template_stage=False,
    )
    preprocess = _preprocess(config.sampling)
    processor: Any = build_processor(engine, preprocess=preprocess, postprocess=_postprocess)
    generated = processor(todo).map_batches(store_batch, **task, fn_kwargs={"store": generations_store})
    return cached.union(generated)
