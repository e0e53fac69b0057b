"""Load a YAML file into a pydantic model, turning validation errors into `ConfigError`s.

The error names the offending key (dotted path) and the file, which is what a user needs to fix it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from biorab.common.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


class DuplicateKeyError(ValueError):
    """A YAML mapping repeats a key (PyYAML would silently keep the last value)."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses a key repeated in one mapping, naming it and its line."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if key in seen:
                first = seen[key]
                raise DuplicateKeyError(f"line {line}, key {key!r}: duplicate key (first at line {first})")
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping; a missing file, bad YAML or a non-mapping document is a `ConfigError`."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError("file not found", path=path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 (safe)
    except DuplicateKeyError as e:
        raise ConfigError(str(e), path=path) from e
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ConfigError(f"not valid YAML: {e}", path=path) from e
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"the document must be a mapping, got {type(data).__name__}", path=path)
    return data


def validate_mapping(
    model: type[M], data: dict[str, Any], *, path: str | Path | None = None, key_prefix: str | None = None
) -> M:
    """Validate `data` against `model`; the first error names the dotted key (under `key_prefix`) and file."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        key = ".".join([*([key_prefix] if key_prefix else []), *(str(part) for part in first["loc"])]) or None
        detail = first["msg"]
        if first["type"] == "extra_forbidden":
            detail = "unknown key"
        more = f" (and {e.error_count() - 1} more problem(s))" if e.error_count() > 1 else ""
        raise ConfigError(f"{detail}{more}", key=key, path=path) from e


def load_config(model: type[M], path: str | Path) -> M:
    """Read and validate a YAML config file."""
    return validate_mapping(model, read_yaml(path), path=path)
