"""A LoRA adapter trained by the trainer `biorab tune jobs/tune_peft.yaml` runs (`train_adapter`, with that
job's LoRA targets, r=64 as jobs/tune_peft_gpu.yaml), served by vLLM through `LoRARequest`: the engine's
``max_lora_rank`` comes from the adapter's own config (the old fixed 16 made vLLM refuse r=64), and the
adapter's label log-probs match transformers with the same adapter, and differ from the base model's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from biorab.generation import SamplingParams, build_backend
from biorab.labels import LABELS
from biorab.records import OutputConstraint, Prompt
from tests.support.vllm_settings import ENGINE

pytestmark = [pytest.mark.timeout(900), pytest.mark.filterwarnings("ignore")]
REPO = Path(__file__).resolve().parents[2]
PROMPTS = [Prompt("c/0", "Does this sentence report an adverse drug effect? Aspirin caused a rash.\n"
                  "Answer 1 or 0:", constraint=OutputConstraint(choices=LABELS["ade_corpus_v2"])),
           Prompt("c/1", "Is aspirin a drug? Answer y or n:",
                  constraint=OutputConstraint(choices=("y", "n")))]


@pytest.fixture(scope="module")
def adapter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from biorab.learn import PeftTrainParams, TrainingSource, build_instruction_set
    from biorab.learn.peft_train import train_adapter

    job = yaml.safe_load((REPO / "jobs" / "tune_peft.yaml").read_text(encoding="utf-8"))
    src = TrainingSource(dataset="ade_corpus_v2", limit=8, k=1, template="bm25",
                         data_dir=str(REPO / "tests" / "data" / "biorab"))
    lora = {**job["peft"]["lora"], "r": 64, "alpha": 128, "dropout": 0.0}
    params = PeftTrainParams(model="smollm2", batch_size=8, max_steps=3, lr=3e-3, max_length=128,
                             eval_fraction=0.0, checkpoint_every=3, lora=lora)
    run = train_adapter(params, build_instruction_set(src).records)
    folder = tmp_path_factory.mktemp("adapter") / "adapter"
    run.save(folder)
    return folder


@pytest.fixture(scope="module")
def engine(adapter: Path) -> Iterator[Any]:
    b = build_backend("vllm", {**ENGINE, "adapter_path": str(adapter)})
    yield b
    b.close()


def _scores(backend: Any) -> list[dict[str, float]]:
    gens = backend.generate(PROMPTS, SamplingParams(max_tokens=4, constrained=True, score_labels=True))
    assert all(g.error is None and g.label_logprobs for g in gens)
    return [dict(g.label_logprobs) for g in gens]


def test_a_rank_64_adapter_is_served_through_lora_request(engine: Any, adapter: Path) -> None:
    import json

    assert json.loads((adapter / "adapter_config.json").read_text())["r"] == 64
    assert engine._lora is not None and engine._lora.lora_path == str(adapter)
    served = _scores(engine)
    with_adapter = build_backend("transformers", {"model": "smollm2", "dtype": "float32",
                                                  "adapter_path": str(adapter)})
    base = build_backend("transformers", {"model": "smollm2", "dtype": "float32"})
    try:
        tuned, plain = _scores(with_adapter), _scores(base)
    finally:
        with_adapter.close()
        base.close()
    for v, t, b in zip(served, tuned, plain, strict=True):
        assert v == pytest.approx(t, abs=5e-2)  # the adapter vLLM applies is the one transformers applies
        assert max(abs(t[k] - b[k]) for k in t) > 0.1  # and it changes the model
