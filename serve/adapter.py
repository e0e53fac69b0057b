"""The tuned adapter: a local PEFT folder, or an MLflow model URI resolved to one.

``models:/biorab-ral-adapter@best`` (what the Ray Tune training registers), ``models:/NAME/VERSION`` and
``runs:/RUN_ID/PATH`` are downloaded with `mlflow.artifacts.download_artifacts` into the cache, inside the
generator replica (so MLflow is imported only there, and only when an adapter URI is configured). The
PEFT folder is the one holding ``adapter_config.json``, wherever the registered artifact nests it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from biorab.errors import ConfigError

MLFLOW_SCHEMES = ("models:/", "runs:/", "mlflow-artifacts:/")
ADAPTER_FILE = "adapter_config.json"


@dataclass(frozen=True)
class ResolvedAdapter:
    """Where an adapter came from (`uri`, as configured) and the local folder it was loaded from."""

    uri: str
    path: str
    version: str | None = None


def is_mlflow_uri(uri: str) -> bool:
    return uri.startswith(MLFLOW_SCHEMES)


def resolve_adapter(uri: str, *, tracking_uri: str | None = None, cache_dir: str | Path | None = None
                    ) -> ResolvedAdapter:
    """The local PEFT folder of `uri` (a folder, or an MLflow URI downloaded under `cache_dir`)."""
    if not is_mlflow_uri(uri):
        folder = Path(uri).expanduser()
        return ResolvedAdapter(uri, str(_peft_folder(folder, uri)))
    import mlflow

    if tracking_uri:
        mlflow.set_tracking_uri(tracking_uri)
        mlflow.set_registry_uri(tracking_uri)
    version = _registered_version(uri)
    dst = _download_dir(uri, version, cache_dir)
    try:
        local = mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=str(dst))
    except Exception as e:  # MlflowException and friends: unknown model, alias or run
        raise ConfigError(f"cannot download adapter {uri!r} from MLflow: {type(e).__name__}: "
                          f"{_first_line(e)}", key="adapter") from e
    return ResolvedAdapter(uri, str(_peft_folder(Path(local), uri)), version)


def _registered_version(uri: str) -> str | None:
    """The registry version an alias or version URI points at (``None`` for run URIs); part of the
    download folder's name, so that moving the alias to a new version downloads the new one."""
    if not uri.startswith("models:/"):
        return None
    from mlflow import MlflowClient

    ref = uri[len("models:/"):]
    client = MlflowClient()
    try:
        if "@" in ref:
            name, alias = ref.split("@", 1)
            return str(client.get_model_version_by_alias(name, alias).version)
        name, _, version = ref.partition("/")
        return str(client.get_model_version(name, version).version) if version else None
    except Exception as e:  # an unknown model or alias: say which
        raise ConfigError(f"adapter {uri!r} is not in the MLflow registry: {_first_line(e)}",
                          key="adapter") from e


def _download_dir(uri: str, version: str | None, cache_dir: str | Path | None) -> Path:
    from biorab.paths import cache_dir as default_cache

    tag = hashlib.sha256(f"{uri}|{version}".encode()).hexdigest()[:16]
    folder = default_cache(cache_dir) / "adapters" / tag
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _peft_folder(root: Path, uri: str) -> Path:
    if (root / ADAPTER_FILE).is_file():
        return root
    found = sorted(root.rglob(ADAPTER_FILE)) if root.is_dir() else []
    if not found:
        raise ConfigError(f"adapter {uri!r}: no {ADAPTER_FILE} found (not a PEFT adapter folder)",
                          key="adapter")
    return found[0].parent


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [""])[0][:300]
