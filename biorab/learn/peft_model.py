"""The generator to instruction-tune: base model (4-bit nf4 for QLoRA where CUDA and bitsandbytes exist,
else full precision), its tokenizer, and a LoRA adapter (new, or the triplet-trained encoder's adapter).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from biorab.common.errors import ConfigError
from biorab.generation.adapter_base import check_adapter_base, write_adapter_base
from biorab.generation.model_source import ModelSource
from biorab.learn.config import PeftTrainParams

_DTYPES = ("float32", "bfloat16", "float16")


def quantization(params: PeftTrainParams) -> str:
    """``nf4`` or ``none`` for this machine; ``nf4`` asked for where it cannot run is a `ConfigError`."""
    possible = _cuda() and importlib.util.find_spec("bitsandbytes") is not None
    if params.quantize == "nf4" and not possible:
        raise ConfigError(
            "quantize: nf4 (QLoRA) needs a CUDA GPU and the bitsandbytes package; use "
            "quantize: auto or none on this machine",
            key="peft.quantize",
        )
    if params.quantize == "auto":
        return "nf4" if possible else "none"
    return params.quantize


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def load_tokenizer(location: str) -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(location)
    if tokenizer.pad_token_id is None:  # the original added '[PAD]'; eos as pad keeps the vocab unchanged
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    return tokenizer


def load_base(params: PeftTrainParams, source: ModelSource) -> Any:
    """The base causal LM, quantised to nf4 (double quant, bf16 compute) when `quantization` says so."""
    import torch
    from transformers import AutoModelForCausalLM

    dtype = getattr(torch, params.dtype)
    if quantization(params) == "nf4":
        from peft import prepare_model_for_kbit_training
        from transformers import BitsAndBytesConfig

        bnb = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=torch.bfloat16,
        )
        model = AutoModelForCausalLM.from_pretrained(
            source.location, quantization_config=bnb, device_map={"": params.device}
        )
        return prepare_model_for_kbit_training(model)
    base: Any = AutoModelForCausalLM.from_pretrained(source.location, dtype=dtype)
    return base.to(params.device)


def add_adapter(model: Any, params: PeftTrainParams, source: ModelSource, init: str | None) -> Any:
    """Wrap `model` with a new LoRA adapter (seeded), optionally starting from the weights of `init`."""
    import torch
    from peft import LoraConfig, get_peft_model

    lora = params.lora
    config = LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=list(lora.target_modules),
        task_type="CAUSAL_LM",
    )
    with torch.random.fork_rng(devices=[]):  # LoRA's A init draws from the global RNG: pin it locally
        torch.manual_seed(params.seed)
        peft_model = get_peft_model(model, config)
    if init is not None:
        load_adapter_weights(peft_model, Path(init), params, source)
    return peft_model


def adapter_folder(init: Path) -> Path:
    """The adapter inside a saved encoder (``adapter/``) or `init` itself."""
    return init / "adapter" if (init / "adapter" / "adapter_config.json").is_file() else init


def check_init_adapter(init: str, params: PeftTrainParams, source: ModelSource) -> Path:
    """The initial adapter's folder, checked against the base model and the LoRA settings."""
    folder = adapter_folder(Path(init))
    check_adapter_base(folder, source, key="peft.adapter_init")
    theirs = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8"))
    if theirs.get("r") != params.lora.r or set(theirs.get("target_modules") or ()) != set(
        params.lora.target_modules
    ):
        raise ConfigError(
            f"adapter {folder} has r={theirs.get('r')} on {sorted(theirs.get('target_modules') or ())}; "
            f"set peft.lora to r={theirs.get('r')} and the same target_modules to start from it",
            key="peft.lora",
        )
    return folder


def load_adapter_weights(model: Any, init: Path, params: PeftTrainParams, source: ModelSource) -> None:
    from peft.utils import load_peft_weights, set_peft_model_state_dict

    folder = check_init_adapter(str(init), params, source)
    set_peft_model_state_dict(model, load_peft_weights(str(folder)))


def save_adapter(model: Any, tokenizer: Any, folder: Path, source: ModelSource) -> None:
    """The adapter, its tokenizer and the record of its base model (`check_adapter_base` reads it)."""
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    write_adapter_base(folder, source)
