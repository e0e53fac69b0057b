"""The vllm backend with a real engine and the prepared SmolLM2 (skipped without CUDA and vLLM).

Structure and parseability only: greedy text differs across backends and batch shapes
(docs/notes/llm_notes.md)."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

if importlib.util.find_spec("vllm") is None:
    pytest.skip("vLLM is not installed", allow_module_level=True)
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from biorab.common.records import OutputConstraint, Prompt  # noqa: E402
from biorab.generation import SamplingParams, build_backend  # noqa: E402

YN = OutputConstraint(choices=("y", "n"))
TRIPLE = OutputConstraint(regex=r"[A-Za-z0-9 ]{1,20}\|(effect|dosage)\|[A-Za-z0-9 ]{1,20}")


@pytest.fixture(scope="module")
def backend():  # type: ignore[no-untyped-def]
    b = build_backend("vllm", {"model": "smollm2", "gpu_memory_utilization": 0.3, "max_model_len": 2048})
    yield b
    b.close()


def test_generate_structure(backend) -> None:  # type: ignore[no-untyped-def]
    prompts = [Prompt(f"x/{i}", f"Drug {i} is used to", stop=("\n",)) for i in range(8)]
    gens = backend.generate(prompts, SamplingParams(max_tokens=16))
    assert len(gens) == 8 and all(g.error is None and "\n" not in g.text for g in gens)
    assert all(0 < g.completion_tokens <= 16 and g.prompt_tokens > 0 for g in gens)


def test_structured_choice_regex_and_label_scores(backend) -> None:  # type: ignore[no-untyped-def]
    choice = Prompt("c", "Is aspirin a drug? Answer y or n:", constraint=YN)
    triple = Prompt("t", "Extract a triple from: aspirin causes nausea.\nTriple:", constraint=TRIPLE)
    params = SamplingParams(max_tokens=24, constrained=True, score_labels=True)
    gens = backend.generate([choice, triple], params)
    assert gens[0].text in {"y", "n"}
    assert gens[0].label_logprobs is not None and set(gens[0].label_logprobs) == {"y", "n"}
    assert gens[1].text.count("|") == 2
