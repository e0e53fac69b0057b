"""The engine in the generation key (`engine_digest`), vLLM's LoRA rank from the adapter's own config, and
the deferred backend that keys generations before (or without) loading a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biorab.common.errors import BackendError
from biorab.common.records import Generation, Prompt
from biorab.generation import SamplingParams
from biorab.generation.base import stable_digest
from biorab.generation.deferred import CacheOnlyBackend, DeferredBackend
from biorab.generation.hf.params import TransformersParams
from biorab.generation.model_source import engine_digest
from biorab.generation.vllm.engine import VLLMBackend, engine_kwargs, lora_rank

W = "ab" * 32  # a weights digest


def test_transformers_keeps_the_bare_weights_digest_and_other_engines_are_marked() -> None:
    assert engine_digest(W, "transformers", TransformersParams()) == W  # existing caches stay valid
    assert engine_digest(W, "transformers", TransformersParams(choices_via="grammar")) == stable_digest(
        {"weights": W, "choices_via": "grammar"})  # the key it always had
    vllm = engine_digest(W, "vllm", VLLMBackend.Params())
    assert vllm == stable_digest({"weights": W, "engine": "vllm", "choices_via": "score"}) != W
    assert engine_digest(W, "vllm", VLLMBackend.Params(choices_via="grammar")) not in {vllm, W}
    # the opt-in shares transformers' keys, label rule included
    assert engine_digest(W, "vllm", VLLMBackend.Params(share_cache_across_engines=True)) == W
    shared_grammar = VLLMBackend.Params(share_cache_across_engines=True, choices_via="grammar")
    assert engine_digest(W, "vllm", shared_grammar) == engine_digest(
        W, "transformers", TransformersParams(choices_via="grammar"))


def _adapter(tmp_path: Path, **config: object) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", **config}))
    return str(tmp_path)


def test_max_lora_rank_comes_from_the_adapter_config(tmp_path: Path) -> None:
    assert lora_rank(_adapter(tmp_path / "a", r=64)) == 64  # jobs/tune_peft_gpu.yaml's r
    assert lora_rank(_adapter(tmp_path / "b", r=8)) == 8
    assert lora_rank(_adapter(tmp_path / "c", r=12)) == 16  # rounded up to a rank vLLM supports
    assert lora_rank(_adapter(tmp_path / "d", r=8, rank_pattern={"q_proj": 100})) == 128
    assert lora_rank(str(tmp_path / "missing")) == 16
    with pytest.raises(BackendError, match="exceeds vLLM's largest"):
        lora_rank(_adapter(tmp_path / "e", r=1024))
    folder = _adapter(tmp_path / "f", r=64)
    kwargs = engine_kwargs(VLLMBackend.Params(adapter_path=folder), "/m", on_cpu=True, adapter=folder)
    assert (kwargs["enable_lora"], kwargs["max_lora_rank"]) == (True, 64)
    fixed = VLLMBackend.Params(adapter_path=folder, max_lora_rank=32)
    assert engine_kwargs(fixed, "/m", on_cpu=True, adapter=folder)["max_lora_rank"] == 32


class _Built:
    def __init__(self, digest: str) -> None:
        self.model_digest, self.closed, self.calls = digest, False, 0

    def generate(self, prompts: list[Prompt], params: SamplingParams) -> list[Generation]:
        self.calls += 1
        return [Generation(text="x") for _ in prompts]

    def close(self) -> None:
        self.closed = True


def test_deferred_backend_builds_on_first_use_and_checks_the_planned_digest() -> None:
    builds: list[_Built] = []

    def build() -> _Built:
        builds.append(_Built(W))
        return builds[-1]

    deferred = DeferredBackend(build, W)
    assert deferred.model_digest == W and not deferred.built and builds == []
    assert [g.text for g in deferred.generate([Prompt("p", "t")], SamplingParams())] == ["x"]
    assert deferred.built and len(builds) == 1
    deferred.generate([Prompt("p", "t")], SamplingParams())
    assert len(builds) == 1 and builds[0].calls == 2
    wrong = _Built("cd" * 32)
    with pytest.raises(BackendError, match="differs from the planned"):
        DeferredBackend(lambda: wrong, W).generate([Prompt("p", "t")], SamplingParams())
    assert wrong.closed


def test_cache_only_backend_answers_misses_only() -> None:
    (gen,) = CacheOnlyBackend(W).generate([Prompt("p", "t")], SamplingParams())
    assert gen.error == CacheOnlyBackend.MISS and CacheOnlyBackend(W).model_digest == W


def test_a_background_load_is_the_build_of_the_first_use_and_its_error_is_raised_there() -> None:
    import threading

    release = threading.Event()
    builds: list[tuple[str, _Built]] = []

    def build() -> _Built:
        release.wait(10)
        builds.append((threading.current_thread().name, _Built(W)))
        return builds[-1][1]

    deferred = DeferredBackend(build, W)
    deferred.load_in_background()
    deferred.load_in_background()  # once
    assert not deferred.built and builds == []  # still loading: the caller goes on meanwhile
    release.set()
    assert [g.text for g in deferred.generate([Prompt("p", "t")], SamplingParams())] == ["x"]
    assert [name for name, _ in builds] == ["biorab-backend-load"]  # built in the thread, not again
    deferred.close()
    assert builds[0][1].closed

    wrong = _Built("cd" * 32)
    failing = DeferredBackend(lambda: wrong, W)
    failing.load_in_background()
    failing.wait_loaded()  # the load ended; its error waits for the first use
    with pytest.raises(BackendError, match="differs from the planned"):
        failing.generate([Prompt("p", "t")], SamplingParams())
    assert wrong.closed and not failing.built
