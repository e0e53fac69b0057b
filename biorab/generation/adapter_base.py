"""Which base model a LoRA adapter belongs to: recorded when the adapter is saved (`write_adapter_base`),
checked when a backend loads it (`check_adapter_base`, through `local_adapter`), so an adapter for another
base fails at load time with a message instead of producing garbage. Generation owns it (the backends load
adapters); training writes the record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from biorab.common.errors import ConfigError
from biorab.generation.model_source import ModelSource

#: Written beside a trained adapter: which base it was trained on (read by `check_adapter_base`).
ADAPTER_BASE_FILE = "biorab_base.json"
_SHAPE_KEYS = ("model_type", "hidden_size", "num_hidden_layers", "vocab_size", "num_attention_heads")


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


def local_adapter(adapter: str | None, source: ModelSource) -> str | None:
    """`adapter` as something ``PeftModel.from_pretrained`` / vLLM's ``LoRARequest`` loads: an MLflow
    ``models:/`` (or ``runs:/``) URI is downloaded once into the cache; a local adapter folder is checked
    against the base model's shape (an adapter for another base is a `ConfigError` naming
    ``adapter_path``)."""
    if adapter is None:
        return None
    from biorab.common.model_refs import is_mlflow_uri, resolve_artifact

    local = str(resolve_artifact(adapter, key="adapter_path")) if is_mlflow_uri(adapter) else adapter
    if Path(local).is_dir():
        check_adapter_base(local, source, key="adapter_path")
    return local
