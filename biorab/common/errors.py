"""The small error hierarchy of BioRAB.

Every message carries what a user needs to fix the problem: the file, the line or row, the field and,
where there is a closed set, the allowed values. Only the CLI turns these errors into exit codes.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


class BioRABError(Exception):
    """Base class of every error BioRAB raises on purpose."""


class DataError(BioRABError):
    """A data file (dataset, corpus, predictions, query file) is malformed.

    The message names the file, the 1-based line (or row) and the field when they are known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        where = []
        if self.path is not None:
            where.append(self.path)
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ConfigError(BioRABError):
    """A configuration file or option is invalid; the message names the key and the file."""

    def __init__(self, message: str, *, key: str | None = None, path: str | Path | None = None) -> None:
        self.key = key
        self.path = str(path) if path is not None else None
        where = []
        if self.path is not None:
            where.append(self.path)
        if key is not None:
            where.append(f"key {key!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class UnknownNameError(BioRABError, KeyError):
    """A registry lookup failed; the message suggests close names and lists all of them."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        import difflib

        names = sorted(known)
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        self.kind, self.name, self.known = kind, name, names
        super().__init__(f"unknown {kind} {name!r}.{hint} Known {kind}s: {', '.join(names) or '(none)'}")

    def __str__(self) -> str:  # KeyError would otherwise quote the whole message
        return str(self.args[0])


class ModelNotPreparedError(BioRABError):
    """A model the run needs has not been converted/cached yet; the message says which command makes it."""


class BackendError(BioRABError):
    """A generation backend failed in a way that retries did not fix."""


class BackendFatalError(BioRABError):
    """The backend cannot serve any row (a refused API key, permission or quota): the run stops with this one
    message instead of writing an error row per prompt, and resumes once the cause is fixed. Not a
    `BackendError`, which fails only the rows of one call."""


class RetrievalError(BioRABError):
    """Retrieval was asked for something impossible (empty corpus, k <= 0, missing model path)."""


class TrackingError(BioRABError):
    """The MLflow tracking store or server cannot be used; results on disk are kept, and the message says how
    to log them later (``biorab track RUN_DIR``)."""
