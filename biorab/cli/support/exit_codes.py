"""The exit statuses of the `biorab` command, in one place (docs/reliability.md lists them)."""

from __future__ import annotations

OK = 0
#: Bad input: a config, a data file, a disk or store the user must fix (``error: <file>: ...``).
USAGE_OR_INPUT = 2
#: The run finished but some rows failed (e.g. every generation errored): its metrics are not scores.
INCOMPLETE = 3
#: Another run holds the output directory's lock.
LOCKED = 4
#: A command group of the CLI cannot be imported (a missing module or dependency): the install is broken.
BROKEN_INSTALL = 5
#: Interrupted (Ctrl-C / SIGINT), as shells report 128 + SIGINT.
INTERRUPTED = 130

INTERRUPT_MESSAGE = ("interrupted: the rows written so far are kept; run the same command again to resume "
                     "(or add --fresh to start over)")
