"""BM25 on bm25s: a sparse, eagerly scored index (hundreds of times faster than rank_bm25 at query time).

Defaults, all configurable: the Lucene BM25 variant with k1=1.5, b=0.75; lowercasing; the tokenizer
``(?u)\\b\\w\\w+\\b`` (words of two or more word characters, the scikit-learn pattern bm25s uses); NLTK's
English stopword list. Documents that share no term with the query are never returned (as in
Lucene, and also for the ``bm25l``/``bm25+`` variants that give them a floor score), so a query without
any indexed term gets no hits.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from biorab.retrieval.base import IndexedRetriever, RetrieverParams

if TYPE_CHECKING:  # bm25s (and scipy, which it and bm25_batch import) load on first index or query only:
    # a fingerprint (`biorab plan`, `biorab validate`) needs neither, and they cost ~0.3 s to import
    import bm25s

    from biorab.retrieval import bm25_batch


class BM25Params(RetrieverParams):
    """BM25 params.

    Attributes:
        method: bm25s variant: ``lucene`` (default), ``robertson``, ``atire``, ``bm25l`` or ``bm25+``; or
            ``okapi``, rank_bm25's `BM25Okapi` (the original BioRAB library): robertson with negative idfs
            floored at ``epsilon`` x the mean idf, in float64 (`bm25_index.okapi_idf`).
        epsilon: the ``okapi`` idf floor factor (rank_bm25's default 0.25).
        k1, b: term-frequency saturation and length normalisation.
        delta: the lower bound added by ``bm25l`` / ``bm25+``.
        stopwords: ``english`` (NLTK's list), ``none``, or an explicit list of words.
        lower: lowercase before tokenizing.
        token_pattern: the regular expression whose matches are the tokens.
    """

    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+", "okapi"] = "lucene"
    k1: float = 1.5
    b: float = 0.75
    delta: float = 0.5
    epsilon: float = 0.25
    stopwords: Literal["english", "none"] | tuple[str, ...] = "english"
    lower: bool = True
    token_pattern: str = r"(?u)\b\w\w+\b"


class BM25Retriever(IndexedRetriever):
    """Lexical retrieval with bm25s."""

    name = "bm25"
    Params = BM25Params
    cheap_fingerprint = True  # no model: its fingerprint is its params and the bm25s version

    def __init__(self, params: BM25Params | None = None, **context: object) -> None:
        super().__init__(params, **context)  # type: ignore[arg-type]
        self.params: BM25Params
        self._model: bm25s.BM25 | None = None
        self._terms: bm25_batch.TermMatrix | None = None
        self._query_tokens: dict[str, list[str]] = {}

    def _digest_of(self, excluded: frozenset[str]) -> str:
        # `epsilon` only shapes the okapi index: left out otherwise, so existing fingerprints (index folders,
        # hit cache keys) are unchanged by its arrival.
        return super()._digest_of(excluded if self.params.method == "okapi" else excluded | {"epsilon"})

    def tokenize(self, texts: list[str]) -> list[list[str]]:
        """Tokens of each text, with this retriever's lowercasing, pattern and stopwords.

        The same tokens as ``bm25s.tokenize(..., return_ids=False)`` (lowercase, `findall`, drop stopwords),
        without its per-text rebuilding of the stopword set and its token-id round trip.
        """
        split = re.compile(self.params.token_pattern).findall
        stop = self._stopwords()
        if self.params.lower:
            return [[t for t in split(text.lower()) if t not in stop] for text in texts]
        return [[t for t in split(text) if t not in stop] for text in texts]

    def _stopwords(self) -> frozenset[str]:
        words = self.params.stopwords
        if words == "english":
            from bm25s.stopwords import STOPWORDS_EN

            return frozenset(STOPWORDS_EN)
        return frozenset() if words == "none" else frozenset(words)

    def _build(self, texts: list[str]) -> None:
        from biorab.retrieval.bm25_index import VectorizedBM25

        p = self.params
        if p.method == "okapi":
            self._model = VectorizedBM25(k1=p.k1, b=p.b, delta=p.delta, okapi_epsilon=p.epsilon)
        else:
            self._model = VectorizedBM25(k1=p.k1, b=p.b, delta=p.delta, method=p.method)
        # Token ids in order of first occurrence, handed to bm25s with the vocabulary: bm25s would otherwise
        # rebuild both from the token strings (its vocabulary order then varies with the string hash seed).
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(token, len(vocab)) for token in doc] for doc in self.tokenize(texts)]
        self._model.index((ids, vocab), show_progress=False)
        self._terms = None

    def _save(self, folder: Path) -> None:
        assert self._model is not None
        self._model.save(str(folder), show_progress=False)

    def _load(self, folder: Path) -> None:
        import bm25s

        self._model = bm25s.BM25.load(str(folder), show_progress=False)
        self._terms = None

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
        # All queries at once: one sparse product per block instead of a Python loop per query (the same
        # scores, exactly; see bm25_batch).
        from biorab.retrieval import bm25_batch

        assert self._model is not None
        if self._terms is None:
            self._terms = bm25_batch.term_matrix(self._model.scores, self._model.nonoccurrence_array)
        vocab = self._model.vocab_dict
        token_ids = []
        for query in queries:
            tokens = self._query_tokens.get(query)
            tokens = tokens if tokens is not None else self.tokenize([query])[0]
            token_ids.append([vocab[t] for t in tokens if t in vocab])
        return bm25_batch.candidates(self._terms, token_ids, m)
