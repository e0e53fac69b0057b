"""The shipped fake backend, `SamplingParams` and `build_backend` through the real registry."""

from __future__ import annotations

import math

import pytest

from biorab.common.errors import BackendError, ConfigError, UnknownNameError
from biorab.common.records import OutputConstraint, Prompt
from biorab.common.registry import BACKENDS
from biorab.generation import SamplingParams, build_backend, truncate_at_stop
from biorab.generation.base import Backend
from biorab.generation.fake import FakeBackend

YN = OutputConstraint(choices=("y", "n"))


def _prompts(n: int, constraint: OutputConstraint | None = YN) -> list[Prompt]:
    return [Prompt(f"semclass/test/{i}", f"Sentence {i}. Answer:", ("\n",), constraint) for i in range(n)]


def test_registered_and_built_through_registry() -> None:
    assert "fake" in BACKENDS.names()
    assert {"transformers", "vllm", "openai"} <= set(BACKENDS.names())
    backend = build_backend("fake", {"answer": "y"})
    assert isinstance(backend, FakeBackend)
    assert isinstance(backend, Backend)


def test_unknown_param_and_unknown_backend_are_errors() -> None:
    with pytest.raises(ConfigError, match="answr"):
        build_backend("fake", {"answr": "y"})
    with pytest.raises(UnknownNameError, match="Did you mean 'fake'"):
        build_backend("fak")


def test_fixed_answer_with_stop_and_token_counts() -> None:
    backend = build_backend("fake", {"answer": "aspirin|treats|pain\nExample 2"})
    [gen] = backend.generate(_prompts(1, None), SamplingParams())
    assert gen.text == "aspirin|treats|pain"
    assert (gen.prompt_tokens, gen.completion_tokens, gen.finish_reason) == (3, 1, "stop")
    assert gen.label_logprobs is None and gen.error is None


def test_fixed_answer_truncated_by_max_tokens() -> None:
    backend = build_backend("fake", {"answer": "one two three four"})
    [gen] = backend.generate(_prompts(1, None), SamplingParams(max_tokens=2))
    assert (gen.text, gen.finish_reason, gen.completion_tokens) == ("one two", "length", 2)


def test_choice_mode_is_deterministic_and_depends_on_seed() -> None:
    prompts = _prompts(40)

    def answers(seed: int) -> list[str]:
        backend = build_backend("fake", {"mode": "choice"})
        return [g.text for g in backend.generate(prompts, SamplingParams(seed=seed))]

    first, again, seeded = answers(0), answers(0), answers(1)
    assert first == again
    assert set(first) == {"y", "n"}  # 40 hashed picks over two labels hit both
    assert seeded != first


def test_choice_mode_batch_invariant() -> None:
    prompts = _prompts(6)
    backend = build_backend("fake", {"mode": "choice"})
    together = [g.text for g in backend.generate(prompts, SamplingParams())]
    one_by_one = [backend.generate([p], SamplingParams())[0].text for p in prompts]
    assert together == one_by_one


def test_batch_size_is_recorded_and_not_in_the_cache_key() -> None:
    from biorab.caches import generation_key
    from biorab.common.records import Generation
    from biorab.ral.specs.rows import ROW_SCHEMA, row_generation, set_generation

    prompts = _prompts(3)
    backend = build_backend("fake", {"mode": "choice"})
    assert [g.batch_size for g in backend.generate(prompts, SamplingParams())] == [3, 3, 3]
    (alone,) = backend.generate(prompts[:1], SamplingParams())
    assert alone.batch_size == 1
    row: dict[str, object] = {}
    set_generation(row, alone, key="k", cached=False)
    assert row["gen_batch_size"] == 1 and "gen_batch_size" in ROW_SCHEMA.names
    assert row_generation(row) == alone
    assert Generation.from_row({"text": "old"}).batch_size is None  # rows cached before the field existed
    # the key is a function of (model, prompt, params) only; pinned values: test_experiment_stores.py
    key = generation_key("m", prompts[0], SamplingParams())
    assert key == generation_key("m", prompts[0], SamplingParams(max_tokens=64))


