"""Resolve a trained model reference: a local folder as is, or an MLflow ``models:/name@alias`` (or
``models:/name/version``, ``runs:/...``) URI downloaded once into the cache.

The download goes to ``<cache>/mlflow-models/<sha of the URI and the version it names>``; an alias is
resolved to its version first, so moving ``@best`` to a new version downloads the new one, while the same
version is read from the cache. MLflow is imported only here, and only for URIs.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

from biorab.errors import ConfigError

URI_SCHEMES = ("models:/", "runs:/", "mlflow-artifacts:/")


def is_mlflow_uri(ref: str) -> bool:
    return ref.startswith(URI_SCHEMES)


def resolve_artifact(ref: str, *, key: str = "adapter", cache_dir: str | Path | None = None) -> Path:
    """A local folder for `ref` (see the module docstring); missing is a `ConfigError` naming `key`."""
    if not is_mlflow_uri(ref):
        path = Path(ref).expanduser()
        if not path.is_dir():
            raise ConfigError(f"{ref} is not a folder (nor a models:/ URI)", key=key)
        return path
    from biorab.paths import cache_dir as default_cache

    pinned = _pinned_uri(ref, key)
    target = default_cache(cache_dir) / "mlflow-models" / hashlib.sha256(pinned.encode()).hexdigest()[:24]
    if target.is_dir():
        return _payload(target)
    return _payload(_download(pinned, target, key))


def _pinned_uri(ref: str, key: str) -> str:
    """``models:/name@alias`` as ``models:/name/<version>`` (other URIs unchanged)."""
    if not ref.startswith("models:/") or "@" not in ref:
        return ref
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    name, alias = ref[len("models:/") :].split("@", 1)
    try:
        version = MlflowClient().get_model_version_by_alias(name, alias).version
    except MlflowException as e:
        raise ConfigError(
            f"{ref}: no registered model {name!r} with alias {alias!r} in the tracking store "
            "($MLFLOW_TRACKING_URI)",
            key=key,
        ) from e
    return f"models:/{name}/{version}"


def _download(uri: str, target: Path, key: str) -> Path:
    import mlflow
    from mlflow.exceptions import MlflowException

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".download-", dir=target.parent))
    try:
        mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=str(tmp))
    except (MlflowException, OSError) as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ConfigError(f"cannot download {uri}: {e}", key=key) from e
    try:
        tmp.rename(target)  # atomic: a concurrent download of the same version keeps the first
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _payload(folder: Path) -> Path:
    """The model folder inside a downloaded artifact (the one holding the adapter or encoder files)."""
    found = [p for marker in ("encoder.json", "adapter_config.json") for p in folder.rglob(marker)]
    # The shallowest marker wins: an LLM encoder holds its own adapter one level down.
    return min(found, key=lambda p: len(p.parts)).parent if found else folder
