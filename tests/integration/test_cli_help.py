"""Every ``--help`` of the CLI, the root and each command and group at every depth, shows flags without a
value placeholder: ``--json`` / ``--no-json`` and ``--help`` take no value, and a ``<bool>`` beside them
reads as if one were expected (``--json true`` is then a usage error)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer
from typer.core import TyperOption
from typer.testing import CliRunner

from biorab.cli.main import app


def command_paths(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from command_paths(sub, (*path, name))


def flags(command: Any, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The long names of each flag of `command` (``--help`` included)."""
    ctx = command.make_context(" ".join(("biorab", *path)), [], resilient_parsing=True)
    return [
        tuple(n for n in (*p.opts, *p.secondary_opts) if n.startswith("--"))
        for p in command.get_params(ctx)
        if isinstance(p, TyperOption) and (p.is_flag or p.count)
    ]


def after_names(text: str, names: tuple[str, ...]) -> str:
    """What the options table shows after a flag's names, on the line that lists them."""
    pattern = "|".join(re.escape(n) for n in names)
    for line in text.splitlines():
        found = list(re.finditer(rf"(?<![\w-])({pattern})(?![\w-])", line))
        if found:
            return line[found[-1].end() :].strip(" │")
    raise AssertionError(f"{names} not in the help:\n{text}")


def test_no_flag_shows_a_value_placeholder() -> None:
    paths = list(command_paths(typer.main.get_command(app)))
    names = {" ".join(p) for p, _ in paths}
    # the walk reaches the root, its commands, its groups and their commands
    assert {
        "",
        "run",
        "validate",
        "score",
        "data",
        "data stats",
        "retrieve",
        "corpus",
        "corpus build",
        "drugmech",
        "models",
        "sweep",
    } <= names, names
    runner = CliRunner()
    checked = 0
    for path, command in paths:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}, prog_name="biorab")
        shown = f"biorab {' '.join(path)} --help:\n{result.output}"
        assert result.exit_code == 0, shown
        assert "<bool>" not in result.output, shown
        for flag in flags(command, path):
            # the help text follows the names at once: no `<type>` column in between
            assert not after_names(result.output, flag).startswith("<"), (flag, shown)
            checked += 1
    assert checked > len(paths)  # every command's --help, and the other flags
