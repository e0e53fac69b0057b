"""Evidence order: the same selected hits of a query, shown to the model in another order.

Studies of conflicting medical evidence (HealthContradict) find that reversing the order of the same
documents flips answers; a retrieval entry's ``order:`` asks that question of any testbed. The hits are the
ones the retriever selected (the hit cache is read and written under the unordered key, so an ordered cell
and its ``retrieved`` twin see the same hits); only their order in the prompt changes. Each `Hit` keeps its
``rank`` from retrieval (0: the retriever's best), so a row's hits record the permutation applied: the
shown position is the hit's index in the row, the retrieved one its ``rank``.

Orders:

- ``retrieved``: as retrieved, best first (the default; the paper's setup);
- ``reverse``: worst first (the best hit last, nearest the question);
- ``shuffle``: a seeded permutation, drawn per query from ``sha256(seed, query)`` (the same seed and query
  give the same order in every process);
- ``misleading_first`` / ``misleading_middle`` / ``misleading_last``: the best-ranked *misleading* hit
  moved to position 1, to position ``(n + 1) // 2`` (1-based; the upper middle of an even list is not
  used: 2 of 4, 2 of 3, 1 of 2) or to position n; the other hits keep their retrieved order. A query
  without a misleading hit keeps the retrieved order.

A hit is *misleading* when the testbed's ledger changed its item to a wrong label and the hit carries that
label (`misleading_ids`): the testbed's own corruption, known before any answer. (The attribution's
``corrupted`` tag, `biorab.attribution.evidence`, is the measure after the fact and also counts labels a
corpus method made wrong.)
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from biorab.common.records import Hit

EvidenceOrder = Literal["retrieved", "reverse", "shuffle", "misleading_first", "misleading_middle",
                        "misleading_last"]
ORDERS: tuple[str, ...] = get_args(EvidenceOrder)
#: The orders that move a misleading hit: they need a testbed whose ledger corrupts labels.
MISLEADING_ORDERS: tuple[str, ...] = ("misleading_first", "misleading_middle", "misleading_last")


def misleading_ids(entries: Iterable[object]) -> dict[str, str]:
    """Item id → the wrong label the ledger gave it (`LedgerEntry` objects; removed values are not wrong
    labels)."""
    return {e.item_id: e.corrupted for e in entries  # type: ignore[attr-defined]
            if getattr(e, "corrupted", None) is not None}


def is_misleading(hit: Hit, wrong: Mapping[str, str]) -> bool:
    """Whether `hit` carries the wrong label its testbed's ledger gave its item."""
    return hit.value is not None and wrong.get(hit.doc_id) == hit.value


def target_position(order: str, n: int) -> int:
    """The 0-based position a ``misleading_*`` order puts the misleading hit at among `n` hits.

    >>> [target_position("misleading_middle", n) for n in (1, 2, 3, 4, 5)]
    [0, 0, 1, 1, 2]
    """
    if order == "misleading_first":
        return 0
    if order == "misleading_last":
        return n - 1
    if order == "misleading_middle":
        return (n + 1) // 2 - 1
    raise ValueError(f"{order!r} moves no misleading hit")


def shuffle_rng(seed: int, query: str) -> random.Random:
    """The permutation's generator of one query: seeded by ``sha256(seed \\x1f query)``, stable across
    processes (unlike `hash`)."""
    digest = hashlib.sha256(f"{seed}\x1f{query}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def order_hits(hits: Sequence[Hit], order: str, *, wrong: Mapping[str, str] | None = None, seed: int = 0,
               query: str = "") -> list[Hit]:
    """`hits` (as retrieved, best first) in `order` (see the module docstring); the hits themselves, their
    ``rank`` included, are unchanged.

    >>> hits = [Hit(str(i), 1.0, i, "k", "v" + str(i)) for i in range(4)]
    >>> [h.doc_id for h in order_hits(hits, "reverse")]
    ['3', '2', '1', '0']
    >>> [h.doc_id for h in order_hits(hits, "misleading_first", wrong={"2": "v2"})]
    ['2', '0', '1', '3']
    """
    out = list(hits)
    if order == "retrieved" or len(out) < 2:
        return out
    if order == "reverse":
        return out[::-1]
    if order == "shuffle":
        shuffle_rng(seed, query).shuffle(out)
        return out
    if order not in MISLEADING_ORDERS:
        raise ValueError(f"unknown evidence order {order!r} (one of {', '.join(ORDERS)})")
    found = next((i for i, hit in enumerate(out) if is_misleading(hit, wrong or {})), None)
    if found is None:
        return out
    moved = out.pop(found)
    out.insert(target_position(order, len(hits)), moved)
    return out


@dataclass(frozen=True)
class HitOrder:
    """One retrieval entry's order with what it needs: the testbed's wrong labels and the seed."""

    order: str
    wrong: Mapping[str, str]
    seed: int = 0

    def apply(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        return order_hits(hits, self.order, wrong=self.wrong, seed=self.seed, query=query)
