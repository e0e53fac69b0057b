"""Config blocks that a plug-in owns: the config module names the block, the plug-in supplies its model.

A field annotated ``Annotated[Any, Section("drugmech")]`` is validated by the model registered under
``"drugmech"`` in `biorab.common.registry.CONFIG_SECTIONS`, looked up when the config's schema is built. The
schema
is the model's own, so a value gets the model's instance and its errors (keys, messages) exactly as if the
field were annotated with the model; the config module just never imports an experiment kind or a
trainer. A registered model may define ``prepare_config(data)``, a hook on the whole raw config before it is
validated (the DrugMech block's ``chat`` default), run by `prepare_sections` only when its block is set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema

from biorab.common.registry import CONFIG_SECTIONS


@dataclass(frozen=True)
class Section:
    """Annotation marker: validate the field with the model registered as `name` in `CONFIG_SECTIONS`."""

    name: str

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return handler.generate_schema(CONFIG_SECTIONS.get(self.name))


def prepare_sections(data: Any, names: Iterable[str]) -> Any:
    """`data` (a raw config) after the ``prepare_config`` hook of each block in `names` that it sets."""
    for name in names:
        if isinstance(data, Mapping) and data.get(name) is not None:
            hook = getattr(CONFIG_SECTIONS.get(name), "prepare_config", None)
            data = hook(data) if hook is not None else data
    return data
