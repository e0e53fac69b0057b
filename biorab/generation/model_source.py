"""Resolve a backend's ``model`` setting (a known name, a local folder or a hub id) to something
`from_pretrained` / `vllm.LLM` can load, and fingerprint it for cache keys without loading it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from biorab.generation.base import stable_digest
from biorab.generation.prepare import KNOWN_MODELS, ensure_prepared, read_marker

# Sampled per weight file (head and tail): enough to tell fine-tunes apart, cheap for a 14 GB model.
_SAMPLE_BYTES = 4 << 20
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf")


@dataclass(frozen=True)
class ModelSource:
    """Where to load a model from and what identifies its weights.

    Attributes:
        location: a local folder or a hub id, passed to ``from_pretrained`` / ``vllm.LLM``.
        identity: a mapping that changes whenever the weights do (hashed into `model_digest`).
        local: whether `location` is a folder on this machine.
    """

    location: str
    identity: dict[str, object]
    local: bool


def resolve_model(
    model: str, *, revision: str | None = None, cache_dir: str | None = None, auto_prepare: bool = True
) -> ModelSource:
    """Turn `model` into a `ModelSource`.

    A name of `KNOWN_MODELS` (``smollm2``) resolves to its prepared folder (prepared on first use when
    `auto_prepare`, else `ModelNotPreparedError`); an existing folder is used as is; anything else is a
    hub id, loaded by the backend's real ``from_pretrained`` code (needs a reachable hub or a filled HF
    cache).
    """
    if model in KNOWN_MODELS:
        folder = ensure_prepared(model, cache_dir=cache_dir, auto_prepare=auto_prepare)
        marker = read_marker(folder) or {}
        identity: dict[str, object] = {
            "known": model,
            "source_sha256": marker.get("source_sha256"),
            "dtype": marker.get("dtype"),
        }
        return ModelSource(str(folder), identity, local=True)
    path = Path(model).expanduser()
    if path.is_dir():
        return ModelSource(str(path.resolve()), {"folder": folder_fingerprint(path)}, local=True)
    return ModelSource(model, {"hub_id": model, "revision": revision}, local=False)


def folder_fingerprint(folder: Path) -> str:
    """A content fingerprint of a model or adapter folder.

    Small files (configs, tokenizer files, adapters under the sample size) are hashed whole; large weight
    files by their size plus their first and last `_SAMPLE_BYTES`, so fingerprinting a big checkpoint
    costs milliseconds while any real change of weights (which changes size or the sampled bytes in
    practice) changes the fingerprint. The folder's name and location do not matter.
    """
    parts: dict[str, str] = {}
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = file.relative_to(folder).as_posix()
        if rel.startswith(".") or "/." in rel or file.name == "prepared.json":
            continue
        parts[rel] = _file_digest(file)
    return stable_digest(parts)


def _file_digest(file: Path) -> str:
    size = file.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with file.open("rb") as f:
        if size <= 2 * _SAMPLE_BYTES or not file.name.endswith(_WEIGHT_SUFFIXES):
            while block := f.read(1 << 20):
                digest.update(block)
        else:
            digest.update(f.read(_SAMPLE_BYTES))
            f.seek(size - _SAMPLE_BYTES)
            digest.update(f.read(_SAMPLE_BYTES))
    return digest.hexdigest()


def adapter_identity(adapter_path: str | None) -> dict[str, object] | None:
    """Identity of a PEFT adapter folder (its config and weights), or None without an adapter."""
    if adapter_path is None:
        return None
    path = Path(adapter_path).expanduser()
    if not path.is_dir():
        return {"hub_id": adapter_path}
    config = path / "adapter_config.json"
    base = json.loads(config.read_text(encoding="utf-8")).get("peft_type") if config.is_file() else None
    return {"peft_type": base, "folder": folder_fingerprint(path)}


def weights_digest(source: ModelSource, adapter_path: str | None, dtype: str) -> str:
    """The `model_digest` of an in-process backend: what the weights are (model, adapter) and how they
    are loaded (dtype)."""
    return stable_digest(
        {"model": source.identity, "adapter": adapter_identity(adapter_path), "dtype": dtype}
    )


def engine_digest(weights: str, engine: str, params: object) -> str:
    """The `model_digest` of an in-process backend: `weights` (`weights_digest`) plus what the engine
    changes in the outputs. One place for the backends and the planner (`biorab.generation.model_info`), so
    that planned keys equal the keys a run writes.

    - ``transformers`` keeps the bare weights digest (its caches from before engines were keyed stay
      valid); ``choices_via: grammar`` answers labels differently and is marked.
    - every other engine (``vllm``) is marked with its name: greedy outputs differ across engines, so a
      vLLM run must not report a transformers run's generations. ``share_cache_across_engines: true``
      (an explicit opt-in, logged with the config's params) keys it like transformers instead.
    - a split thinking reply (``thinking: {split: true}``) is stored split, a thinking budget
      (``thinking: {token_budget: N}``) changes the reply: either marks it with the thinking params.
    """
    digest = _engine_digest(weights, engine, params)
    thinking = getattr(params, "thinking", None)
    if thinking is not None and thinking.keys_reply:
        return stable_digest({"digest": digest, "thinking": thinking.model_dump(mode="json")})
    return digest


def _engine_digest(weights: str, engine: str, params: object) -> str:
    choices_via = getattr(params, "choices_via", "score")
    if engine != "transformers" and not getattr(params, "share_cache_across_engines", False):
        return stable_digest({"weights": weights, "engine": engine, "choices_via": choices_via})
    if choices_via == "grammar":
        return stable_digest({"weights": weights, "choices_via": "grammar"})
    return weights
