"""Turn a nested config into MLflow params: dotted keys, string values, within MLflow's length limits.

The one flattening of `biorab run`, the sweeps and the tune jobs (`training.tracking`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

MAX_PARAM_VALUE = 6000  # MLflow rejects longer param values
MAX_KEY = 250
#: How a list or tuple becomes params: ``indexed``, one param per item (``retrieval.0.k``: the run and sweep
#: configs); ``whole``, one param as Python writes it (``lora.target_modules``: ``('q_proj', 'v_proj')``,
#: the tune jobs' trial params).
Sequences = Literal["indexed", "whole"]


def flatten(obj: Any, prefix: str = "", *, sequences: Sequences = "indexed") -> dict[str, str]:
    """``{"a": {"b": 1}, "l": [{"x": 2}]}`` → ``{"a.b": "1", "l.0.x": "2"}``; empty containers stay ``[]``.

    >>> flatten({"a": {"b": 1, "c": None}, "l": [{"x": 2}], "e": []})
    {'a.b': '1', 'a.c': 'None', 'l.0.x': '2', 'e': '[]'}
    >>> flatten({"lora": {"r": 8, "target_modules": ("q_proj", "v_proj")}}, sequences="whole")
    {'lora.r': '8', 'lora.target_modules': "('q_proj', 'v_proj')"}
    """
    out: dict[str, str] = {}
    items: list[tuple[str, Any]]
    if isinstance(obj, Mapping) and obj:
        items = [(str(k), v) for k, v in obj.items()]
    elif isinstance(obj, list | tuple) and obj and sequences == "indexed":
        items = [(str(i), v) for i, v in enumerate(obj)]
    else:
        out[prefix] = _text(obj, sequences)
        return out
    for key, value in items:
        out.update(flatten(value, f"{prefix}.{key}" if prefix else key, sequences=sequences))
    return out


def _text(value: Any, sequences: Sequences) -> str:
    whole = sequences == "whole" and isinstance(value, list | tuple)
    text = json.dumps(value) if isinstance(value, Mapping | list | tuple) and not whole else str(value)
    return text if len(text) <= MAX_PARAM_VALUE else text[: MAX_PARAM_VALUE - 3] + "..."


def mlflow_params(config: Mapping[str, Any], *, sequences: Sequences = "indexed") -> dict[str, str]:
    """`flatten` restricted to keys MLflow accepts."""
    return {k[:MAX_KEY]: v for k, v in flatten(config, sequences=sequences).items()}
