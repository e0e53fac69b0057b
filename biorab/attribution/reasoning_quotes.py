"""Whether a thinking model's reasoning names the lie (issue 43 item 5c): the reasoning text (the row's
``gen_reasoning``) quotes a changed item of a misleading hit (`AnswerFlags.changed`: the items its
corrupted label asserts that its original label does not, outside the gold).

An item is quoted when every one of its parts (a single label is one part; a triple item
``head|relation|tail`` three) occurs in the reasoning as a whole phrase: both lower-cased with whitespace
runs collapsed (`biorab.metrics.triples.normalize_element`, the answer items' own normalization) and the
phrase bounded by non-word characters, so ``rash`` is not found in ``rashes`` and a label ``1`` is found in
"label 1" but not in "10". An exact mention, not a paraphrase: a model that names the lie in other words is
not flagged (docs/metrics.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from biorab.metrics.triples import normalize_element


def quotes_item(reasoning: str, item: str) -> bool:
    """Whether normalized `reasoning` holds every ``|`` part of normalized `item` as a whole phrase.

    >>> quotes_item("The evidence says  Rash follows.", "rash")
    True
    >>> quotes_item("rashes are common", "rash"), quotes_item("label 10", "1")
    (False, False)
    >>> quotes_item("aspirin may cause rash", "aspirin|effect|rash")
    False
    """
    text = normalize_element(reasoning)
    parts = [normalize_element(p) for p in item.split("|")]
    return all(p and re.search(rf"(?<!\w){re.escape(p)}(?!\w)", text) for p in parts)


def quotes_corruption(reasoning: str | None, changed: Iterable[frozenset[str]]) -> bool | None:
    """Whether `reasoning` quotes a changed item of some misleading hit (`changed`: per hit); None when
    the row has no reasoning text (not a thinking reply: outside the denominator)."""
    if not reasoning or not reasoning.strip():
        return None
    return any(quotes_item(reasoning, item) for items in changed for item in items)
