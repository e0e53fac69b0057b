"""Flags in ``--help`` without a value placeholder, for every command of the app at once.

typer's rich help prints every option's type, flags included: ``--help <bool>``, ``--json <bool>``, which
reads as if a value were expected (``--json true`` is then a usage error). Click's plain help writes none
for flags; the rich one has no switch for it, but shows an option's `metavar` instead of its type when
one is set. The command and group classes below give every flag (``--x``, ``--x/--no-x``, counters, and
the ``--help`` option click adds by itself) an empty metavar; `use_flag_help` puts them on every command
and group registered on an app, so a new command gets them without asking.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption
from typer.models import DefaultPlaceholder


class _FlagsShowNoValue:
    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]  # the typer class mixed in below
        for param in params:  # the help option included: click builds it on first use, inside get_params
            if isinstance(param, TyperOption) and (param.is_flag or param.count) and param.metavar is None:
                param.metavar = ""
        return params


class FlagHelpCommand(_FlagsShowNoValue, TyperCommand):
    """A typer command whose help shows flags without a value placeholder."""


class FlagHelpGroup(_FlagsShowNoValue, TyperGroup):
    """A typer group whose help shows flags without a value placeholder."""


def _unset(value: Any) -> bool:
    """No class chosen: typer's defaults (``app.command()`` fills in `TyperCommand` itself)."""
    return value is None or isinstance(value, DefaultPlaceholder) or value in (TyperCommand, TyperGroup)


def use_flag_help(app: typer.Typer) -> None:
    """Give `app`, and every command and group registered on it (recursively), the classes above unless
    one chose a class of its own. Call it after every command is registered."""
    if _unset(app.info.cls):
        app.info.cls = FlagHelpGroup
    for command in app.registered_commands:
        if _unset(command.cls):
            command.cls = FlagHelpCommand
    for group in app.registered_groups:
        if _unset(group.cls):
            group.cls = FlagHelpGroup
        if group.typer_instance is not None:
            use_flag_help(group.typer_instance)
