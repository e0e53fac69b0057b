"""Robust parsing of a multiple-choice answer: an option letter, or the text of an option.

In order: the earliest ``(X)``; "answer/option X"; a line that starts with ``X.``, ``X)``, ``X:`` or is just
``X``; then, when the options' texts are known, the earliest option text quoted in the answer (the
longest one when several start at the same place). An answer that repeats most of the options (an echo
of ``Answers: (A) ...; (B) ...``) is skipped. The canonical form is ``"(A)"``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from biorab.parsing.closed_labels import normalize
from biorab.parsing.segments import answer_lines, answer_regions

# Letters in any case: "(c)" and "Answer: c" are answers too (the canonical form is upper case).
_PAREN = re.compile(r"\(([A-Z])\)", re.I)
_NAMED = re.compile(r"\b(?:answer|option|choice|index)\s*(?:is|:)?\s*:?\s*\(?([A-Z])\b(?![\w'])", re.I)
_LEADING = re.compile(r"^\(?([A-Z])(?:[).:\]]|\s*$)", re.I)


def parse_choice(
    text: str, letters: Sequence[str], options: Mapping[str, str] | None = None
) -> str | None:
    """The chosen letter as ``"(X)"``, restricted to `letters`, or ``None``.

    >>> parse_choice("**B.** Hyperophy", ["A", "B", "C", "D"])
    '(B)'
    >>> parse_choice("Atrophy of the kidney", ["A", "B", "C", "D"], {"A": "Hyperplasia", "C": "Atrophy"})
    '(C)'
    """
    allowed = set(letters)
    texts = _option_texts(options, allowed)
    for region in answer_regions(text):
        letter = _letter_in_region(region, allowed) or _text_in_region(region, texts)
        if letter is not None:
            return f"({letter})"
    return None


def _letter_in_region(region: str, allowed: set[str]) -> str | None:
    found = [m.group(1).upper() for m in _PAREN.finditer(region) if m.group(1).upper() in allowed]
    if found and len(set(found)) < 3:
        return found[0]
    named = [m.group(1).upper() for m in _NAMED.finditer(region) if m.group(1).upper() in allowed]
    if named:
        return named[0]
    for line in answer_lines(region):
        leading = _LEADING.match(line)
        if leading and leading.group(1).upper() in allowed:
            return leading.group(1).upper()
    return None


def _text_in_region(region: str, texts: dict[str, str]) -> str | None:
    if not texts:
        return None
    answer = normalize(region)
    positions: dict[str, tuple[int, int]] = {}
    for letter, option in texts.items():
        match = re.search(rf"(?<!\w){re.escape(option)}(?!\w)", answer)
        if match:
            positions[letter] = (match.start(), -len(option))
    if not positions or (len(positions) >= 3 and len(positions) * 2 > len(texts)):
        return None
    return min(positions, key=lambda letter: positions[letter])


def _option_texts(options: Mapping[str, str] | None, allowed: set[str]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for key, value in (options or {}).items():
        letter = str(key).strip().strip("()").upper()
        norm = normalize(str(value))
        if letter in allowed and norm:
            texts[letter] = norm
    return texts
