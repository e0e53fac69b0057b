from __future__ import annotations

import pytest

from biorab.build import build
from biorab.errors import ConfigError, UnknownNameError
from biorab.params import Params
from biorab.registry import Registry


def _registry() -> Registry[object]:
    reg: Registry[object] = Registry("widget")

    @reg.register("sprocket")
    class Sprocket:
        class Params(Params):
            teeth: int = 12

        def __init__(self, params: Sprocket.Params, *, colour: str = "grey") -> None:
            self.params, self.colour = params, colour

    reg.add_lazy("ordered", "collections:OrderedDict")
    return reg


def test_unknown_name_suggests_close_names() -> None:
    reg = _registry()
    with pytest.raises(UnknownNameError) as info:
        reg.get("sprockets")
    message = str(info.value)
    assert "Did you mean 'sprocket'?" in message
    assert "Known widgets: ordered, sprocket" in message


def test_lazy_entry_imports_on_first_use() -> None:
    reg = _registry()
    import collections

    assert reg.get("ordered") is collections.OrderedDict
    assert reg.names() == ["ordered", "sprocket"]


def test_build_validates_params_and_passes_context() -> None:
    reg = _registry()
    obj = build(reg, "sprocket", {"teeth": 7}, colour="red")
    assert (obj.params.teeth, obj.colour) == (7, "red")
    with pytest.raises(ConfigError, match="'teth'.*unknown key"):
        build(reg, "sprocket", {"teth": 7})


def test_double_registration_is_an_error() -> None:
    reg = _registry()
    with pytest.raises(ValueError, match="registered twice"):
        reg.add("sprocket", object())
