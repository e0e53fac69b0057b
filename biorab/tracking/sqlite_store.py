"""Create and check the local MLflow SQLite store so that an interrupted creation never blocks a run.

MLflow creates its schema in place through ~60 Alembic migrations; a kill or a full disk in between leaves a
half-migrated ``mlflow.db`` that every later open fails on (``table _alembic_tmp_latest_metrics already
exists``). Here a new store is built in a temporary file beside the target and published with a hard link
(atomic, and it never replaces a store another process published first): ``mlflow.db`` is either absent
or complete. A half-built store left by an older version (no runs in it) is moved aside and rebuilt with a
warning; any other store that cannot be used raises `TrackingStoreError`, naming the file and the fix.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
import uuid
import warnings
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from biorab.common.errors import BioRABError

StoreState = Literal["absent", "ready", "incomplete", "unusable"]
_CREATING = ".creating-"


class TrackingStoreError(BioRABError):
    """The MLflow store cannot be opened or written; the run's results are on disk regardless."""


def sqlite_path(uri: str) -> Path | None:
    """The file of a ``sqlite:///`` tracking URI, ``None`` for any other store.

    >>> sqlite_path("sqlite:////r/mlflow.db"), sqlite_path("http://host:5000")
    (PosixPath('/r/mlflow.db'), None)
    """
    parsed = urlparse(uri)
    if parsed.scheme != "sqlite":
        return None
    return Path(parsed.path[1:] if parsed.path.startswith("//") else parsed.path)


def fix_hint(path: Path) -> str:
    return (f"move {path} aside (e.g. `mv {path} {path}.bad`) and run the same command again: it "
            "recreates the store and logs every cell; or set `tracking.enabled: false`")


def store_state(path: Path, head_revision: str) -> StoreState:
    """Whether `path` is a complete store at `head_revision`, a half-created one, or unusable."""
    if not path.exists():
        return "absent"
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            version = (conn.execute("SELECT version_num FROM alembic_version").fetchone()
                       if "alembic_version" in tables else None)
            runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] if "runs" in tables else 0
    except sqlite3.DatabaseError:
        return "unusable"  # not a database, or corrupt: never delete what may be a user's history
    temporaries = any(t.startswith("_alembic_tmp_") for t in tables)
    if version is not None and version[0] == head_revision and not temporaries:
        return "ready"
    # An older schema with runs in it is a real store MLflow can upgrade; without runs it was cut short.
    return "incomplete" if runs == 0 else "ready"


def ensure_sqlite_store(uri: str, artifact_root: str | None) -> None:
    """Make sure the SQLite store of `uri` exists and is complete (no-op for other stores)."""
    path = sqlite_path(uri)
    if path is None:
        return
    from mlflow.store.db.utils import _get_latest_schema_revision  # the schema MLflow expects

    state = store_state(path, _get_latest_schema_revision())
    if state == "ready":
        return
    if state == "unusable":
        raise TrackingStoreError(f"{path}: not a usable MLflow store (corrupt or not a database); "
                                 + fix_hint(path))
    if state == "incomplete":
        aside = path.with_name(f"{path.name}.incomplete-{time.strftime('%Y%m%dT%H%M%S')}")
        os.replace(path, aside)
        warnings.warn(f"{path}: its creation was interrupted (no runs in it); moved aside to {aside.name} "
                      "and created again", stacklevel=2)
    _create(path, artifact_root)


def _create(path: Path, artifact_root: str | None) -> None:
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f".{path.name}{_CREATING}*"):  # left by a killed creator
        stale.unlink(missing_ok=True)
    tmp = path.parent / f".{path.name}{_CREATING}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        _migrate_unsynced(f"sqlite:///{tmp}")
        # The tables exist now: MLflow only checks their revision and adds its default experiment.
        store = SqlAlchemyStore(f"sqlite:///{tmp}", artifact_root or (path.parent / "mlartifacts").as_uri())
        store.engine.dispose()  # close every connection before the file is published
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        # Atomic publish; it fails if another process published first, and then theirs is kept.
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _migrate_unsynced(uri: str) -> None:
    """MLflow's own table creation and migrations on the private file of `uri`, without a sync per step.

    Each of the ~400 schema statements commits, and SQLite syncs the file (and its journal) at each
    commit: seconds of disk waits on a busy machine. Nothing reads this file before `_create` syncs it
    once and publishes it, and a crash leaves only a temporary that the next creator deletes, so the
    per-step syncs protect nothing here. The statements are MLflow's (`_initialize_tables`, what
    `SqlAlchemyStore` runs on an empty database), so the schema is the one MLflow would create.
    """
    from mlflow.store.db.utils import _initialize_tables, create_sqlalchemy_engine
    from sqlalchemy import event

    engine = create_sqlalchemy_engine(uri)

    @event.listens_for(engine, "connect")
    def _unsynced(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA synchronous = OFF")
        dbapi_conn.execute("PRAGMA journal_mode = MEMORY")

    try:
        _initialize_tables(engine)
    finally:
        engine.dispose()
