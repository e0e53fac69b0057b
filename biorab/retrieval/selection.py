"""Which retrieved examples go into a prompt: the selection rule (top k, ties, de-duplication), defined once.

`Selection` is the one set of fields: a run config's retrieval entry (`biorab.experiment.RetrievalSpec`) and
a sweep's retriever profile inherit them, `biorab retrieve` and Serve build one, and `biorab.ral`'s
`CachedRetriever` applies one through `search_selected`, the one function that turns a retriever's ranked
hits into the selected ones:

1. the retriever is searched `selection.depth` deep (k plus `tie_pool` candidates when ties are kept), with
   its own de-duplication switched to the selection's (`index_params`), so duplicates never crowd out
   distinct candidates;
2. `select_hits` keeps the top k, every later candidate tied with the k-th score, and drops repeated
   (key, value) pairs;
3. with ``exclude_test_duplicates``, hits whose text is the query's own (`biorab.retrieval.own_text`) are
   dropped first, the retriever searched deeper until `depth` other candidates are found (or it has none
   left), so a test instance never retrieves its own sentence.

The selection's fields are also the hit cache key's (`biorab.caches.hits_key(**selection.key_fields())`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pydantic import Field, model_validator

from biorab.common.params import Params
from biorab.common.records import Hit
from biorab.retrieval.own_text import without_own_text


class Selection(Params):
    """How many retrieved examples go into a prompt, and how ties and duplicates are treated.

    Attributes:
        k: number of retrieved examples put into the prompt.
        keep_ties: also keep hits tied with the k-th score (the original kept every top-1 tie).
        tie_pool: how many extra candidates are fetched to find those ties.
        dedupe: drop retrieved examples whose (key, value) repeats an earlier one (the original's top-1
            with ties did; its BM25 top-3 classification prompts did not: ``dedupe: false``). The
            retriever is built with the same switch (`index_params`).
        exclude_test_duplicates: never retrieve a corpus item whose text is the query's own (lower-cased,
            whitespace collapsed). Off by default: the paper's setup, where 97 of Ade-corpus-v2's 500 test
            sentences sit in its labeled corpus (`biorab data leakage`).
    """

    k: int = Field(default=1, ge=1)
    keep_ties: bool = True
    tie_pool: int = Field(default=8, ge=0)
    dedupe: bool = True
    exclude_test_duplicates: bool = False

    @model_validator(mode="before")
    @classmethod
    def _not_in_params(cls, data: Any) -> Any:
        # A model with these fields beside the retriever's own `params` (a retrieval entry, a sweep's
        # retriever profile) owns the retriever's tie and duplicate switches: they are set from here.
        if "params" in cls.model_fields and isinstance(data, Mapping):
            return lift_selection_params(data)
        return data

    @property
    def depth(self) -> int:
        """How many candidates to ask the retriever for, so that ties with the k-th hit can be found."""
        return self.k + (self.tie_pool if self.keep_ties else 0)

    @property
    def selection(self) -> Selection:
        """The selection alone (of a model that inherits these fields among others, e.g. a retrieval
        entry of a run config)."""
        return Selection(k=self.k, keep_ties=self.keep_ties, tie_pool=self.tie_pool, dedupe=self.dedupe,
                         exclude_test_duplicates=self.exclude_test_duplicates)

    def key_fields(self) -> dict[str, Any]:
        """The selection's part of a hit cache key, as `biorab.caches.hits_key` keywords
        (``exclude_test_duplicates`` only when set, so that existing keys stay as they were)."""
        fields = {"k": self.k, "keep_ties": self.keep_ties, "tie_pool": self.tie_pool, "dedupe": self.dedupe}
        return {**fields, "exclude_test_duplicates": True} if self.exclude_test_duplicates else fields

    def index_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The retriever's params for this selection: `params` with ``dedupe: false`` added when duplicates
        are kept. Left out otherwise (the retriever's default is true), so that default settings keep
        their retriever fingerprints and hit cache keys. The retriever's own ``keep_ties`` stays off:
        ties are kept by `select_hits` within `depth`."""
        return dict(params) if self.dedupe else {**params, "dedupe": False}


