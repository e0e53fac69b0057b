"""The content-keyed caches, shared by the threads of one replica.

`biorab.caches.ContentStore` keeps one SQLite connection per process, and SQLite connections must not
cross threads; Serve runs sync deployment methods in a thread pool and the ingress runs the RAL core in
worker threads. `thread_safe` gives a hit or generation store one connection per thread (same file).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from biorab.caches import ContentStore, GenerationStore, HitStore

S = TypeVar("S", HitStore, GenerationStore)


class PerThreadContentStore:
    """`ContentStore`'s get/put over one `ContentStore` (one connection) per thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()

    def _own(self) -> ContentStore:
        store: ContentStore | None = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = ContentStore(self.path)
        return store

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        return self._own().get_many(keys)

    def put_many(self, items: Mapping[str, str]) -> None:
        self._own().put_many(items)


def thread_safe(store: S) -> S:
    """`store` with a connection per thread."""
    store.store = PerThreadContentStore(store.store.path)  # type: ignore[assignment]
    return store
