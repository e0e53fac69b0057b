"""The one place that turns a (registry name, params mapping) spec into an object.

A component is a class with a nested ``Params`` model (a `biorab.common.params.Params`) and an ``__init__``
that
takes that params object first, then keyword-only context (a data dir, a cache dir...). The component
receives only its own params, never the whole experiment config.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from biorab.common.config_loading import validate_mapping
from biorab.common.errors import ConfigError
from biorab.common.registry import Registry


def params_model(component: Any) -> type[BaseModel] | None:
    return _as_model(getattr(component, "Params", None))


def _as_model(model: Any) -> type[BaseModel] | None:
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def build_params(
    registry: Registry[Any],
    name: str,
    params: Mapping[str, Any] | BaseModel | None,
    *,
    key: str | None = None,
    path: str | Path | None = None,
) -> BaseModel | None:
    """Validate `params` against the component's `Params`; errors name `key` (dotted) and `path`.

    Only the component's params model is loaded (`Registry.params_of`), not necessarily the component."""
    model = _as_model(registry.params_of(name))
    if model is None:
        if params:
            raise ConfigError(f"{registry.kind} {name!r} takes no params", key=key, path=path)
        return None
    if isinstance(params, model):
        return params
    raw = params.model_dump() if isinstance(params, BaseModel) else dict(params or {})
    return validate_mapping(model, raw, path=path, key_prefix=key)


def build(
    registry: Registry[Any],
    name: str,
    params: Mapping[str, Any] | BaseModel | None = None,
    **context: Any,
) -> Any:
    """Instantiate component `name` of `registry` with validated params and keyword context."""
    component = registry.get(name)
    validated = build_params(registry, name, params)
    if validated is None:
        return component(**context)
    return component(validated, **context)
