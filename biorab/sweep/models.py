"""What `biorab plan` counts with a model it does not load: prompt tokens, with the model's tokenizer where
one is on this machine (`biorab.generation.model_info` gives its location and the model's cache digest;
an estimated digest, ``exact=False``, counts every prompt of that model as new).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

#: Characters per token when no tokenizer is available (English/biomedical text with BPE tokenizers).
CHARS_PER_TOKEN = 4.0


class TokenCounter:
    """Counts tokens with the model's tokenizer when it can be loaded offline, else estimates from length."""

    def __init__(self, location: str | None) -> None:
        self.tokenizer = _load_tokenizer(location) if location else None

    @property
    def exact(self) -> bool:
        return self.tokenizer is not None

    def count(self, texts: list[str]) -> list[int]:
        if self.tokenizer is None:
            return [estimate_tokens(t) for t in texts]
        encoded = self.tokenizer(texts, add_special_tokens=True)["input_ids"]
        return [len(ids) for ids in encoded]


def _in_hf_cache(hub_id: str) -> bool:
    root = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(Path.home(), ".cache", "huggingface"), "hub")
    return (Path(root) / ("models--" + hub_id.replace("/", "--"))).is_dir()


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _load_tokenizer(location: str) -> Any:
    # Importing transformers costs seconds: only when a tokenizer is really on this machine.
    if not (Path(location).is_dir() or _in_hf_cache(location)):
        return None
    try:
        from transformers import AutoTokenizer
    except ImportError:
        return None
    try:  # offline only: a hub id counts only when it is already in the local HF cache
        return AutoTokenizer.from_pretrained(location, local_files_only=True)
    except (OSError, ValueError):
        return None
