"""The tuned adapter: a local PEFT folder, or an MLflow model URI resolved to one (`biorab.common.model_refs`,
the resolver every consumer of a trained model uses).

``models:/biorab-ral-adapter@best`` (what the Ray Tune training registers), ``models:/NAME/VERSION`` and
``runs:/RUN_ID/PATH`` are downloaded into the cache inside the generator replica (so MLflow is imported
only there, and only when an adapter URI is configured). The PEFT folder is the one holding
``adapter_config.json``, wherever the registered artifact nests it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from biorab.common.model_refs import resolve_model_ref

ADAPTER_FILE = "adapter_config.json"


@dataclass(frozen=True)
class ResolvedAdapter:
    """Where an adapter came from (`uri`, as configured), the local folder it was loaded from and the
    registry version it names (shown by ``/v1/models``)."""

    uri: str
    path: str
    version: str | None = None


def public_name(uri: str | None) -> str | None:
    """How answers and ``/v1/models`` name an adapter: a registry URI as configured (it names a model
    and a version or alias, no machine path), a local folder by its name only (its path says where the
    server keeps its files, which is no client's business)."""
    if uri is None or uri.startswith(("models:/", "runs:/")):
        return uri
    return Path(uri).name


def resolve_adapter(uri: str, *, tracking_uri: str | None = None, cache_dir: str | Path | None = None
                    ) -> ResolvedAdapter:
    """The local PEFT folder of `uri` (a folder, or an MLflow URI downloaded under `cache_dir`)."""
    found = resolve_model_ref(uri, key="adapter", cache_dir=cache_dir, tracking_uri=tracking_uri,
                              marker=ADAPTER_FILE)
    return ResolvedAdapter(uri, str(found.path), found.version)
