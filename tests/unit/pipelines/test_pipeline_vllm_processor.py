"""The GPU profile without vLLM: ``llm_engine: vllm_processor`` config validation, the processor config built
with Ray 2.60's real `vLLMEngineProcessorConfig`, per-request sampling params (structured outputs), the
conversion of processor output rows (errors, finish reasons, stop guard, no caching of failures), and the
tensor-parallel check of the actor path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from biorab.caches import GenerationStore, generation_key
from biorab.common.config_loading import load_config
from biorab.common.errors import ConfigError
from biorab.common.records import Example, Generation, OutputConstraint, Prompt
from biorab.experiment import ExperimentConfig
from biorab.generation.base import SamplingParams
from biorab.ral import RowPipeline
from biorab.ral.specs.rows import example_row, from_table, row_prompt, set_prompt, to_table
from biorab.runner.checks.validate import load_experiment
from pipelines.vllm_processor import (
    lookup_batch,
    make_postprocess,
    make_preprocess,
    processor_engine_kwargs,
    processor_generation,
    request_sampling,
    store_batch,
)


def write(tmp_path: Path, backend: str, extra: str = "") -> Path:
    path = tmp_path / "proc.yaml"
    path.write_text("name: proc\ndatasets: [{name: ade, limit: 2}]\n"
                    f"backend: {backend}\n"
                    "resources: {llm_engine: vllm_processor, address: auto, "
                    "llm: {pool_size: 2, batch_size: 64}}\n"
                    + extra, "utf-8")
    return path


def model_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}", "utf-8")
    return folder


def test_processor_config_from_the_vllm_backend_params(tmp_path: Path) -> None:
    folder = model_dir(tmp_path)
    path = write(tmp_path, f"{{name: vllm, params: {{model: {folder}, tensor_parallel_size: 2, "
                 "engine_args: {max_num_seqs: 32}}}")
    cfg = load_experiment(path, check_data=False)
    model, kwargs, digest = processor_engine_kwargs(cfg)
    assert model == str(folder.resolve())
    assert kwargs == {"revision": None, "dtype": "bfloat16", "seed": 0, "trust_remote_code": False,
                      "enforce_eager": False, "max_model_len": 4096, "tensor_parallel_size": 2,
                      "gpu_memory_utilization": 0.85, "max_num_seqs": 32}
    assert len(digest) == 64
    # a different tensor-parallel degree is a different engine: a different cache identity
    other = write(tmp_path, f"{{name: vllm, params: {{model: {folder}}}}}")
    assert processor_engine_kwargs(load_experiment(other, check_data=False))[2] != digest

    from ray.data.llm import vLLMEngineProcessorConfig  # Ray 2.60's real class (no vLLM needed)

    engine = vLLMEngineProcessorConfig(model_source=model, engine_kwargs=kwargs, concurrency=2, batch_size=64,
                                       chat_template_stage=False, should_continue_on_error=True)
    assert engine.engine_kwargs["tensor_parallel_size"] == 2
    assert engine.get_concurrency() == {"min_size": 1, "max_size": 2}
    assert engine.should_continue_on_error is True and engine.chat_template_stage is False


@pytest.mark.parametrize(
    ("backend", "extra", "key", "cannot"),
    [
        ("{name: transformers}", "", "backend.name", "run backend 'transformers'"),
        ("{name: vllm, params: {model: m, adapter_path: /a}}", "", "backend.params.adapter_path",
         "apply LoRA adapters"),
        ("{name: vllm, params: {model: m, batch_invariant: true}}", "", "backend.params.batch_invariant",
         "set batch_invariant"),
        ("{name: vllm, params: {model: m}}", "sampling: {score_labels: true}\n", "sampling.score_labels",
         "score labels"),
        ("{name: vllm, params: {model: m, chat: true}}", "", "backend.params.chat", "send chat messages"),
        ("{name: vllm, params: {model: m}}",
         "retrieval: [{testbed: negative_awareness, retriever: bm25, template: bm25}]\n",
         "retrieval.0.awareness_probe", "run the awareness probe"),
        # the processor path renders, generates and parses outside the backend: no thinking split/budget
        ("{name: vllm, params: {model: m, thinking: {split: true}}}", "", "backend.params.thinking",
         "apply thinking settings"),
        ("{name: vllm, params: {model: m, thinking: {token_budget: 64}}}", "", "backend.params.thinking",
         "apply thinking settings"),
    ],
)
def test_unsupported_processor_configs_are_refused(
    tmp_path: Path, backend: str, extra: str, key: str, cannot: str
) -> None:
    path = write(tmp_path, backend, extra)
    with pytest.raises(ConfigError) as e:
        load_experiment(path, check_data=False)
    # one message format for every refusal: the engine, what it cannot do, the key that asked, the file
    assert f"llm_engine vllm_processor cannot {cannot}" in str(e.value)
    assert f"key '{key}'" in str(e.value) and str(path) in str(e.value)


def test_params_the_processor_does_not_know_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "{name: vllm, params: {model: m, engine_kwargs: {}}}")
    with pytest.raises(ConfigError) as e:
        load_experiment(path, check_data=False)
    assert "key 'backend.params.engine_kwargs'" in str(e.value)


def test_a_thinking_block_is_refused_on_the_processor_path_and_applied_on_actors(tmp_path: Path) -> None:
    # issue 42 "Done when": the processor cannot split or budget the reasoning, so the one check refuses
    # the block before any work; the same block on the actor path (the in-process vllm backend applies it)
    # passes the same check
    thinking = "{name: vllm, params: {model: m, thinking: {split: true, token_budget: 32}}}"
    with pytest.raises(ConfigError, match="llm_engine vllm_processor cannot apply thinking settings") as e:
        load_experiment(write(tmp_path, thinking), check_data=False)
    assert e.value.key == "backend.params.thinking"
    actors = tmp_path / "actors.yaml"
    actors.write_text(write(tmp_path, thinking).read_text("utf-8").replace("llm_engine: vllm_processor",
                                                                           "llm_engine: actors"), "utf-8")
    cfg = load_experiment(actors, check_data=False)
    assert cfg.backend.params["thinking"] == {"split": True, "token_budget": 32}


def test_check_engine_asks_the_declared_capabilities() -> None:
    from biorab.generation.capabilities import LLM_ENGINES, check_engine

    # the processor's refusals are exactly the six features of issue 42, declared once
    assert set(LLM_ENGINES["vllm_processor"].capabilities.cannot) == {
        "adapters", "batch_invariance", "label_scoring", "probes", "chat", "thinking"}
    check_engine("vllm_processor", "vllm", {})  # nothing asked: nothing refused
    check_engine("actors", "vllm", {"thinking": "backend.params.thinking"})  # the backend applies it
    with pytest.raises(ConfigError) as e:
        check_engine("vllm_processor", "vllm", {"probes": "retrieval.3.awareness_probe"})
    assert str(e.value).startswith("key 'retrieval.3.awareness_probe': llm_engine vllm_processor cannot run "
                                   "the awareness probe: the probe stage is not placed around Ray's engine")


def rendered_row(constraint: OutputConstraint | None, stop: tuple[str, ...] = ("\n\n",)) -> dict[str, Any]:
    example = Example(id="ade/test/0", dataset="ade", task="triple_extraction", split="test", text="t",
                      label="a|effect|b")
    row = example_row("c", 0, example)
    set_prompt(row, Prompt(example_id="ade/test/0", text="Q:", stop=stop, constraint=constraint))
    return row


def test_request_sampling_with_structured_outputs() -> None:
    triples = OutputConstraint(regex=r"[^|\n]+\|(?:effect|dosage)\|[^|\n]+")
    choices = OutputConstraint(choices=("(A)", "(B)"))
    free = SamplingParams(max_tokens=16, stop=("###",), constrained=False)
    assert request_sampling(free, rendered_row(triples)) == {
        "max_tokens": 16, "temperature": 0.0, "top_p": 1.0, "seed": 0, "stop": ["###", "\n\n"],
        "structured_outputs": None}
    constrained = SamplingParams(max_tokens=16, constrained=True)
    assert request_sampling(constrained, rendered_row(triples))["structured_outputs"] == {
        "regex": r"[^|\n]+\|(?:effect|dosage)\|[^|\n]+"}
    assert request_sampling(constrained, rendered_row(choices))["structured_outputs"] == {
        "choice": ["(A)", "(B)"]}
    assert request_sampling(constrained, rendered_row(None))["structured_outputs"] is None


def test_processor_output_rows() -> None:
    params = SamplingParams(max_tokens=4)
    row = {**rendered_row(None), "gen_key": "k1"}
    ok = processor_generation({**row, "generated_text": "a|effect|b", "num_input_tokens": 7,
                               "num_generated_tokens": 3}, params)
    assert (ok["gen_text"], ok["gen_prompt_tokens"], ok["gen_completion_tokens"]) == ("a|effect|b", 7, 3)
    assert (ok["gen_finish_reason"], ok["gen_error"], ok["gen_cached"]) == ("stop", None, False)
    assert ok["gen_key"] == "k1"
    long = processor_generation({**row, "generated_text": "a b c d", "num_generated_tokens": 4}, params)
    assert long["gen_finish_reason"] == "length"
    cut = processor_generation({**row, "generated_text": "x\n\ny", "num_generated_tokens": 4}, params)
    assert (cut["gen_text"], cut["gen_finish_reason"]) == ("x", "stop")
    failed = processor_generation({**row, "__inference_error__": "ValueError: prompt too long"}, params)
    assert failed["gen_error"] == "vllm_processor: ValueError: prompt too long" and failed["gen_text"] == ""


def row_pipeline(tmp_path: Path, sampling: SamplingParams) -> RowPipeline:
    return RowPipeline(plans={}, parts={}, hits_store=tmp_path / "h.sqlite",
                       generations_store=tmp_path / "g.sqlite", backend="vllm", backend_params={},
                       sampling=sampling)


def test_store_batch_caches_only_successful_fresh_generations(tmp_path: Path) -> None:
    """As Ray 2.60 hands them over: a success went through the postprocess (and got an empty
    ``__inference_error__``); a failure bypassed it, with its prompt cut to a snippet by the engine stage."""
    params = SamplingParams(max_tokens=4)
    post = make_postprocess(params)
    pre = make_preprocess(params)
    good = pre({**rendered_row(None), "gen_key": "good"})
    good = {**post({**good, "generated_text": "y", "num_generated_tokens": 1}), "__inference_error__": ""}
    bad = pre({**rendered_row(None), "gen_key": "bad"})
    bad = {**bad, "prompt": "Q", "generated_text": "", "__inference_error__": "RuntimeError: boom"}
    keys = list(dict.fromkeys([*good, *bad]))  # Ray Data fills a column a row lacks with nulls
    batch = pa.Table.from_pylist([{k: r.get(k) for k in keys} for r in (good, bad)])
    out = from_table(store_batch(batch, row_pipeline(tmp_path, params), "digest"))
    assert [r["gen_error"] for r in out] == [None, "vllm_processor: RuntimeError: boom"]
    assert [r["gen_text"] for r in out] == ["y", ""] and [r["prompt"] for r in out] == ["Q:", "Q:"]
    assert [r["gen_key"] for r in out] == ["good", "bad"] and [r["gen_cached"] for r in out] == [False, False]
    assert set(GenerationStore(tmp_path / "g.sqlite").get_many(["good", "bad"])) == {"good"}


def test_lookup_batch_keys_rows_as_the_generate_stage_does(tmp_path: Path) -> None:
    """The processor's lookup is the generate stage's: the key of a row is `generation_key` of the
    processor's digest, the row's prompt and the run's sampling (computed here by hand), a stored
    generation is read back as cached, a missing one leaves only its key."""
    params = SamplingParams(max_tokens=4)
    hit, miss = rendered_row(None), rendered_row(None, stop=("###",))
    hit_key = generation_key("digest", row_prompt(hit), params)
    miss_key = generation_key("digest", row_prompt(miss), params)
    assert hit_key != miss_key
    stored = Generation(text="a|effect|b", completion_tokens=3)
    GenerationStore(tmp_path / "g.sqlite").put_many({hit_key: stored})
    out = from_table(lookup_batch(to_table([hit, miss]), row_pipeline(tmp_path, params), "digest"))
    assert [r["gen_key"] for r in out] == [hit_key, miss_key]
    assert [r["gen_cached"] for r in out] == [True, None]
    assert (out[0]["gen_text"], out[0]["gen_completion_tokens"]) == ("a|effect|b", 3)
    assert out[1]["gen_text"] is None


def test_config_loader_accepts_the_processor_engine(tmp_path: Path) -> None:
    path = write(tmp_path, "{name: vllm, params: {model: m}}")
    assert load_config(ExperimentConfig, path).resources.llm_engine == "vllm_processor"


def test_tensor_parallel_must_fit_the_gpu_actor(tmp_path: Path) -> None:
    path = tmp_path / "tp.yaml"
    body = ("name: tp\ndatasets: [{name: ade}]\n"
            "backend: {name: vllm, params: {model: m, tensor_parallel_size: 2}}\n"
            "resources: {address: auto, llm: {pool_size: 2, num_gpus: %s}}\n")
    path.write_text(body % 1, "utf-8")
    with pytest.raises(ConfigError, match=r"tensor_parallel_size=2 needs 2 GPUs per LLM actor") as e:
        load_experiment(path, check_data=False)
    assert e.value.key == "resources.llm.num_gpus" and str(path) in str(e.value)
    path.write_text(body % 2, "utf-8")
    assert load_experiment(path, check_data=False).resources.llm.num_gpus == 2


def test_cpu_processor_replicas_get_a_cpu_bundle_and_no_tokenizer_pools(tmp_path: Path) -> None:
    from pipelines.vllm_processor import placement

    folder = model_dir(tmp_path)
    cpu = load_experiment(write(tmp_path, f"{{name: vllm, params: {{model: {folder}, device: cpu}}}}"),
                          check_data=False)
    got = placement(cpu)
    assert got["placement_group_config"] == {"bundles": [{"CPU": cpu.resources.llm.num_cpus}]}
    assert (got["tokenize_stage"], got["detokenize_stage"]) == (False, False)
    assert got["runtime_env"]["env_vars"]["VLLM_CPU_KVCACHE_SPACE"] == "2"
    model, kwargs, _ = processor_engine_kwargs(cpu)
    assert kwargs["enforce_eager"] is True and "tensor_parallel_size" not in kwargs
    auto = load_experiment(write(tmp_path, f"{{name: vllm, params: {{model: {folder}}}}}"), check_data=False)
    assert placement(auto) == {}  # the cluster's GPU path keeps Ray's GPU bundles
