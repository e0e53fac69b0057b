"""BM25 on bm25s: a sparse, eagerly scored index (hundreds of times faster than rank_bm25 at query time).

Defaults, all configurable: the Lucene BM25 variant with k1=1.5, b=0.75; lowercasing; the tokenizer
``(?u)\\b\\w\\w+\\b`` (words of two or more word characters, the scikit-learn pattern bm25s uses); NLTK's
English stopword list. Documents that share no term with the query are never returned (as in
Lucene, and also for the ``bm25l``/``bm25+`` variants that give them a floor score), so a query without
any indexed term gets no hits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import bm25s
import numpy as np

from biorab.retrieval.base import IndexedRetriever, RetrieverParams
from biorab.retrieval.ranking import order_candidates


class BM25Params(RetrieverParams):
    """BM25 params.

    Attributes:
        method: bm25s variant: ``lucene`` (default), ``robertson``, ``atire``, ``bm25l`` or ``bm25+``.
        k1, b: term-frequency saturation and length normalisation.
        delta: the lower bound added by ``bm25l`` / ``bm25+``.
        stopwords: ``english`` (NLTK's list), ``none``, or an explicit list of words.
        lower: lowercase before tokenizing.
        token_pattern: the regular expression whose matches are the tokens.
    """

    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = "lucene"
    k1: float = 1.5
    b: float = 0.75
    delta: float = 0.5
    stopwords: Literal["english", "none"] | tuple[str, ...] = "english"
    lower: bool = True
    token_pattern: str = r"(?u)\b\w\w+\b"


class BM25Retriever(IndexedRetriever):
    """Lexical retrieval with bm25s."""

    name = "bm25"
    Params = BM25Params

    def __init__(self, params: BM25Params | None = None, **context: object) -> None:
        super().__init__(params, **context)  # type: ignore[arg-type]
        self.params: BM25Params
        self._model: bm25s.BM25 | None = None
        self._query_tokens: dict[str, list[str]] = {}

    def tokenize(self, texts: list[str]) -> list[list[str]]:
        """Tokens of each text, with this retriever's lowercasing, pattern and stopwords."""
        stopwords = None if self.params.stopwords == "none" else self.params.stopwords
        tokens = bm25s.tokenize(
            texts,
            lower=self.params.lower,
            token_pattern=self.params.token_pattern,
            stopwords=list(stopwords) if isinstance(stopwords, tuple) else stopwords,
            return_ids=False,
            show_progress=False,
        )
        return [list(doc) for doc in tokens]

    def _build(self, texts: list[str]) -> None:
        p = self.params
        self._model = bm25s.BM25(k1=p.k1, b=p.b, delta=p.delta, method=p.method)
        self._model.index(self.tokenize(texts), show_progress=False)

    def _save(self, folder: Path) -> None:
        assert self._model is not None
        self._model.save(str(folder), show_progress=False)

    def _load(self, folder: Path) -> None:
        self._model = bm25s.BM25.load(str(folder), show_progress=False)

    def _prepare_queries(self, texts: list[str]) -> None:
        # One tokenizer call for the whole batch: per-query calls cost more than the scoring itself.
        unique = list(dict.fromkeys(texts))
        self._query_tokens = dict(zip(unique, self.tokenize(unique), strict=True))

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every corpus item for `query`."""
        return self._score(query)[0]

    def _score(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """All scores, and the positions of the items sharing at least one term with `query`.

        Sums the eagerly computed per-(term, document) scores of the bm25s index with `np.bincount`
        (several times faster than bm25s's `np.add.at` loop, in float64), and adds the non-occurrence
        score of the ``bm25l``/``bm25+`` variants like bm25s does.
        """
        assert self._model is not None
        n = len(self._items)
        tokens = self._query_tokens.get(query)
        ids = np.asarray(
            self._model.get_tokens_ids(tokens if tokens is not None else self.tokenize([query])[0])
        )
        if ids.size == 0:
            return np.zeros(n), np.zeros(0, dtype=np.int64)
        data, indices, indptr = (self._model.scores[name] for name in ("data", "indices", "indptr"))
        # Plain Python ints: slicing with them is much faster than with numpy scalars.
        spans = list(zip(indptr[ids].tolist(), indptr[ids + 1].tolist(), strict=True))
        docs = np.concatenate([indices[start:end] for start, end in spans])
        weights = np.concatenate([data[start:end] for start, end in spans])
        scores: np.ndarray = np.bincount(docs, weights=weights, minlength=n).astype(np.float64, copy=False)
        if self._model.nonoccurrence_array is not None:
            scores += float(self._model.nonoccurrence_array[ids].sum())
        matched = np.zeros(n, dtype=bool)
        matched[docs] = True
        return scores, np.flatnonzero(matched)

    def _candidates(self, queries: list[str], m: int) -> list[tuple[np.ndarray, np.ndarray, bool]]:
        out = []
        for query in queries:
            scores, matching = self._score(query)
            complete = m >= matching.size
            if not complete:
                best = np.argpartition(-scores[matching], m - 1)[:m]
                matching = matching[best]
            ordered_scores, positions = order_candidates(scores[matching], matching)
            out.append((ordered_scores, positions, complete))
        return out
