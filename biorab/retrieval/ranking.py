"""Turning an index's candidate scores into hits: deterministic order, de-duplication and top-score ties.

This is the retriever's own search (`Retriever.search(queries, k)`); the rule that selects a prompt's hits
from them (a run's k, ties within a pool, dedupe) is `biorab.retrieval.selection`.

Candidates are ordered by score (descending), then by corpus position, so equal scores always come out in
the same order whatever the index library did. With ``keep_ties`` every item whose score equals the k-th
selected score is kept too; with k=1 this is the paper's default (all items tied at the top score,
de-duplicated: the original's ``np.where(arr == np.max(arr))``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from biorab.common.records import CorpusItem, Hit


@dataclass(frozen=True)
class Selection:
    """The picked (corpus position, score) pairs, and whether more candidates are needed to be exact."""

    picked: list[tuple[int, float]]
    needs_more: bool


def order_candidates(scores: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort candidates by score descending, then by corpus position ascending."""
    order = np.lexsort((positions, -scores))
    return scores[order], positions[order]


def top_candidates(scores: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The best `m` of a full score vector, ordered by `order_candidates`."""
    n = scores.shape[0]
    positions = np.arange(n) if m >= n else np.argpartition(-scores, m - 1)[:m]
    return order_candidates(scores[positions], positions)


def select(
    scores: np.ndarray,
    positions: np.ndarray,
    k: int,
    *,
    keep_ties: bool,
    dedupe_keys: Sequence[Hashable] | None,
    complete: bool,
) -> Selection:
    """Pick up to `k` distinct items from ordered candidates.

    Args:
        scores: candidate scores, ordered by `order_candidates`.
        positions: their corpus positions.
        k: how many distinct items to return (more with `keep_ties`).
        keep_ties: also keep every item whose score equals the k-th one.
        dedupe_keys: per corpus position, the identity used for de-duplication (None: no de-duplication).
        complete: the candidates are the whole corpus (else the lowest candidate score may hide ties).

    Returns:
        The selection; ``needs_more`` is True when the answer depends on candidates not given.
    """
    picked: list[tuple[int, float]] = []
    seen: set[Hashable] = set()
    cutoff: float | None = None
    floor = float(scores[-1]) if len(scores) else 0.0
    for score, position in zip(scores.tolist(), positions.tolist(), strict=True):
        if cutoff is not None and score < cutoff:
            return Selection(picked, False)
        if not complete and score == floor:
            # Items tied with the lowest candidate may continue past the candidate list.
            return Selection(picked, True)
        identity = dedupe_keys[position] if dedupe_keys is not None else position
        if identity in seen:
            continue
        seen.add(identity)
        picked.append((position, score))
        if len(picked) == k:
            if not keep_ties:
                return Selection(picked, False)
            cutoff = score
    return Selection(picked, not complete)


def to_hits(items: Sequence[CorpusItem], picked: Sequence[tuple[int, float]]) -> list[Hit]:
    """Hits for the picked (position, score) pairs, ranked from 0."""
    return [
        Hit(
            doc_id=items[p].id,
            score=s,
            rank=r,
            key=items[p].key,
            value=items[p].value,
            dataset=items[p].dataset,
        )
        for r, (p, s) in enumerate(picked)
    ]
