"""`BackgroundTracking` with a real MLflow SQLite store: the runs open in another thread from the first
progress call on, progress reported before they are open reaches MLflow once they are, and an opening
that fails surfaces at `wait` (but never hides the work's own error in `fail`)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from biorab.tracking.background import BackgroundTracking
from biorab.tracking.live import LiveTracking


def open_runs(store: Path, gate: threading.Event, seen: list[str]) -> LiveTracking:
    seen.append(threading.current_thread().name)
    assert gate.wait(60)
    return LiveTracking.start(
        results_dir=store.parent,
        uri=f"sqlite:///{store}",
        experiment="bg",
        artifact_location=None,
        parent_key="run:bg:0",
        parent_name="bg",
        params={"a": "1"},
        tags={},
    )


def rows_written(store: Path) -> list[float]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store}")
    experiment = client.get_experiment_by_name("bg")
    assert experiment is not None
    (run,) = client.search_runs([experiment.experiment_id])
    return [m.value for m in client.get_metric_history(run.info.run_id, "rows_written")]


def test_runs_open_in_a_thread_from_the_first_progress_call(tmp_path: Path) -> None:
    store, gate, seen = tmp_path / "mlflow.db", threading.Event(), []
    opening = BackgroundTracking(lambda: open_runs(store, gate, seen))
    calls: list[tuple[int, int]] = []
    report = opening.progress(lambda advance, total: calls.append((advance, total)))
    assert seen == [] and not store.exists()  # nothing before the executor's first progress call
    report(0, 10)
    report(4, 10)  # the runs are not open yet: the user's callback runs, MLflow waits
    assert calls == [(0, 10), (4, 10)]
    assert seen and seen[0] != threading.current_thread().name
    gate.set()
    tracking = opening.wait()
    assert rows_written(store) == [4.0]  # logged, summed, once the runs were open
    report(6, 10)
    assert rows_written(store) == [4.0, 10.0]
    tracking.finish([])


def test_a_run_without_progress_opens_its_runs_at_wait(tmp_path: Path) -> None:
    store, gate, seen = tmp_path / "mlflow.db", threading.Event(), []
    gate.set()
    tracking = BackgroundTracking(lambda: open_runs(store, gate, seen)).wait()
    assert store.is_file() and len(seen) == 1
    tracking.finish([])


def test_an_opening_error_surfaces_at_wait_and_never_in_fail() -> None:
    def broken() -> LiveTracking:
        raise RuntimeError("store exploded")

    opening = BackgroundTracking(broken)
    opening.progress(None)(0, 3)
    with pytest.raises(RuntimeError, match="store exploded"):
        opening.wait()
    BackgroundTracking(broken).fail()  # the work's exception stays the one the caller sees


def test_a_new_store_has_the_schema_mlflow_itself_creates(tmp_path: Path) -> None:
    """The store is migrated without a disk sync per step (`biorab.tracking.sqlite_store`); its tables,
    indexes and revision are those of a store created by MLflow's own `SqlAlchemyStore`."""
    import contextlib
    import sqlite3

    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    from biorab.tracking.sqlite_store import ensure_sqlite_store

    def statement(sql: str | None) -> tuple[str, ...]:
        # Alembic's batch migrations write a table's CHECK constraints in an order that varies from one
        # creation to the next (MLflow's own included): the constraints compare as a set, the columns in order
        lines = [line.strip().rstrip(",") for line in (sql or "").split("\n")]
        constraints = sorted(line for line in lines if line.startswith("CONSTRAINT"))
        return (*[line for line in lines if not line.startswith("CONSTRAINT")], *constraints)

    def schema(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[str, ...]], list[tuple[str, ...]]]:
        with contextlib.closing(sqlite3.connect(path)) as conn:
            query = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
            rows = conn.execute(query).fetchall()
            return (
                [(kind, name, table, statement(sql)) for kind, name, table, sql in rows],
                conn.execute("SELECT * FROM alembic_version").fetchall(),
                conn.execute("SELECT experiment_id, name, lifecycle_stage FROM experiments").fetchall(),
            )

    ours, theirs = tmp_path / "ours" / "mlflow.db", tmp_path / "theirs" / "mlflow.db"
    ensure_sqlite_store(f"sqlite:///{ours}", None)
    theirs.parent.mkdir()
    SqlAlchemyStore(f"sqlite:///{theirs}", (theirs.parent / "mlartifacts").as_uri()).engine.dispose()
    assert schema(ours) == schema(theirs)
    assert len(schema(ours)[0]) > 100 and schema(ours)[2] == [(0, "Default", "active")]
    assert sorted(p.name for p in ours.parent.iterdir()) == ["mlflow.db"]  # no temporary left behind
