"""The base of every configuration model: strict (unknown keys are errors) and inert (frozen)."""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator


def _numeric_only(annotation: Any) -> bool:
    """True for ``int``, ``float``, ``int | None`` ...: a field that only takes numbers."""
    types = {a for a in (get_args(annotation) or (annotation,)) if a is not type(None)}
    return bool(types) and types <= {int, float}


class Params(BaseModel):
    """Base class for a component's nested `Params` and for experiment configs.

    `extra="forbid"` turns a misspelt key into an error that names it; `frozen=True` keeps configs inert.
    A YAML ``true``/``false`` where a number belongs is an error (pydantic would read ``true`` as 1).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        name = info.field_name
        if isinstance(value, bool) and name is not None and _numeric_only(cls.model_fields[name].annotation):
            raise ValueError(f"expected a number, got {str(value).lower()} (a boolean)")
        return value
