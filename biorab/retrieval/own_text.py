"""A query's own text among its hits: the one normalization behind the leakage audit (`biorab data
leakage`), the ``exclude_test_duplicates`` switch of a retrieval entry and each cell's leak share.

A test instance whose sentence also sits in the retrieval corpus (the labeled corpus is the training split,
and datasets repeat sentences across splits) can retrieve its own text, often with its own label: the
retrieved "example" is then the answer. Texts are compared after lower-casing and collapsing whitespace,
so copies that differ only in case or spacing count too (`biorab.corpora.text_identity.normalized_text`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from biorab.common.records import Hit
from biorab.corpora.text_identity import normalized_text


def own_text_hits(query: str, hits: Iterable[Hit]) -> list[Hit]:
    """The hits whose key is `query`'s own text (normalized).

    >>> hits = [Hit("a", 2.0, 0, "Aspirin  caused rash.", "1"), Hit("b", 1.0, 1, "Other.", "0")]
    >>> [h.doc_id for h in own_text_hits("aspirin caused rash.", hits)]
    ['a']
    """
    own = normalized_text(query)
    return [hit for hit in hits if normalized_text(hit.key) == own]


def without_own_text(query: str, hits: Sequence[Hit]) -> list[Hit]:
    """`hits` (in order) without those whose key is `query`'s own text."""
    own = normalized_text(query)
    return [hit for hit in hits if normalized_text(hit.key) != own]


def leak_share(pairs: Iterable[tuple[str, Sequence[Hit]]]) -> tuple[int, int]:
    """(queries whose hits include their own text, queries) over (query, hits) pairs.

    >>> leak_share([("x", [Hit("a", 1.0, 0, "X", "1")]), ("y", [Hit("b", 1.0, 0, "z", "1")]), ("w", [])])
    (1, 3)
    """
    leaking = total = 0
    for query, hits in pairs:
        total += 1
        leaking += bool(own_text_hits(query, hits))
    return leaking, total
