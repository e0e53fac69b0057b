"""The doctests of the metric functions run as part of the unit tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = (
    "base", "confusion", "curves", "triples", "auc", "awareness", "bootstrap", "task_scoring", "paired",
)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(f"biorab.metrics.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
