"""The retriever protocol and the shared machinery: input checks, fingerprints, index persistence and the
candidates -> hits loop.

An index is built once per (retriever index params, digest of the indexed texts) and persisted under
``cache_dir()/indexes/<index fingerprint>/<content digest>/``; a later `index()` of the same content loads
it instead of rebuilding.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from biorab.common.errors import RetrievalError
from biorab.common.params import Params
from biorab.common.paths import cache_dir
from biorab.common.records import CorpusItem, Hit
from biorab.retrieval.ranking import select, to_hits

# Bumped when the on-disk index layout changes, so old folders are never misread.
INDEX_FORMAT = 1
# Params that change neither the index nor the hits (left out of every fingerprint).
EXECUTION_ONLY: frozenset[str] = frozenset(
    {"persist", "batch_size", "device", "n_threads", "cache_embeddings", "stand_in_for"}
)
# Params that change the hits but not the index (left out of the index fingerprint).
SEARCH_ONLY: frozenset[str] = frozenset({"keep_ties", "dedupe", "ef_search", "depth", "rrf_k"})


@runtime_checkable
class Retriever(Protocol):
    """What every retriever offers: index a corpus once, then answer queries with ranked hits."""

    fingerprint: str

    def index(self, items: Sequence[CorpusItem]) -> None: ...

    def search(self, queries: Mapping[str, str], k: int) -> dict[str, list[Hit]]: ...


class RetrieverParams(Params):
    """Params every retriever shares.

    Attributes:
        keep_ties: also return every item tied with the k-th hit's score (the paper's top-1 with ties).
        dedupe: collapse items with identical (key, value) into the first one (the original de-duplicated
            its retrieved examples).
        fields: what is indexed: the key alone (default; the query is a test input, so it is matched to
            training inputs) or ``key_value`` (key and value joined by a newline, the original's form).
        persist: save the index under the cache dir and reuse it.
    """

    keep_ties: bool = False
    dedupe: bool = True
    fields: Literal["key", "key_value"] = "key"
    persist: bool = True


def check_k(k: int) -> int:
    """`k` must be a positive integer."""
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise RetrievalError(f"k must be a positive integer, got {k!r}")
    return k


def check_items(items: Sequence[CorpusItem]) -> list[CorpusItem]:
    """A corpus must be non-empty, hold `CorpusItem`s and have unique ids."""
    items = list(items)
    if not items:
        raise RetrievalError("cannot index an empty corpus")
    seen: set[str] = set()
    for position, item in enumerate(items):
        if not isinstance(item, CorpusItem):
            raise RetrievalError(f"corpus item {position} is a {type(item).__name__}, not a CorpusItem")
        if item.id in seen:
            raise RetrievalError(f"corpus item id {item.id!r} occurs twice (item {position})")
        seen.add(item.id)
    return items


def digest_json(payload: Any) -> str:
    """sha256 of the canonical JSON of `payload`."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest_texts(texts: Iterable[str]) -> str:
    """sha256 over the texts in order (one canonical JSON string per line)."""
    hasher = hashlib.sha256()
    for text in texts:
        hasher.update(json.dumps(text, ensure_ascii=False).encode("utf-8") + b"\n")
    return hasher.hexdigest()


def document_text(item: CorpusItem, fields: str) -> str:
    """The text a retriever indexes for `item`."""
    if fields == "key_value" and item.value is not None:
        return f"{item.key}\n{item.value}"
    return item.key


class IndexedRetriever(ABC):
    """Base of the index-backed retrievers (BM25, dense): subclasses build, save, load and score."""

    name: ClassVar[str]
    Params: ClassVar[type[RetrieverParams]]
    #: Whether building this retriever to read its fingerprint costs no model (``biorab plan`` computes the
    #: hit keys of such cells exactly and estimates the others: `biorab.sweep.prompts`).
    cheap_fingerprint: ClassVar[bool] = False

    @classmethod
    def encoder_params(cls, encoder: str | None, model: str | None) -> dict[str, Any] | None:
        """This retriever's params for `biorab retrieve`'s ``--encoder`` / ``--model`` flags (``None``: it
        takes no encoder)."""
        return None

    def __init__(
        self, params: RetrieverParams | None = None, *, cache_root: str | Path | None = None
    ) -> None:
        self.params = params if params is not None else self.Params()
        self._cache_root = cache_root
        self._items: list[CorpusItem] = []
        self._dedupe_keys: list[tuple[str, str | None]] | None = None
        self.index_path: Path | None = None
        self.loaded_from_cache = False

    def _fingerprint_extra(self) -> dict[str, Any]:
        """What besides the params identifies the index (e.g. the encoder's model digest)."""
        return {}

    def _digest_of(self, excluded: frozenset[str]) -> str:
        params = {k: v for k, v in self.params.model_dump(mode="json").items() if k not in excluded}
        return digest_json(
            {"retriever": self.name, "format": INDEX_FORMAT, "params": params, **self._fingerprint_extra()}
        )

    @property
    def fingerprint(self) -> str:
        """Digest of everything that determines the hits (for hit caches)."""
        return self._digest_of(EXECUTION_ONLY)

    @property
    def index_fingerprint(self) -> str:
        """Digest of everything that determines the index (for the index folder)."""
        return self._digest_of(EXECUTION_ONLY | SEARCH_ONLY)

    def index(self, items: Sequence[CorpusItem]) -> None:
        """Index `items` (the corpus), loading a persisted index of the same content when there is one."""
        self._items = check_items(items)
        self._dedupe_keys = [(i.key, i.value) for i in self._items] if self.params.dedupe else None
        texts = [document_text(item, self.params.fields) for item in self._items]
        folder = self._index_folder(digest_texts(texts)) if self.params.persist else None
        self.index_path, self.loaded_from_cache = folder, False
        if folder is not None and folder.is_dir():
            try:
                self._load(folder)
            except (OSError, ValueError, RuntimeError) as e:  # faiss raises RuntimeError on a bad file
                raise RetrievalError(
                    f"cannot read the persisted index {folder} ({e}); delete the folder"
                ) from e
            self.loaded_from_cache = True
            return
        self._build(texts)
        if folder is not None:
            self._persist(folder)

    def search(self, queries: Mapping[str, str], k: int) -> dict[str, list[Hit]]:
        """The top-`k` hits (best first) for each query id."""
        check_k(k)
        if not self._items:
            raise RetrievalError(f"{self.name} retriever: call index(corpus) before search()")
        qids = list(queries)
        texts = [queries[qid] for qid in qids]
        for qid, text in zip(qids, texts, strict=True):
            if not isinstance(text, str):
                raise RetrievalError(f"query {qid!r} is a {type(text).__name__}, not a string")
        self._prepare_queries(texts)
        picked = self._select(texts, k)
        return {qid: to_hits(self._items, chosen) for qid, chosen in zip(qids, picked, strict=True)}

    def _select(self, texts: list[str], k: int) -> list[list[tuple[int, float]]]:
        n = len(self._items)
        m = min(n, 4 * k + 16)
        results: list[list[tuple[int, float]] | None] = [None] * len(texts)
        pending = list(range(len(texts)))
        while pending:
            candidates = self._candidates([texts[i] for i in pending], m)
            still = []
            for i, (scores, positions, complete) in zip(pending, candidates, strict=True):
                choice = select(
                    scores,
                    positions,
                    k,
                    keep_ties=self.params.keep_ties,
                    dedupe_keys=self._dedupe_keys,
                    complete=complete or m >= n,
                )
                if choice.needs_more and m < n:
                    still.append(i)
                else:
                    results[i] = choice.picked
            pending, m = still, min(n, m * 4)
        return [r if r is not None else [] for r in results]

    def _index_folder(self, content_digest: str) -> Path:
        root = Path(self._cache_root) if self._cache_root is not None else cache_dir()
        return root / "indexes" / self.index_fingerprint / content_digest

    def _persist(self, folder: Path) -> None:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".building-", dir=folder.parent))
        try:
            self._save(staging)
            meta = {
                "retriever": self.name,
                "params": self.params.model_dump(mode="json"),
                "n": len(self._items),
            }
            (staging / "biorab_index.json").write_text(json.dumps(meta, indent=2, sort_keys=True))
            os.replace(staging, folder)  # atomic: a folder that exists is complete
            self.index_path = folder
        except OSError:
            if folder.is_dir():  # another process won the race with the same content
                shutil.rmtree(staging, ignore_errors=True)
                return
            shutil.rmtree(staging, ignore_errors=True)
            raise

    def _prepare_queries(self, texts: list[str]) -> None:
        """Hook: work done once per search for all queries (e.g. embedding them); nothing by default."""
        del texts

    @abstractmethod
    def _build(self, texts: list[str]) -> None: ...

    @abstractmethod
    def _save(self, folder: Path) -> None: ...

    @abstractmethod
    def _load(self, folder: Path) -> None: ...

    @abstractmethod
    def _candidates(self, queries: list[str], m: int) -> list[tuple[np.ndarray, np.ndarray, bool]]:
        """For each query, its best `m` (scores, positions) ordered by `order_candidates`, and whether they
        are all the scorable items (no item outside them could match)."""
