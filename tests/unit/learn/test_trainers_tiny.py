"""The two trainers on a tiny random-init Llama (tests/support/tiny_causal_lm.py): losses go down, a
resumed run ends with the same weights as an uninterrupted one, and bad inputs fail before any step."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from biorab.common.errors import ConfigError, DataError
from biorab.learn import EncoderTrainParams, InstructionRecord, PeftTrainParams, Triplet
from biorab.learn.encoder_train import train_encoder
from biorab.learn.peft_train import train_adapter
from tests.support.tiny_causal_lm import build_tiny_lm

pytestmark = pytest.mark.filterwarnings("ignore")

WORDS = ["aspirin", "insulin", "heparin", "warfarin", "metformin", "ibuprofen"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_lm(tmp_path_factory.mktemp("tiny") / "lm")


def records(n: int = 8) -> list[InstructionRecord]:
    return [
        InstructionRecord(
            f"t/{i}", f"Sentence: {WORDS[i % 6]} treats fever. Answer:", " y" if i % 2 else " n"
        )
        for i in range(n)
    ]


def triplets(n: int = 8) -> list[Triplet]:
    return [
        Triplet(
            f"t/{i}",
            f"{WORDS[i % 6]} treats fever",
            f"The label of ({WORDS[i % 6]} treats fever) is (1)",
            f"The label of ({WORDS[(i + 3) % 6]} walked home) is (0)",
        )
        for i in range(n)
    ]


def peft_params(tiny: Path, **kw: object) -> PeftTrainParams:
    base = {
        "model": str(tiny),
        "batch_size": 8,
        "max_steps": 6,
        "lr": 3e-2,
        "max_grad_norm": 1.0,
        "eval_fraction": 0.0,
        "checkpoint_every": 3,
        "max_length": 32,
        "lora": {"r": 4, "alpha": 8, "dropout": 0.0},
    }
    return PeftTrainParams.model_validate({**base, **kw})


def test_instruction_loss_goes_down_and_checkpoints_are_reported(tiny: Path) -> None:
    seen: list[tuple[dict[str, float], bool]] = []
    run = train_adapter(peft_params(tiny), records(), report=lambda m, c: seen.append((m, c is not None)))
    losses = run.result.losses
    assert len(losses) == 6
    assert all(b < a for a, b in zip(losses, losses[1:], strict=False)) and losses[-1] < losses[0] - 0.1
    assert [m["step"] for m, _ in seen] == [1, 2, 3, 4, 5, 6]
    assert [has for _, has in seen] == [False, False, True, False, False, True]
    assert "eval_loss" in seen[2][0] and "eval_loss" not in seen[0][0]


def test_triplet_loss_goes_down_on_an_llm_encoder(tiny: Path) -> None:
    params = EncoderTrainParams(
        kind="llm",
        model=str(tiny),
        batch_size=8,
        max_steps=6,
        lr=3e-2,
        eval_fraction=0.0,
        checkpoint_every=3,
        max_length=32,
        lora={"r": 4, "alpha": 8, "dropout": 0.0},
    )
    run = train_encoder(params, triplets())
    losses = run.result.losses
    assert losses[-1] < losses[0] - 0.1, losses
    assert run.result.eval_metrics["eval_loss"] < run.result.losses[0]


def test_resumed_run_ends_with_the_uninterrupted_weights(tiny: Path, tmp_path: Path) -> None:
    import torch
    from peft.utils import get_peft_model_state_dict

    saved: list[Path] = []

    def keep(metrics: dict[str, float], checkpoint: Path | None) -> None:
        if checkpoint is not None:
            saved.append(Path(shutil.copytree(checkpoint, tmp_path / f"ckpt-{int(metrics['step'])}")))

    full = train_adapter(peft_params(tiny), records(), report=keep)
    resumed = train_adapter(peft_params(tiny), records(), resume_from=saved[0])
    assert resumed.result.step == 6 and len(resumed.result.losses) == 3
    assert resumed.result.losses == pytest.approx(full.result.losses[3:], rel=1e-4)
    a, b = get_peft_model_state_dict(full.model), get_peft_model_state_dict(resumed.model)
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_bad_inputs_stop_before_training(tiny: Path, tmp_path: Path) -> None:
    calls: list[object] = []

    def report(m: dict[str, float], c: Path | None) -> None:
        calls.append(m)

    with pytest.raises(DataError, match="instruction set is empty"):
        train_adapter(peft_params(tiny), [], report=report)
    with pytest.raises(ConfigError, match="'peft.model'.*does not exist"):
        train_adapter(peft_params(tiny, model=str(tmp_path / "no-such-model")), records(), report=report)
    other = _other_base_adapter(tmp_path)
    with pytest.raises(ConfigError, match="'peft.adapter_init'.*another base model.*hidden_size"):
        train_adapter(peft_params(tiny, adapter_init=str(other)), records(), report=report)
    assert calls == []


@pytest.mark.skipif("__import__('torch').cuda.is_available()")
def test_qlora_without_a_gpu_is_a_config_error(tiny: Path) -> None:
    with pytest.raises(ConfigError, match="nf4.*CUDA"):
        train_adapter(peft_params(tiny, quantize="nf4"), records())
    # ``auto`` falls back to plain LoRA on this machine.
    from biorab.learn.peft_model import quantization

    assert quantization(peft_params(tiny, quantize="auto")) == "none"


def _other_base_adapter(tmp_path: Path) -> Path:
    """A LoRA adapter for a Llama of hidden size 48 (the tiny model has 32)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=320,
        hidden_size=48,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    base = tmp_path / "other-base"
    LlamaForCausalLM(config).save_pretrained(base)
    model = get_peft_model(
        LlamaForCausalLM.from_pretrained(base),
        LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]),
    )
    model.save_pretrained(tmp_path / "other-adapter")
    return tmp_path / "other-adapter"
