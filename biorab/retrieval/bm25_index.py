"""A bm25s index built with whole-corpus numpy operations instead of bm25s's loop over documents.

bm25s scores every (term, document) pair when it indexes, one document at a time (a `Counter` and a few
small arrays each), which costs more than all of biorab's queries on the staged corpora. `VectorizedBM25`
overrides `build_index_from_ids`, the hook bm25s provides for this, and computes the same arrays at once:
the term frequencies of all (term, document) pairs from one `np.unique`, then bm25s's own idf,
non-occurrence and term-frequency functions applied to whole arrays. The element-wise operations and
dtypes are bm25s's (float32 counts and idf, float64 arithmetic, float32 storage), so the index is
identical, array for array, to the one bm25s builds; the matrix layout is scipy's CSC, as bm25s makes it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import bm25s
import numpy as np
from bm25s.scoring import (
    _build_idf_array,
    _build_nonoccurrence_array,
    _select_idf_scorer,
    _select_tfc_scorer,
)


def okapi_idf(df: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """rank_bm25's `BM25Okapi` idf, in float64: ``log(N - df + 0.5) - log(df + 0.5)``, and every negative
    value (a term in more than half of the documents) replaced by ``epsilon`` times the mean idf of the
    vocabulary (the mean taken before the replacement).

    bm25s's ``robertson`` clips those terms to 0 instead. On MedMCQA every key holds "question" and
    "choices", which rank_bm25 weighs 0.25 x 7.3 = 1.83 each (length-normalised, so they favour short
    keys): that alone moved the top-1 of 304 of 4,183 test queries.

    >>> okapi_idf(np.array([1, 1, 1, 4]), 4, 0.25).round(4).tolist()  # the last term is in every document
    [0.8473, 0.8473, 0.8473, 0.0215]
    """
    raw = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
    return np.where(raw < 0, epsilon * raw.mean(), raw)


class VectorizedBM25(bm25s.BM25):
    """`bm25s.BM25` whose index build is vectorized over the corpus (same index, same scores).

    With `okapi_epsilon` set it builds rank_bm25's `BM25Okapi` index instead: `okapi_idf` times bm25s's
    ``robertson`` term-frequency component scaled by ``k1 + 1`` (rank_bm25's formula), in float64 like
    rank_bm25.
    """

    def __init__(self, *args: Any, okapi_epsilon: float | None = None, **kwargs: Any) -> None:
        if okapi_epsilon is not None:
            kwargs.update(method="robertson", dtype="float64")
        super().__init__(*args, **kwargs)
        self.okapi_epsilon = okapi_epsilon

    def build_index_from_ids(
        self,
        unique_token_ids: Sequence[int],
        corpus_token_ids: Sequence[Sequence[int]],
        show_progress: bool = True,
        leave_progress: bool = False,
    ) -> dict[str, Any]:
        """The bm25s ``scores`` dict (CSC data, indices, indptr, num_docs) of the corpus token ids.

        Falls back to bm25s's loop unless the vocabulary ids are ``0 .. len(unique_token_ids) - 1``.
        """
        n_vocab, n_docs = len(unique_token_ids), len(corpus_token_ids)
        if list(unique_token_ids) != list(range(n_vocab)) or n_docs == 0:
            if self.okapi_epsilon is not None:
                raise ValueError("the okapi index needs token ids 0 .. n-1 and at least one document")
            return super().build_index_from_ids(
                unique_token_ids, corpus_token_ids, show_progress, leave_progress
            )
        lengths = np.fromiter(map(len, corpus_token_ids), dtype=np.int64, count=n_docs)
        avg_doc_len = np.array([len(ids) for ids in corpus_token_ids]).mean()  # as bm25s computes it
        tokens = np.fromiter(
            itertools.chain.from_iterable(corpus_token_ids), dtype=np.int64, count=int(lengths.sum())
        )
        # One key per (term, document), sorted by term then document: the CSC order scipy gives bm25s.
        keys, tf = np.unique(tokens * n_docs + np.repeat(np.arange(n_docs), lengths), return_counts=True)
        terms, docs = np.divmod(keys, n_docs)
        df = np.bincount(terms, minlength=n_vocab)
        doc_frequencies = dict(enumerate(df.tolist()))
        idf_fn = _select_idf_scorer(self.idf_method)
        tfc_fn = _select_tfc_scorer(self.method)
        self.nonoccurrence_array = None
        if self.method in self.methods_requiring_nonoccurrence:
            self.nonoccurrence_array = _build_nonoccurrence_array(
                doc_frequencies=doc_frequencies,
                n_docs=n_docs,
                compute_idf_fn=idf_fn,
                calculate_tfc_fn=tfc_fn,
                l_d=avg_doc_len,
                l_avg=avg_doc_len,
                k1=self.k1,
                b=self.b,
                delta=self.delta,
                dtype=self.dtype,
            )
        if self.okapi_epsilon is not None:
            idf = okapi_idf(df, n_docs, self.okapi_epsilon)
        else:
            idf = _build_idf_array(doc_frequencies, n_docs=n_docs, compute_idf_fn=idf_fn, dtype=self.dtype)
        tfc = tfc_fn(
            tf_array=tf.astype(self.dtype),
            l_d=lengths[docs],
            l_avg=avg_doc_len,
            k1=self.k1,
            b=self.b,
            delta=self.delta,
        )
        if self.okapi_epsilon is not None:
            tfc = tfc * (self.k1 + 1)  # rank_bm25 keeps the (k1 + 1) numerator that bm25s's robertson drops
        scores = idf[terms] * tfc
        if self.nonoccurrence_array is not None:
            scores -= self.nonoccurrence_array[terms]
        # The dtypes scipy's CSC conversion gives bm25s: int32 document ids (while they fit), int64 offsets.
        indptr = np.zeros(n_vocab + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        return {
            "data": scores.astype(self.dtype),
            "indices": docs.astype(np.int32 if n_docs < 2**31 else np.int64),
            "indptr": indptr,
            "num_docs": n_docs,
        }
