"""Trained-model references: a local folder as is, or an MLflow URI downloaded once into the cache.

``models:/NAME@ALIAS`` (what `biorab tune` registers, e.g. ``models:/biorab-ral-adapter@best``),
``models:/NAME/VERSION``, ``runs:/RUN_ID/PATH`` and ``mlflow-artifacts:/...`` are resolved here, for every
consumer: the backends' ``adapter_path``, Serve's ``adapter:``, the retrieval ``filter.encoder``, and the
training jobs' base models. An alias is resolved to its version first and the download goes to
``<cache>/mlflow-models/<digest of the registry and the pinned URI>``, so moving ``@best`` downloads the
new version while the same version is read from the cache. MLflow is imported only here, and only for URIs.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from biorab.common.errors import ConfigError

URI_SCHEMES = ("models:/", "runs:/", "mlflow-artifacts:/")
#: Files that mark a model folder inside a downloaded artifact, shallowest first.
MARKERS = ("encoder.json", "adapter_config.json")


@dataclass(frozen=True)
class ResolvedModel:
    """Where a reference (`ref`, as configured) resolved to: a local folder, and the registry version an
    alias or version URI names (``None`` for folders and run URIs)."""

    ref: str
    path: Path
    version: str | None = None


def is_mlflow_uri(ref: str) -> bool:
    return ref.startswith(URI_SCHEMES)


def resolve_model_ref(ref: str, *, key: str, cache_dir: str | Path | None = None,
                      tracking_uri: str | None = None, marker: str | None = None) -> ResolvedModel:
    """The local folder of `ref` (see the module docstring). `marker`: a file the folder must hold (e.g.
    ``adapter_config.json``), searched for inside a downloaded artifact. Every failure is a `ConfigError`
    naming `key`."""
    if not is_mlflow_uri(ref):
        path = Path(ref).expanduser()
        if not path.is_dir():
            raise ConfigError(f"{ref} is not a folder (nor a models:/ URI)", key=key)
        return ResolvedModel(ref, _with_marker(path, ref, marker, key))
    from biorab.common.paths import cache_dir as default_cache

    pinned, version = _pinned(ref, key, tracking_uri)
    target = default_cache(cache_dir) / "mlflow-models" / _download_key(pinned, tracking_uri)
    if not target.is_dir():
        source = _source_uri(pinned, version, key, tracking_uri)
        _download(source, target, key, tracking_uri)
    folder = target
    return ResolvedModel(ref, _with_marker(_payload(folder), ref, marker, key), version)


def resolve_artifact(ref: str, *, key: str = "adapter", cache_dir: str | Path | None = None) -> Path:
    """`resolve_model_ref(...).path`: the local folder of a folder or MLflow URI."""
    return resolve_model_ref(ref, key=key, cache_dir=cache_dir).path


def _pinned(ref: str, key: str, tracking_uri: str | None) -> tuple[str, str | None]:
    """``models:/name@alias`` as ``models:/name/<version>``, with the version (other URIs unchanged).
    `tracking_uri` (``None``: MLflow's default) is passed to the client, never set globally: a global
    setting would also reach every subprocess through ``$MLFLOW_TRACKING_URI``."""
    if not ref.startswith("models:/"):
        return ref, None
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    body = ref[len("models:/"):]
    try:
        if "@" in body:
            name, alias = body.split("@", 1)
            client = MlflowClient(tracking_uri=tracking_uri, registry_uri=tracking_uri)
            version = str(client.get_model_version_by_alias(name, alias).version)
            return f"models:/{name}/{version}", version
        name, _, number = body.partition("/")
        client = MlflowClient(tracking_uri=tracking_uri, registry_uri=tracking_uri)
        return ref, str(client.get_model_version(name, number).version) if number else None
    except MlflowException as e:
        raise ConfigError(f"{key} {ref!r} is not in the MLflow registry ($MLFLOW_TRACKING_URI): "
                          f"{_first_line(e)}", key=key) from e


def _source_uri(pinned: str, version: str | None, key: str, tracking_uri: str | None) -> str:
    """Where a registered version's files are (its run's artifact URI); other URIs as they are."""
    if not pinned.startswith("models:/") or version is None:
        return pinned
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    name = pinned[len("models:/"):].split("/", 1)[0]
    try:
        client = MlflowClient(tracking_uri=tracking_uri, registry_uri=tracking_uri)
        return str(client.get_model_version_download_uri(name, version))
    except MlflowException as e:
        raise ConfigError(f"{key} {pinned!r}: no download location in the MLflow registry: "
                          f"{_first_line(e)}", key=key) from e


def _download_key(pinned: str, tracking_uri: str | None) -> str:
    """The cache folder name of a pinned URI: ``models:/NAME/1`` of one registry is not that of another,
    so the registry (tracking store) the URI was resolved against is part of the key."""
    import mlflow

    where = tracking_uri or f"{mlflow.get_tracking_uri()}\0{mlflow.get_registry_uri()}"
    return hashlib.sha256(f"{where}\0{pinned}".encode()).hexdigest()[:24]


def _download(uri: str, target: Path, key: str, tracking_uri: str | None) -> Path:
    import mlflow
    from mlflow.exceptions import MlflowException

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".download-", dir=target.parent))
    try:
        mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=str(tmp), tracking_uri=tracking_uri,
                                            registry_uri=tracking_uri)
    except (MlflowException, OSError) as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ConfigError(f"cannot download {uri} from MLflow: {_first_line(e)}", key=key) from e
    try:
        tmp.rename(target)  # atomic: a concurrent download of the same version keeps the first
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _payload(folder: Path) -> Path:
    """The model folder inside a downloaded artifact (the one holding the adapter or encoder files)."""
    found = [p for marker in MARKERS for p in folder.rglob(marker)]
    # The shallowest marker wins: an LLM encoder holds its own adapter one level down.
    return min(found, key=lambda p: len(p.parts)).parent if found else folder


def _with_marker(folder: Path, ref: str, marker: str | None, key: str) -> Path:
    if marker is None or (folder / marker).is_file():
        return folder
    found = sorted(folder.rglob(marker)) if folder.is_dir() else []
    if not found:
        raise ConfigError(f"{key} {ref!r}: no {marker} found in {folder}", key=key)
    return found[0].parent


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [""])[0][:300]
