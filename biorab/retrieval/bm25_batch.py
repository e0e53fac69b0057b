"""Batched BM25 candidate search over a bm25s score matrix: many queries scored by one sparse product.

The bm25s index stores one eagerly computed score per (term, document) as a term-major sparse matrix ``S``.
A block of queries becomes a (queries x terms) matrix ``Q`` of token-occurrence counts, so ``Q @ S`` holds,
per query, the sum over its tokens of their scores: the per-query summation of `BM25Retriever.scores`,
done in C for the whole block. Sums are in float64 over float32 scores and small integer counts, which is
exact, so the result does not depend on the order of the terms. The candidates are then picked for all
queries of the block at once (a per-row lower bound from column-block maxima, then one comparison) and
ordered with the keys of `order_candidates`, so ties come out exactly as in the per-query path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

# Dense score cells per block (float64): 2 MiB, small enough to stay in cache while the block's scores are
# scanned four times, whatever the corpus size.
BLOCK_CELLS = 2**18
MAX_BLOCK_ROWS = 512

Candidates = tuple[np.ndarray, np.ndarray, bool]


@dataclass(frozen=True)
class TermMatrix:
    """The score matrix of a bm25s index, ready for batched products.

    Attributes:
        scores: terms x documents, float64.
        pattern: the same structure with every stored value 1, or None when every stored score is positive
            (then a product entry is non-zero exactly when the document shares a term with the query).
        nonoccurrence: the per-term floor score of ``bm25l``/``bm25+`` (float32, as bm25s stores it), or
            None.
    """

    scores: sp.csr_matrix
    pattern: sp.csr_matrix | None
    nonoccurrence: np.ndarray | None

    @property
    def n_terms(self) -> int:
        return int(self.scores.shape[0])

    @property
    def n_docs(self) -> int:
        return int(self.scores.shape[1])


def term_matrix(scores: dict[str, object], nonoccurrence: np.ndarray | None) -> TermMatrix:
    """Wrap the ``scores`` dict of a bm25s index (document-major CSC = term-major CSR)."""
    data = np.asarray(scores["data"])
    indices = np.asarray(scores["indices"])
    indptr = np.asarray(scores["indptr"])
    shape = (indptr.size - 1, int(scores["num_docs"]))  # type: ignore[call-overload]
    matrix = sp.csr_matrix((data.astype(np.float64), indices, indptr), shape=shape)
    # Zero or negative scores (robertson/atire idf) can cancel to an exact 0, which the product drops.
    pattern = None
    if data.size and not bool((data > 0).all()):
        pattern = sp.csr_matrix((np.ones(data.size), indices, indptr), shape=shape)
    return TermMatrix(matrix, pattern, nonoccurrence)


def query_matrix(
    token_ids: Sequence[Sequence[int]], n_terms: int
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Token-occurrence counts (queries x terms), and the (query, term id) pairs kept, in query order.

    Ids outside the scored terms (bm25s's empty-string token) match no document and are dropped.
    """
    lengths = np.fromiter((len(ids) for ids in token_ids), dtype=np.int64, count=len(token_ids))
    cols = np.fromiter((i for ids in token_ids for i in ids), dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(token_ids)), lengths)
    keep = (cols >= 0) & (cols < n_terms)
    rows, cols = rows[keep], cols[keep]
    # Duplicate (query, term) pairs are summed: a token repeated in the query counts its scores again.
    counts = sp.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(len(token_ids), n_terms))
    return counts, rows, cols


def block_rows(n_docs: int) -> int:
    """How many queries one block scores."""
    return max(1, min(MAX_BLOCK_ROWS, BLOCK_CELLS // max(n_docs, 1)))


def candidates(terms: TermMatrix, token_ids: Sequence[Sequence[int]], m: int) -> list[Candidates]:
    """For each query (its vocabulary ids, in query order), the best `m` matching documents.

    Returns, per query, (scores, positions) ordered by score descending then position, and whether they are
    all the documents sharing a term with the query.
    """
    out: list[Candidates] = []
    step = block_rows(terms.n_docs)
    for start in range(0, len(token_ids), step):
        out.extend(_block(terms, token_ids[start : start + step], m))
    return out


def _block(terms: TermMatrix, token_ids: Sequence[Sequence[int]], m: int) -> list[Candidates]:
    dense, matched, lowest = _dense_scores(terms, *query_matrix(token_ids, terms.n_terms))
    rows, cols = np.nonzero(dense >= _lower_bounds(dense, m, lowest)[:, None])
    scores = dense[rows, cols]
    # order_candidates's keys (score descending, then position), block-wide with the row as first key.
    order = np.lexsort((cols, -scores, rows))
    scores, cols = scores[order], cols[order]
    ends = np.cumsum(np.bincount(rows, minlength=dense.shape[0])).tolist()
    out = []
    for start, end, count in zip([0, *ends[:-1]], ends, matched.tolist(), strict=True):
        top = min(end, start + m)  # the best m; ties at the m-th score are settled by `select`
        out.append((scores[start:top], cols[start:top], m >= count))
    return out


def _lower_bounds(dense: np.ndarray, m: int, lowest: float) -> np.ndarray:
    """Per row, a score such that the row's best `m` matching cells (and all ties) are at or above it.

    The m-th largest of the maxima of column blocks is such a bound (the m best blocks each hold a cell at
    least that high) and is found on a few hundred block maxima instead of the whole row. It is raised
    to `lowest`, the least score of a matching cell, so unmatched cells are never selected.
    """
    rows, n = dense.shape
    width = max(1, min(64, n // (4 * m)))
    maxima = np.maximum.reduceat(dense, np.arange(0, n, width), axis=1)
    if maxima.shape[1] <= m:
        return np.full(rows, lowest)
    bound = np.partition(maxima, maxima.shape[1] - m, axis=1)[:, maxima.shape[1] - m]
    return np.maximum(bound, lowest)


def _dense_scores(
    terms: TermMatrix, counts: sp.csr_matrix, rows: np.ndarray, cols: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float]:
    """Scores of a block (queries x documents), matches per query, and the least score of a match.

    When every stored score is positive and there is no floor score, unmatched cells stay 0 and matches
    are > 0; otherwise unmatched cells are set to -inf.
    """
    dense = (counts @ terms.scores).toarray()
    if terms.pattern is None and terms.nonoccurrence is None:
        return dense, np.count_nonzero(dense, axis=1), float(np.nextafter(0.0, 1.0))
    unmatched = dense == 0 if terms.pattern is None else (counts @ terms.pattern).toarray() == 0
    if terms.nonoccurrence is not None:
        # float32 sums in query order, as bm25s and BM25Retriever.scores add them.
        per_query = np.split(cols, np.cumsum(np.bincount(rows, minlength=dense.shape[0]))[:-1])
        floor = [float(terms.nonoccurrence[ids].sum()) if ids.size else 0.0 for ids in per_query]
        dense += np.asarray(floor)[:, None]
    dense[unmatched] = -np.inf
    return dense, dense.shape[1] - np.count_nonzero(unmatched, axis=1), -float(np.finfo(np.float64).max)
