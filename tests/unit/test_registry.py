from __future__ import annotations

import pytest

from biorab.common.build import build
from biorab.common.errors import ConfigError, UnknownNameError
from biorab.common.params import Params
from biorab.common.registry import Registry


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


def test_params_of_a_lazy_entry_come_from_its_light_module_alone() -> None:
    """Checking params loads only the module named by ``params=``: here the component's own module does
    not even exist, as a heavy one (torch) may be absent on the machine that validates."""
    from biorab.common.build import build_params

    reg: Registry[object] = Registry("widget")
    reg.add_lazy("heavy", "biorab_no_such_module_anywhere:Heavy",
                 params="biorab.generation.base:SamplingParams")
    checked = build_params(reg, "heavy", {"max_tokens": 7})
    assert checked is not None and checked.model_dump()["max_tokens"] == 7
    with pytest.raises(ConfigError, match="'max_tokenz'.*unknown key"):
        build_params(reg, "heavy", {"max_tokenz": 7})
    with pytest.raises(ModuleNotFoundError, match="biorab_no_such_module_anywhere"):
        reg.get("heavy")  # building it still imports the component
    with pytest.raises(UnknownNameError):
        reg.params_of("heavier")
    with pytest.raises(ValueError, match="module:attribute"):
        reg.add_lazy("odd", "collections:OrderedDict", params="no-colon")


def test_params_of_a_loaded_or_plain_entry_is_its_params_attribute() -> None:
    reg = _registry()
    assert reg.params_of("sprocket") is reg.get("sprocket").Params  # type: ignore[attr-defined]
    assert reg.params_of("ordered") is None  # OrderedDict has no Params


def test_declared_attribute_is_read_from_its_light_module_until_the_component_loads() -> None:
    reg: Registry[object] = Registry("widget")
    reg.add_lazy("ordered", "collections:OrderedDict", declared={"maxsize": "functools:WRAPPER_ASSIGNMENTS"})
    import functools

    assert reg.attribute_of("ordered", "maxsize") is functools.WRAPPER_ASSIGNMENTS
    assert "ordered" not in reg._objects  # read without loading the component
    assert reg.attribute_of("ordered", "fromkeys") is not None
    reg.get("ordered")
    assert reg.attribute_of("ordered", "maxsize") is None  # loaded: the class itself answers
