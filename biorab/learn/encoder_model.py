"""The awareness encoder f(.): a transformer whose mean-pooled last hidden state represents a text.

Two kinds share one interface (`PooledEncoder`): ``sentence`` (a sentence-transformers folder such as the
packaged all-MiniLM-L6-v2, all weights trained) and ``llm`` (a causal LM's last hidden state through a LoRA
adapter, as the paper's f(.) on Llama/Phi). A saved encoder is a folder with ``encoder.json`` (kind, base,
max length), the model (``model/``) or the adapter (``adapter/``), and the tokenizer (``tokenizer/``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biorab.common.errors import ConfigError
from biorab.learn.config import EncoderTrainParams

ENCODER_FILE = "encoder.json"


class PooledEncoder:
    """A model + tokenizer that maps texts to mean-pooled vectors (a torch module inside)."""

    def __init__(self, model: Any, tokenizer: Any, *, kind: str, base: str, max_length: int) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.kind = kind
        self.base = base
        self.max_length = max_length

    def embed(self, texts: Sequence[str], device: str = "cpu") -> Any:
        """A (len(texts), hidden) float tensor, with gradients when the model is in training mode."""
        batch = self.tokenizer(
            list(texts),
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
            return_token_type_ids=False,
        ).to(device)
        # The LM head is not needed: keep only the last position's logits (transformers >= 4.45).
        extra = {"logits_to_keep": 1} if self.kind == "llm" else {}
        out = self.model(**batch, output_hidden_states=True, **extra)
        hidden = out.hidden_states[-1] if getattr(out, "hidden_states", None) else out.last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)

    def encode(self, texts: Sequence[str], *, batch_size: int = 32) -> Any:
        """Float32 numpy rows, no gradients (for scoring and filtering)."""
        import numpy as np
        import torch

        self.model.eval()
        rows = []
        with torch.inference_mode():
            for i in range(0, len(texts), batch_size):
                rows.append(self.embed(texts[i : i + batch_size]).float().cpu().numpy())
        return np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float32)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        sub = "adapter" if self.kind == "llm" else "model"
        self.model.save_pretrained(folder / sub)
        self.tokenizer.save_pretrained(folder / "tokenizer")
        meta = {"kind": self.kind, "base": self.base, "max_length": self.max_length, "pooling": "mean"}
        (folder / ENCODER_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")


def base_location(params: EncoderTrainParams) -> str:
    """Where the encoder's base weights are (the packaged MiniLM, the prepared LLM, a folder or hub id)."""
    if params.kind == "sentence":
        from biorab.retrieval.encoders import minilm_path, resolve_model

        return minilm_path() if params.model == "minilm" else resolve_model(params.model)
    from biorab.learn.checks import resolve_base_model

    return resolve_base_model(params.model, key="encoder.model").location


def new_encoder(params: EncoderTrainParams) -> PooledEncoder:
    """A trainable encoder from `params` (LoRA on the LLM kind, seeded by `params.seed`)."""
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer

    base = base_location(params)
    tokenizer = _tokenizer(AutoTokenizer.from_pretrained(base))
    if params.kind == "sentence":
        model = AutoModel.from_pretrained(base, dtype=torch.float32)
        return PooledEncoder(model, tokenizer, kind="sentence", base=base, max_length=params.max_length)
    from peft import LoraConfig, get_peft_model

    lm = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    lora = params.lora
    config = LoraConfig(
        r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout, target_modules=list(lora.target_modules)
    )
    with torch.random.fork_rng(devices=[]):  # LoRA's A init draws from the global RNG: pin it locally
        torch.manual_seed(params.seed)
        model = get_peft_model(lm, config)
    return PooledEncoder(model, tokenizer, kind="llm", base=base, max_length=params.max_length)


def load_encoder(folder: str | Path) -> PooledEncoder:
    """A saved encoder (see the module docstring), ready to `encode`."""
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer

    folder = Path(folder)
    meta_file = folder / ENCODER_FILE
    if not meta_file.is_file():
        raise ConfigError(f"{folder} is not a trained awareness encoder (no {ENCODER_FILE})", key="encoder")
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    tokenizer = _tokenizer(AutoTokenizer.from_pretrained(folder / "tokenizer"))
    if meta["kind"] == "sentence":
        model = AutoModel.from_pretrained(folder / "model", dtype=torch.float32)
    else:
        from peft import PeftModel

        lm = AutoModelForCausalLM.from_pretrained(meta["base"], dtype=torch.float32)
        model = PeftModel.from_pretrained(lm, folder / "adapter")
    return PooledEncoder(
        model.eval(), tokenizer, kind=meta["kind"], base=meta["base"], max_length=int(meta["max_length"])
    )


def _tokenizer(tokenizer: Any) -> Any:
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    return tokenizer
