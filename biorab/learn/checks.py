"""Checks that run before any training step: a bad base model or adapter fails with the key to fix.

The base model and an initial adapter are checked by their files (config shapes), never by loading
weights, so a mistake costs milliseconds rather than a model load and a crashed trial.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biorab.common.errors import ConfigError, DataError
from biorab.generation.model_source import ModelSource


def require_records(records: Sequence[Any], what: str, key: str) -> None:
    """An empty training set is a `DataError` naming the config key that selected it."""
    if not records:
        raise DataError(
            f"the {what} is empty: nothing to train on (check the dataset, split and limit)", field=key
        )


def resolve_base_model(model: str, *, key: str = "model") -> ModelSource:
    """`model` as a loadable source, or a `ConfigError` naming `key` when it cannot be loaded offline."""
    from biorab.generation.model_source import resolve_model

    path = Path(model).expanduser()
    looks_like_path = path.is_absolute() or model.startswith((".", "~")) or model.count("/") > 1
    if looks_like_path and not path.is_dir():
        raise ConfigError(f"base model folder {model} does not exist", key=key)
    source = resolve_model(model)
    if not source.local and not _in_hub_cache(model):
        raise ConfigError(
            f"base model {model!r} is neither a known model (smollm2), a folder, nor a hub id in "
            "the local Hugging Face cache (the hub is offline here)",
            key=key,
        )
    return source


def _in_hub_cache(repo_id: str) -> bool:
    if os.environ.get("HF_HUB_OFFLINE", "0") in ("0", "", "false"):
        return True  # online: let from_pretrained download it
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    found = try_to_load_from_cache(repo_id, "config.json")
    return isinstance(found, str)
