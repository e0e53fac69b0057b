"""A BioRAB error raised inside a Ray worker, out of Ray's wrapping: the CLI ends with its one line and
exit 2, as for the same error raised in-process, instead of Ray's 240-line traceback."""

from __future__ import annotations

import re

from biorab.errors import BioRABError

#: how a worker's formatted traceback names a BioRAB error: ``biorab.errors.RetrievalError: message``
_LINE = re.compile(r"^\s*biorab\.errors\.(\w+): (.+)$")


def biorab_cause(error: BaseException) -> BioRABError | None:
    """The BioRAB error under a Ray error (its chain, else its text's last ``biorab.errors.X: ...`` line),
    or ``None`` when it is no Ray error or carries none."""
    import biorab.errors as errors

    try:
        from ray.exceptions import RayError
    except ImportError:  # no Ray installed: nothing wraps errors
        return None
    if not isinstance(error, RayError):
        return None
    seen: set[int] = set()
    todo: list[BaseException] = [error]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, BioRABError) and not isinstance(e, RayError):
            return e
        todo += [c for c in (e.__cause__, e.__context__, getattr(e, "cause", None))
                 if isinstance(c, BaseException)]
    for line in reversed(str(error).splitlines()):
        match = _LINE.match(line)
        if match:
            kind = getattr(errors, match.group(1), BioRABError)
            cls = kind if isinstance(kind, type) and issubclass(kind, BioRABError) else BioRABError
            try:
                return cls(match.group(2))
            except TypeError:  # an error class with a different constructor: its message still holds
                return BioRABError(match.group(2))
    return None
