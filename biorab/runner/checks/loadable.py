"""Whether a model, adapter or encoder that a config names can be loaded on this machine, decided without
loading it: a local folder, a known model (``smollm2``), the Hugging Face cache, or a reachable hub.

`biorab validate` and the start of `biorab sweep` ask this for every name of a grid, so that an encoder the
hub cannot serve (``HF_HUB_OFFLINE`` is set by default, as on many locked-down clusters) is named before
launch, not 20 s into a run as a `RetrievalError` inside a Ray actor.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

#: Seconds to wait for the hub when it is reachable in principle (HF_HUB_OFFLINE unset).
HUB_TIMEOUT_S = 5.0


def hub_offline() -> bool:
    """Whether this process may not reach the hub (``HF_HUB_OFFLINE``; the CLI sets 1 unless told)."""
    return os.environ.get("HF_HUB_OFFLINE", "0").strip().lower() not in ("", "0", "false", "no")


def why_not_loadable(ref: str, *, what: str = "model") -> str | None:
    """``None`` when `ref` (a folder, a known model name or a hub id) can be loaded here; else why not,
    in words that end with the fix."""
    from biorab.generation.prepare import KNOWN_MODELS

    if ref in KNOWN_MODELS:  # prepared on first use (`biorab models prepare`)
        return None
    path = Path(ref).expanduser()
    if path.is_dir():
        return None
    looks_like_path = path.is_absolute() or ref.startswith((".", "~")) or ref.count("/") != 1
    if looks_like_path:
        return f"{what} folder {ref} does not exist"
    return _hub_problem(ref, what)


@lru_cache(maxsize=256)
def _hub_problem(repo_id: str, what: str) -> str | None:
    if _in_hf_cache(repo_id):
        return None
    if hub_offline():
        return (f"{what} {repo_id!r} is no local folder and not in the Hugging Face cache, and the hub is "
                "unreachable (HF_HUB_OFFLINE is set): download it on a machine with access "
                f"(`huggingface-cli download {repo_id}`) into the cache, point at a folder, or unset "
                "HF_HUB_OFFLINE")
    try:
        from huggingface_hub import HfApi

        HfApi().model_info(repo_id, timeout=HUB_TIMEOUT_S)
    except Exception as e:  # any failure (network, 404, gated without a token) means it will not load
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return (f"{what} {repo_id!r} is no local folder, not in the Hugging Face cache, and the hub did "
                f"not serve it ({first})")
    return None


def _in_hf_cache(repo_id: str) -> bool:
    """Whether the HF cache holds a snapshot of `repo_id` (its ``config.json``, as every model has)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