def lift_selection_params(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """`data` (a retrieval entry as written) with the old spelling ``params: {dedupe: ...}`` moved to
    ``dedupe`` (with a `FutureWarning`); ``params.keep_ties`` is refused, since the entry's ``keep_ties`` and
    ``tie_pool`` decide the ties."""
    params = data.get("params")
    if not isinstance(params, Mapping) or not {"keep_ties", "dedupe"} & set(params):
        return data
    if "keep_ties" in params:
        raise ValueError(
            "params.keep_ties: ties are a selection setting; set keep_ties (and tie_pool) beside "
            "params, not inside"
        )
    old = params["dedupe"]
    if "dedupe" in data and data["dedupe"] != old:
        raise ValueError(
            f"params.dedupe={old!r} contradicts dedupe={data['dedupe']!r}; set only dedupe "
            "(params.dedupe is its old spelling)"
        )
    warnings.warn(
        "retrieval params.dedupe is deprecated: set dedupe beside params (same meaning)",
        FutureWarning,
        stacklevel=2,
    )
    return {**data, "dedupe": old, "params": {k: v for k, v in params.items() if k != "dedupe"}}


class Searchable(Protocol):
    """A retriever: ranked hits (best first) per query id."""

    def search(self, queries: Mapping[str, str], k: int) -> dict[str, list[Hit]]: ...


def search_selected(
    retriever: Searchable, queries: Mapping[str, str], selection: Selection
) -> dict[str, list[Hit]]:
    """Query id → its selected hits: `retriever` searched `selection.depth` deep, then `select_hits`
    (with ``exclude_test_duplicates``: over the candidates that are not the query's own text)."""
    if selection.exclude_test_duplicates:
        return _search_excluding_own_text(retriever, queries, selection)
    found = retriever.search(queries, selection.depth)
    return {qid: select_hits(found.get(qid, []), selection) for qid in queries}


def _search_excluding_own_text(
    retriever: Searchable, queries: Mapping[str, str], selection: Selection
) -> dict[str, list[Hit]]:
    """`select_hits` over each query's candidates without its own text, searching twice as deep each round
    until `selection.depth` candidates remain or the retriever returns fewer than asked (no more)."""
    out: dict[str, list[Hit]] = {}
    pending, depth = dict(queries), selection.depth
    while pending:
        found = retriever.search(pending, depth)
        deeper = {}
        for qid, text in pending.items():
            ranked = found.get(qid, [])
            kept = without_own_text(text, ranked)
            if len(kept) >= selection.depth or len(ranked) < depth:
                out[qid] = select_hits(kept, selection)
            else:
                deeper[qid] = text
        pending, depth = deeper, depth * 2
    return {qid: out[qid] for qid in queries}


def select_hits(hits: Sequence[Hit], selection: Selection) -> list[Hit]:
    """The top `k` hits, plus (with `keep_ties`) every later hit tied with the k-th score, and (with
    `dedupe`) without duplicate (key, value) pairs. `hits` are best first, as `Retriever.search` returns them.

    >>> h = [Hit("a", 2.0, 0, "x", "1"), Hit("b", 2.0, 1, "y", "1"), Hit("c", 1.0, 2, "z", "0")]
    >>> [x.doc_id for x in select_hits(h, Selection(k=1, keep_ties=True))]
    ['a', 'b']
    >>> [x.doc_id for x in select_hits(h, Selection(k=1, keep_ties=False))]
    ['a']
    >>> d = [Hit("a", 2.0, 0, "x", "1"), Hit("b", 1.5, 1, "x", "1"), Hit("c", 1.0, 2, "z", "0")]
    >>> [x.doc_id for x in select_hits(d, Selection(k=2, keep_ties=False))]
    ['a']
    >>> [x.doc_id for x in select_hits(d, Selection(k=2, keep_ties=False, dedupe=False))]
    ['a', 'b']
    """
    k = selection.k
    chosen = list(hits[:k])
    if selection.keep_ties and chosen and len(hits) > k:
        edge = chosen[-1].score
        chosen += [h for h in hits[k:] if math.isclose(h.score, edge, rel_tol=1e-9, abs_tol=1e-12)]
    if not selection.dedupe:
        return chosen
    seen: set[tuple[str, str | None]] = set()
    unique = []
    for hit in chosen:
        if (hit.key, hit.value) not in seen:
            seen.add((hit.key, hit.value))
            unique.append(hit)
    return unique
