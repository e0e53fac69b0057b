"""Content-keyed stores for retrieval hits and generations (SQLite in WAL mode).

A key is the sha256 of everything that determines the value, so the same work is done once across cells,
testbeds, reruns and concurrent actor processes on one node. Writes are ``INSERT OR IGNORE``: two
processes that computed the same value race harmlessly. Failed generations are never stored, so the next
run retries them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from biorab.common.errors import DataError
from biorab.common.records import Generation, Hit, Prompt
from biorab.generation.base import SamplingParams, stable_digest

_BUSY_TIMEOUT_MS = 60_000


def _is_corrupt(e: sqlite3.DatabaseError) -> bool:
    text = str(e).lower()
    return "file is not a database" in text or "malformed" in text


def quarantine(path: Path) -> Path:
    """Move a corrupt SQLite file (and its WAL/shm files) aside; returns the new name of the main file."""
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return aside


def cache_error(path: Path, e: sqlite3.Error) -> DataError:
    """A cache database failure as an error naming the file and what to do."""
    text = str(e)
    if "disk is full" in text.lower():
        fix = "the disk is full: free space there (or set BIORAB_CACHE_DIR elsewhere), then run again"
    elif "readonly" in text.lower() or "read-only" in text.lower():
        fix = "the cache is read-only: make it writable or set BIORAB_CACHE_DIR to a writable folder"
    else:
        fix = "move the file aside (it is a cache: it is rebuilt) or set BIORAB_CACHE_DIR elsewhere"
    return DataError(f"cache database error ({text}); {fix}", path=path)


class ContentStore:
    """A persistent ``key -> JSON text`` map in one SQLite file, safe for several processes on one node.

    The connection is opened lazily and re-opened after a fork (Ray workers, multiprocessing), because a
    SQLite connection must not cross processes.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._pid = -1

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                conn = self._open()
            except sqlite3.DatabaseError as e:
                if not _is_corrupt(e):
                    raise cache_error(self.path, e) from e
                # A cache is derived data: a corrupt one is moved aside and rebuilt, never a dead end.
                aside = quarantine(self.path)
                warnings.warn(f"{self.path}: corrupt cache database ({e}); moved aside to {aside.name} and "
                              "rebuilt (its entries are recomputed as needed)", stacklevel=2)
                conn = self._open()
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        # Switching a new file to WAL needs an exclusive lock, and SQLite reports a concurrent creator's lock
        # at once ("database is locked") instead of waiting on the busy timeout: retry within that timeout.
        deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
        pause = 0.02
        while True:
            try:
                return self._open_once()
            except sqlite3.OperationalError as e:
                if "locked" not in str(e).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 1.0)

    def _open_once(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
            conn.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        """The stored values of those `keys` that are present."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, str] = {}
        conn = self._connection()
        try:
            for start in range(0, len(wanted), 500):  # SQLite limits the number of bound parameters
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                found.update(conn.execute(f"SELECT key, value FROM kv WHERE key IN ({marks})", chunk))
        except sqlite3.DatabaseError as e:
            raise cache_error(self.path, e) from e
        return found

    def put_many(self, items: Mapping[str, str]) -> None:
        if not items:
            return
        conn = self._connection()
        try:
            with conn:  # one transaction: a kill leaves either all or none of the batch
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany("INSERT OR IGNORE INTO kv (key, value) VALUES (?, ?)", list(items.items()))
        except sqlite3.DatabaseError as e:
            raise cache_error(self.path, e) from e

    def __len__(self) -> int:
        return int(self._connection().execute("SELECT COUNT(*) FROM kv").fetchone()[0])

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None


def hits_key(
    *, retriever: str, corpus: str, query: str, k: int, keep_ties: bool, tie_pool: int, dedupe: bool = True,
    exclude_test_duplicates: bool = False,
) -> str:
    """Key of one query's hits: (retriever fingerprint, corpus digest, query text, k, tie rule, dedupe).

    ``dedupe`` enters the key only when false and ``exclude_test_duplicates`` only when true, so the keys of
    default settings never change."""
    return stable_digest(hits_key_parts(retriever=retriever, corpus=corpus, query=query, k=k,
                                        keep_ties=keep_ties, tie_pool=tie_pool, dedupe=dedupe,
                                        exclude_test_duplicates=exclude_test_duplicates))


def hits_key_parts(
    *, retriever: str, corpus: str, query: str, k: int, keep_ties: bool, tie_pool: int, dedupe: bool = True,
    exclude_test_duplicates: bool = False,
) -> list[object]:
    """What `hits_key` digests: in one place for `hits_key` and the planner's bulk keys
    (`biorab.sweep.keys.hits_keys`)."""
    parts: list[object] = ["hits/v1", retriever, corpus, query, k, keep_ties, tie_pool if keep_ties else 0]
    parts = parts if dedupe else [*parts, "keep-duplicates"]
    return [*parts, "exclude-own-text"] if exclude_test_duplicates else parts


def generation_key(model_digest: str, prompt: Prompt, params: SamplingParams) -> str:
    """Key of one generation: (model digest, prompt, stops, output constraint, sampling params + seed).

    Two rules keep keys honest without invalidating caches needlessly:
    - ``constrained`` cannot change the output of a prompt without a constraint, so such prompts are keyed
      as unconstrained (the old default): turning guided decoding on by default left their keys alone.
    - a constrained regex prompt carries the marker ``guided-regex``: before xgrammar guided decoding, the
      transformers backend generated those freely under the same params, and those cached texts must not
      be served as if they had been constrained.
    """
    constraint, sampling, guided = generation_key_parts(prompt, params)
    parts: list[object] = ["gen/v1", model_digest, prompt.text, list(params.stops_for(prompt)), constraint,
                           sampling]
    if guided:
        parts.append("guided-regex")
    return stable_digest(parts)


def generation_key_parts(prompt: Prompt, params: SamplingParams) -> tuple[str | None, str, bool]:
    """(constraint JSON, sampling digest, guided-regex marker) of `generation_key`: the rules above, in one
    place for `generation_key` and the planner's bulk keys (`biorab.sweep.keys`)."""
    constraint = prompt.constraint.to_json() if prompt.constraint else None
    keyed = params if prompt.constraint else params.model_copy(update={"constrained": False})
    guided = bool(params.constrained and prompt.constraint is not None and prompt.constraint.regex)
    return constraint, keyed.digest(), guided


class HitStore:
    """Retrieval hits by `hits_key`."""

    def __init__(self, path: str | Path) -> None:
        self.store = ContentStore(path)

    def get_many(self, keys: Sequence[str]) -> dict[str, list[Hit]]:
        raw = self.store.get_many(keys)
        return {k: [Hit.from_row(h) for h in json.loads(v)] for k, v in raw.items()}

    def put_many(self, items: Mapping[str, Sequence[Hit]]) -> None:
        self.store.put_many({k: json.dumps([h.to_row() for h in v]) for k, v in items.items()})


class GenerationStore:
    """Successful generations by `generation_key` (an errored `Generation` is refused)."""

    def __init__(self, path: str | Path) -> None:
        self.store = ContentStore(path)

    def get_many(self, keys: Sequence[str]) -> dict[str, Generation]:
        raw = self.store.get_many(keys)
        return {k: Generation.from_row(json.loads(v)) for k, v in raw.items()}

    def put_many(self, items: Mapping[str, Generation]) -> None:
        good = {k: json.dumps(g.to_row()) for k, g in items.items() if g.error is None}
        self.store.put_many(good)


def default_store_paths(cache_root: Path) -> tuple[Path, Path]:
    """(hits store, generations store) under the cache root."""
    return cache_root / "runner" / "hits.sqlite", cache_root / "runner" / "generations.sqlite"
