"""Checks that run before any training step: a bad base model or adapter fails with the key to fix.

The base model and an initial adapter are checked by their files (config shapes), never by loading
weights, so a mistake costs milliseconds rather than a model load and a crashed trial.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biorab.errors import ConfigError, DataError
from biorab.generation.model_source import ModelSource

#: Written beside a trained adapter: which base it was trained on (read by `check_adapter_base`).
ADAPTER_BASE_FILE = "biorab_base.json"
_SHAPE_KEYS = ("model_type", "hidden_size", "num_hidden_layers", "vocab_size", "num_attention_heads")


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


def model_shape(location: str) -> dict[str, Any]:
    """The shape-defining fields of a model's ``config.json`` (empty for a hub id not on disk)."""
    config = Path(location) / "config.json"
    if not config.is_file():
        return {}
    data = json.loads(config.read_text(encoding="utf-8"))
    data = data.get("text_config", data) if "hidden_size" not in data else data
    return {k: data.get(k) for k in _SHAPE_KEYS}


def write_adapter_base(folder: Path, source: ModelSource) -> None:
    """Record the base model of an adapter saved in `folder`."""
    record = {"location": source.location, "identity": source.identity, "shape": model_shape(source.location)}
    (folder / ADAPTER_BASE_FILE).write_text(json.dumps(record, indent=2, default=str), encoding="utf-8")


def check_adapter_base(adapter: str | Path, source: ModelSource, *, key: str = "adapter") -> None:
    """Fail when the adapter folder was trained on a model of another shape than `source`."""
    folder = Path(adapter)
    config = folder / "adapter_config.json"
    if not config.is_file():
        raise ConfigError(f"{folder} is not a PEFT adapter folder (no adapter_config.json)", key=key)
    recorded = folder / ADAPTER_BASE_FILE
    base = model_shape(source.location)
    if recorded.is_file():
        theirs = json.loads(recorded.read_text(encoding="utf-8")).get("shape", {})
    else:
        theirs = model_shape(
            json.loads(config.read_text(encoding="utf-8")).get("base_model_name_or_path") or ""
        )
    mismatch = {k: (theirs[k], base.get(k)) for k in theirs if base and theirs[k] != base.get(k)}
    if mismatch:
        diff = ", ".join(f"{k}: adapter {a} vs base {b}" for k, (a, b) in sorted(mismatch.items()))
        raise ConfigError(
            f"adapter {folder} was trained for another base model than {source.location} ({diff})", key=key
        )
