"""Character n-gram TF-IDF cosine similarity with scikit-learn's exact semantics (spec §9.5).

The original matches option texts (§9.4), graph node names (§10.1) and phenotype names (§8.1.2) with
``sklearn.feature_extraction.text.TfidfVectorizer``. This pure-Python copy of its semantics keeps the
library free of scikit-learn; the tests check it against scikit-learn itself.

* The vocabulary and IDF come from the fitted documents only; a query's unseen n-grams are ignored.
* ``idf(t) = ln((1 + N) / (1 + df(t))) + 1``; vectors are raw counts times IDF, then L2-normalised.
* Before n-gramming, runs of two or more whitespace characters become one space (scikit-learn's
  ``\\s\\s+``; a single newline is kept as is).
* ``char``: every substring of length n of the whole text. ``char_wb``: n-grams of each word padded with
  one space on each side; a padded word shorter than n yields itself once.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_WHITE_SPACES = re.compile(r"\s\s+")


def char_ngrams(text: str, min_n: int, max_n: int) -> list[str]:
    """The ``analyzer="char"`` n-grams of `text`."""
    text = _WHITE_SPACES.sub(" ", text)
    grams: list[str] = []
    for n in range(min_n, min(max_n + 1, len(text) + 1)):
        grams.extend(text[i : i + n] for i in range(len(text) - n + 1))
    return grams


def char_wb_ngrams(text: str, min_n: int, max_n: int) -> list[str]:
    """The ``analyzer="char_wb"`` n-grams of `text` (word-bounded, each word padded with spaces)."""
    grams: list[str] = []
    for word in _WHITE_SPACES.sub(" ", text).split():
        padded = f" {word} "
        for n in range(min_n, max_n + 1):
            if len(padded) <= n:  # a short word counts once, as a whole
                grams.append(padded)
                break
            grams.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return grams


class TfidfMatcher:
    """TF-IDF vectors fitted on a small corpus; `similarities` gives the cosine of a query to each document.

    Args:
        documents: The corpus the vocabulary and IDF are fitted on (already casefolded if wanted).
        ngram_range: ``(min_n, max_n)``.
        analyzer: ``"char"`` or ``"char_wb"``.
        lowercase: Lowercase texts before n-gramming (scikit-learn's default is True).

    >>> m = TfidfMatcher(["abc", "xyz"], ngram_range=(2, 3))
    >>> [round(s, 3) for s in m.similarities("abc")]
    [1.0, 0.0]
    """

    def __init__(
        self,
        documents: Sequence[str],
        *,
        ngram_range: tuple[int, int] = (2, 5),
        analyzer: str = "char",
        lowercase: bool = False,
    ) -> None:
        if analyzer not in ("char", "char_wb"):
            raise ValueError(f"analyzer must be 'char' or 'char_wb', got {analyzer!r}")
        self.ngram_range, self.analyzer, self.lowercase = ngram_range, analyzer, lowercase
        counts = [self._counts(d) for d in documents]
        df: Counter[str] = Counter()
        for c in counts:
            df.update(c.keys())
        n_docs = len(documents)
        self.idf = {t: math.log((1 + n_docs) / (1 + k)) + 1.0 for t, k in df.items()}
        self.vectors = [self._weigh(c) for c in counts]

    def _counts(self, text: str) -> Counter[str]:
        if self.lowercase:
            text = text.lower()
        grams = char_ngrams if self.analyzer == "char" else char_wb_ngrams
        return Counter(grams(text, *self.ngram_range))

    def _weigh(self, counts: Counter[str]) -> dict[str, float]:
        vec = {t: k * self.idf[t] for t, k in counts.items() if t in self.idf}
        norm = math.sqrt(sum(v * v for v in vec.values()))
        return {t: v / norm for t, v in vec.items()} if norm > 0 else {}

    def vector(self, text: str) -> dict[str, float]:
        """The L2-normalised TF-IDF vector of `text` over the fitted vocabulary."""
        return self._weigh(self._counts(text))

    def similarities(self, text: str) -> list[float]:
        """Cosine similarity of `text` to each fitted document, in document order."""
        query = self.vector(text)
        return [sum(w * doc.get(t, 0.0) for t, w in query.items()) for doc in self.vectors]
