"""One string matching a regex, drawn deterministically: what the fake engine answers to a prompt whose
constraint is a regex (``head|relation|tail`` lines, ``label; label`` lists), so that a rehearsal parses
and scores a well-formed answer for every task.

It walks the pattern as Python's own regex parser reads it (`re._parser`, the stdlib's), so it covers the
constructs the task constraints use: literals, classes (negated ones too), alternation, groups and
repeats. Repeats are kept short (at most `MAX_REPEAT` beyond their minimum), so an answer stays a few words.
"""

from __future__ import annotations

import functools
import random
import re
import string
from re import _constants as _c  # type: ignore[attr-defined]  # the stdlib parser (Python >= 3.11)
from re import _parser as _p  # type: ignore[attr-defined]
from typing import Any

#: Extra repetitions drawn beyond a repeat's minimum (``{1,96}`` gives 1..4 characters).
MAX_REPEAT = 3
#: Characters a negated or open class draws from: letters, so an entity reads as a word.
_ALPHABET = string.ascii_lowercase


def sample_regex(pattern: str, rng: random.Random) -> str:
    """A string that `re.fullmatch(pattern, ...)` accepts, drawn with `rng`.

    Raises:
        ValueError: the pattern uses a construct this sampler does not draw (a lookaround, a backreference).
    """
    out: list[str] = []
    _emit(_parsed(pattern), rng, out)
    text = "".join(out)
    if re.fullmatch(pattern, text) is None:  # a construct drawn wrongly must not pass as a valid answer
        raise ValueError(f"could not draw a string matching {pattern!r} (drew {text!r})")
    return text


@functools.lru_cache(maxsize=256)
def _parsed(pattern: str) -> Any:
    """The stdlib parse of `pattern`, once per pattern: a task has one constraint regex, and parsing it for
    every answer was 60 % of the fake engine's time (issue 45). `_emit` only reads the tree."""
    return _p.parse(pattern)


def _emit(parsed: Any, rng: random.Random, out: list[str]) -> None:
    for op, arg in parsed:
        if op == _c.LITERAL:
            out.append(chr(arg))
        elif op == _c.NOT_LITERAL:
            out.append(next(c for c in _ALPHABET if ord(c) != arg))
        elif op == _c.ANY:
            out.append(rng.choice(_ALPHABET))
        elif op == _c.IN:
            out.append(_class_char(arg, rng))
        elif op == _c.BRANCH:
            _emit(rng.choice(arg[1]), rng, out)
        elif op == _c.SUBPATTERN:
            _emit(arg[-1], rng, out)
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
            low, high, body = arg
            top = low + MAX_REPEAT if high == _c.MAXREPEAT else min(high, low + MAX_REPEAT)
            for _ in range(rng.randint(low, top)):
                _emit(body, rng, out)
        elif op in (_c.AT,):  # anchors match the empty string
            continue
        else:
            raise ValueError(f"regex construct {op} is not drawn by the fake engine")


def _class_char(items: Any, rng: random.Random) -> str:
    """One character of a class (``[a-z]``, ``[^|\\n]``)."""
    negate = bool(items) and items[0][0] == _c.NEGATE
    allowed: list[str] = []
    banned: list[str] = []
    for op, arg in items[1:] if negate else items:
        chars: list[str]
        if op == _c.LITERAL:
            chars = [chr(arg)]
        elif op == _c.RANGE:
            chars = [chr(c) for c in range(arg[0], arg[1] + 1)]
        elif op == _c.CATEGORY:
            chars = [c for c in string.printable if re.fullmatch(_CATEGORY_RE.get(arg, "."), c)]
        else:
            raise ValueError(f"regex class item {op} is not drawn by the fake engine")
        (banned if negate else allowed).extend(chars)
    pool = [c for c in _ALPHABET if c not in banned] if negate else allowed
    if not pool:
        raise ValueError("a character class with nothing to draw")
    return rng.choice(pool)


_CATEGORY_RE: dict[Any, str] = {
    _c.CATEGORY_DIGIT: r"\d", _c.CATEGORY_NOT_DIGIT: r"\D", _c.CATEGORY_SPACE: r"\s",
    _c.CATEGORY_NOT_SPACE: r"\S", _c.CATEGORY_WORD: r"\w", _c.CATEGORY_NOT_WORD: r"\W",
}
