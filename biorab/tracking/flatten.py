"""Turn a nested config into MLflow params: dotted keys, string values, within MLflow's length limits."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

MAX_PARAM_VALUE = 6000  # MLflow rejects longer param values
MAX_KEY = 250


def flatten(obj: Any, prefix: str = "") -> dict[str, str]:
    """``{"a": {"b": 1}, "l": [{"x": 2}]}`` → ``{"a.b": "1", "l.0.x": "2"}``; empty containers stay ``[]``.

    >>> flatten({"a": {"b": 1, "c": None}, "l": [{"x": 2}], "e": []})
    {'a.b': '1', 'a.c': 'None', 'l.0.x': '2', 'e': '[]'}
    """
    out: dict[str, str] = {}
    items: list[tuple[str, Any]]
    if isinstance(obj, Mapping) and obj:
        items = [(str(k), v) for k, v in obj.items()]
    elif isinstance(obj, list | tuple) and obj:
        items = [(str(i), v) for i, v in enumerate(obj)]
    else:
        out[prefix] = _text(obj)
        return out
    for key, value in items:
        out.update(flatten(value, f"{prefix}.{key}" if prefix else key))
    return out


def _text(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, Mapping | list | tuple) else str(value)
    return text if len(text) <= MAX_PARAM_VALUE else text[: MAX_PARAM_VALUE - 3] + "..."


def mlflow_params(config: Mapping[str, Any]) -> dict[str, str]:
    """`flatten` restricted to keys MLflow accepts."""
    return {k[:MAX_KEY]: v for k, v in flatten(config).items()}
