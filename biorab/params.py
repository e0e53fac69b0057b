"""The base of every configuration model: strict (unknown keys are errors) and inert (frozen)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Params(BaseModel):
    """Base class for a component's nested `Params` and for experiment configs.

    `extra="forbid"` turns a misspelt key into an error that names it; `frozen=True` keeps configs inert.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