def test_label_logprobs_are_a_distribution_ranking_the_answer_first() -> None:
    backend = build_backend("fake", {"mode": "choice"})
    for gen in backend.generate(_prompts(10), SamplingParams(score_labels=True)):
        assert gen.label_logprobs is not None and set(gen.label_logprobs) == {"y", "n"}
        assert math.isclose(sum(math.exp(v) for v in gen.label_logprobs.values()), 1.0)
        assert max(gen.label_logprobs, key=gen.label_logprobs.__getitem__) == gen.text


def test_map_mode_echoes_gold_and_falls_back() -> None:
    backend = build_backend("fake", {"mode": "map", "answers": {"semclass/test/1": "n"}, "answer": "y"})
    texts = [g.text for g in backend.generate(_prompts(3), SamplingParams())]
    assert texts == ["y", "n", "y"]


def test_map_mode_keeps_multiline_gold_without_stop() -> None:
    gold = "a|effect|b\nc|effect|d"
    params = {"mode": "map", "answers": {"semclass/test/0": gold}, "apply_stop": False}
    backend = build_backend("fake", params)
    assert backend.generate(_prompts(1, None), SamplingParams())[0].text == gold


def test_fail_every_raises_on_schedule() -> None:
    backend = build_backend("fake", {"answer": "y", "fail_every": 3})
    backend.generate(_prompts(1), SamplingParams())
    backend.generate(_prompts(1), SamplingParams())
    with pytest.raises(BackendError, match="call 3"):
        backend.generate(_prompts(1), SamplingParams())
    assert backend.generate(_prompts(1), SamplingParams())[0].text == "y"


def test_fail_every_error_rows_and_fail_ids_keep_order() -> None:
    backend = build_backend("fake", {"answer": "y", "fail_every": 2, "fail_mode": "error_rows",
                                     "fail_ids": ["semclass/test/1"]})  # fmt: skip
    first = backend.generate(_prompts(3), SamplingParams())
    assert [(g.text, g.error is None) for g in first] == [("y", True), ("", False), ("y", True)]
    second = backend.generate(_prompts(2), SamplingParams())
    assert all(g.text == "" and g.error and "call 2" in g.error for g in second)


def test_model_digest_depends_on_params_only() -> None:
    a = build_backend("fake", {"answer": "y"}).model_digest
    assert a == build_backend("fake", {"answer": "y"}).model_digest
    assert a != build_backend("fake", {"answer": "n"}).model_digest


def test_closed_backend_refuses_work() -> None:
    backend = build_backend("fake")
    backend.close()
    backend.close()
    with pytest.raises(BackendError):
        backend.generate(_prompts(1), SamplingParams())


def test_sampling_params_merge_stops_and_validate() -> None:
    params = SamplingParams(stop=("\n", "###"))
    prompt = Prompt("x", "t", stop=("###", "\n\n", ""))
    assert params.stops_for(prompt) == ("\n", "###", "\n\n")
    assert params.digest() == SamplingParams(stop=("\n", "###")).digest()
    assert params.digest() != SamplingParams(stop=("\n",)).digest()
    with pytest.raises(ValueError):
        SamplingParams(max_tokens=0)
    with pytest.raises(ValueError):
        SamplingParams(extra_key=1)  # type: ignore[call-arg]


def test_truncate_at_stop_takes_earliest() -> None:
    assert truncate_at_stop("ab##cd\nef", ["\n", "##"]) == ("ab", True)
    assert truncate_at_stop("abc", []) == ("abc", False)


def test_generation_package_imports_no_heavy_modules() -> None:
    import subprocess
    import sys

    code = (
        "import sys, biorab.generation, biorab.generation.prepare, biorab.generation.model_catalog\n"
        "import biorab.generation.model_source, biorab.generation.vllm.engine\n"
        "import biorab.generation.openai.client\n"
        "from biorab.common.registry import BACKENDS\nassert 'transformers' in BACKENDS.names()\n"
        "print(','.join(m for m in ('torch', 'transformers', 'vllm', 'peft') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
