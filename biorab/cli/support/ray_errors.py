"""A BioRAB error raised inside a Ray worker, out of Ray's wrapping: the CLI ends with its one line and
exit 2, as for the same error raised in-process, instead of Ray's 240-line traceback."""

from __future__ import annotations

import importlib.util

from biorab.common.errors import BioRABError


def biorab_cause(error: BaseException) -> BioRABError | None:
    """The BioRAB error under a Ray error (`pipelines.ray_executor.wrapped_cause`), or ``None`` when it is
    no Ray error or carries none (or Ray is not installed: nothing wraps errors)."""
    if importlib.util.find_spec("ray") is None:
        return None
    from pipelines.ray_executor import wrapped_cause

    return wrapped_cause(error, BioRABError)
