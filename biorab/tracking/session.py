"""`TrackingSession`: the MLflow runs of one sweep or `biorab run`, opened when the work starts and written
as results come.

    open (parent RUNNING, shared config as params) ─▶ register_cells (what each child will hold; nothing
    opened) ─▶ cell_rows (a cell's first rows: its child opens, RUNNING, own setting as params; then rows
    written, live on the child) ─▶ progress (rows written, on the parent) ─▶ finish_cell (metrics,
    predictions table, ledger; FINISHED; a cell with nothing left to compute opens here)
    ─▶ finish (report and plots on the parent; stale children KILLED; parent FINISHED)

A child is opened when its cell starts, not when the sweep starts: a sweep killed half-way has children
for the cells it reached and none for the others. Children are found again by their key, so a resume
reopens the same ones.

Every MLflow failure becomes a `TrackingError`; callers write results to disk before tracking them, so a
failure never loses compute (``biorab track RUN_DIR`` logs them again).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biorab.common.errors import TrackingError
from biorab.tracking import runs as keyed
from biorab.tracking.preflight import check_server

#: How many predictions a child's UI table shows (the full predictions are the Parquet artifact).
TABLE_ROWS = 500
#: The experiment tag MLflow's UI reads for the kind of an experiment: a "custom model development"
#: experiment is one of runs, compared by params and metrics (not a GenAI app's traces). An experiment made
#: by an older biorab is tagged once; a kind chosen in the UI is kept.
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}
#: The run tag listing its table artifacts (what ``MlflowClient.log_table`` sets; the UI reads it).
LOGGED_ARTIFACTS = "mlflow.loggedArtifacts"


@dataclass
class CellEntry:
    """What a child run records when its cell starts."""

    key: str
    name: str
    params: dict[str, str]
    tags: dict[str, str]
    inputs: list[tuple[str, str, str]] = field(default_factory=list)  # (name, digest, source uri)
    run_id: str = ""
    created: bool = False  # the child was created by this process (so it has no traces yet)


@contextlib.contextmanager
def _mlflow_errors(what: str, hint: str) -> Iterator[None]:
    from mlflow.exceptions import MlflowException

    try:
        yield
    except (MlflowException, OSError) as e:
        raise TrackingError(f"MLflow: could not {what}: {e}. {hint}") from e


class TrackingSession:
    """Parent and children of one tracked sweep or run (see the module docstring)."""

    def __init__(self, client: Any, uri: str, experiment_id: str, parent_key: str, hint: str) -> None:
        self.client, self.uri, self.experiment_id = client, uri, experiment_id
        self.parent_key, self.hint = parent_key, hint
        self.parent_id = ""
        self.cells: dict[str, CellEntry] = {}
        self._step = 0
        self._existing: dict[str, Any] | None = None  # children of the parent already in the store, by key
        self._rows: dict[str, int] = {}  # rows written so far, by child key
        self._tracing: Any = None  # mlflow's TracingClient, made at the first traces

    @classmethod
    def open(cls, *, uri: str, experiment: str, artifact_location: str | None, parent_key: str,
             parent_name: str, params: Mapping[str, str], tags: Mapping[str, str], hint: str
             ) -> TrackingSession:
        """Check the store, then open (or reopen) the parent run."""
        from mlflow.tracking import MlflowClient

        from biorab.tracking.sqlite_store import TrackingStoreError, ensure_sqlite_store

        try:  # a store whose creation was interrupted is redone; a corrupt one is named with its fix
            ensure_sqlite_store(uri, artifact_location)
        except TrackingStoreError as e:
            raise TrackingError(f"{e}. {hint}") from e
        check_server(uri)
        with _mlflow_errors(f"open experiment {experiment!r} at {uri}", hint):
            client = MlflowClient(tracking_uri=uri)
            exp_id = keyed.open_experiment(client, experiment, artifact_location, EXPERIMENT_KIND)
            session = cls(client, uri, exp_id, parent_key, hint)
            runs = keyed.find_runs(client, exp_id, keyed.KEY, parent_key)
            existing = runs[0] if runs else None
            session.parent_id = keyed.open_run(client, exp_id, parent_key, name=parent_name, tags=tags,
                                               existing=existing)
            keyed.log_params_once(client, existing, session.parent_id, params)
        return session

    def register_cells(self, entries: list[CellEntry]) -> None:
        """Remember what each child will hold; children open when their cells start (`start_cell`)."""
        for entry in entries:
            self.cells.setdefault(entry.key, entry)

    def start_cell(self, key: str) -> None:
        """Open the child of `key` (RUNNING; reopened when a run of its key exists) with its own setting as
        params and its datasets as inputs; nothing when it is open already."""
        entry = self.cells[key]
        if entry.run_id:
            return
        with _mlflow_errors(f"open the cell run {entry.name}", self.hint):
            if self._existing is None:  # one search for every child a previous attempt opened
                self._existing = {r.data.tags.get(keyed.KEY): r for r in keyed.find_runs(
                    self.client, self.experiment_id, keyed.PARENT_KEY, self.parent_key)}
            run = self._existing.get(entry.key)
            tags = {**entry.tags, keyed.PARENT_KEY: self.parent_key, keyed.MLFLOW_PARENT: self.parent_id}
            entry.run_id = keyed.open_run(self.client, self.experiment_id, entry.key, name=entry.name,
                                          tags=tags, existing=run)
            entry.created = run is None
            keyed.log_params_once(self.client, run, entry.run_id, entry.params)
            if run is None and entry.inputs:
                self.client.log_inputs(entry.run_id, datasets=_inputs(entry.inputs))

    def cell_rows(self, counts: Mapping[str, int]) -> None:
        """Rows just written per child key (0: the cell's rows are entering generation): opens the children
        of cells that start now, and logs each one's ``rows_written`` as it grows."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        for key, n in counts.items():
            self.start_cell(key)
            if n <= 0:
                continue
            self._rows[key] = self._rows.get(key, 0) + n
            with _mlflow_errors(f"log rows of {self.cells[key].name}", self.hint):
                self.client.log_batch(self.cells[key].run_id,
                                      metrics=[Metric("rows_written", float(self._rows[key]), now,
                                                      self._rows[key])])

    def progress(self, written: int, total: int) -> None:
        """Rows written so far (live on the parent: a crashed sweep still shows how far it got)."""
        from mlflow.entities import Metric

        self._step += 1
        now = int(time.time() * 1000)
        with _mlflow_errors("log progress", self.hint):
            metrics = [Metric("rows_written", float(written), now, self._step),
                       Metric("rows_total", float(total), now, self._step)]
            self.client.log_batch(self.parent_id, metrics=metrics)

    def finish_cell(self, key: str, metrics: Mapping[str, float], tags: Mapping[str, str],
                    artifacts: list[tuple[Path, str | None]], table: dict[str, list[Any]] | None,
                    trace_rows: list[dict[str, Any]] | None = None) -> None:
        """Log a scored cell (and traces of `trace_rows` it has not yet, `biorab.tracking.traces`) and
        mark it FINISHED."""
        from mlflow.entities import Metric, RunTag

        self.start_cell(key)  # a cell with nothing left to compute starts (and ends) here
        run_id = self.cells[key].run_id
        now = int(time.time() * 1000)
        with _mlflow_errors(f"log cell {self.cells[key].name}", self.hint):
            self.client.log_batch(run_id, metrics=[Metric(k, v, now, 0) for k, v in metrics.items()],
                                  tags=[RunTag(k, v) for k, v in tags.items()])
            for path, folder in artifacts:
                self.client.log_artifact(run_id, str(path), folder)
            have = {a.path for a in self.client.list_artifacts(run_id)}
            if table is not None and "predictions.json" not in have:  # log_table appends: log once
                self.client.log_table(run_id, data=table, artifact_file="predictions.json")
            if trace_rows:
                self._log_traces(key, trace_rows)
            self.client.set_terminated(run_id, "FINISHED")

    def add_to_cell(self, key: str, metrics: Mapping[str, float], tags: Mapping[str, str]) -> None:
        """Log more metrics and tags on the child of `key` as it is (a finished cell stays FINISHED: a sweep
        adds the rates against a twin from another run, `biorab.sweep.twins`); nothing for a cell whose
        child was never opened."""
        from mlflow.entities import Metric, RunTag

        entry = self.cells.get(key)
        if entry is None or not entry.run_id or not (metrics or tags):
            return
        now = int(time.time() * 1000)
        with _mlflow_errors(f"log the twin rates of cell {entry.name}", self.hint):
            self.client.log_batch(entry.run_id, metrics=[Metric(k, v, now, 0) for k, v in metrics.items()],
                                  tags=[RunTag(k, v) for k, v in tags.items()])

    def _log_traces(self, key: str, rows: list[dict[str, Any]]) -> None:
        from mlflow.tracing.client import TracingClient

        from biorab.tracking.traces import log_cell_traces

        if self._tracing is None:
            self._tracing = TracingClient(self.uri)
        entry = self.cells[key]
        log_cell_traces(self._tracing, self.experiment_id, entry.run_id, entry.key, cell_label=entry.name,
                        model=entry.params.get("model", ""), rows=rows, new_run=entry.created)

    def finish(self, artifacts: list[tuple[Path, str | None]], *, status: str = "FINISHED",
               tables: Mapping[str, dict[str, list[Any]]] | None = None,
               view: Mapping[str, Any] | None = None) -> str:
        """Log the parent's artifacts and `tables` (artifact file → columns), store the runs table's
        `view` (`biorab.tracking.ui_link.runs_view`), close children left RUNNING by dead processes, end
        the parent."""
        from biorab.tracking.ui_link import VIEW_TAG, view_key

        with _mlflow_errors("finish the parent run", self.hint):
            if view is not None:
                self.client.set_experiment_tag(self.experiment_id, VIEW_TAG + view_key(self.parent_key),
                                               json.dumps(dict(view)))
            for path, folder in artifacts:
                self.client.log_artifact(self.parent_id, str(path), folder)
            for name, columns in (tables or {}).items():
                replace_table(self.client, self.parent_id, name, columns)
            keep = {e.run_id for e in self.cells.values() if e.run_id}
            keyed.close_stale_children(self.client, self.experiment_id, self.parent_key, keep)
            self.client.set_terminated(self.parent_id, status)
        return self.uri

    def fail(self, status: str = "FAILED") -> None:
        """End every open run as `status` (FAILED: an exception in the work itself; KILLED: a stop);
        never raises."""
        with contextlib.suppress(Exception):
            for entry in self.cells.values():
                if not entry.run_id:  # never started: no child to end
                    continue
                run = self.client.get_run(entry.run_id)
                if run.info.status == "RUNNING":
                    self.client.set_terminated(entry.run_id, status)
            self.client.set_terminated(self.parent_id, status)


def replace_table(client: Any, run_id: str, artifact_file: str, columns: dict[str, list[Any]]) -> None:
    """Log `columns` as the table `artifact_file` of the run, replacing an earlier one.

    MLflow's ``log_table`` appends to a table already logged, so a rerun would double the sweep's rows;
    here the file is written in the same format (pandas' ``split`` JSON: columns and rows) and logged over
    the old one, and the run's ``mlflow.loggedArtifacts`` tag lists it as a table, as ``log_table`` does,
    so the UI shows it as one.
    """
    import tempfile

    names = list(columns)
    rows = [list(r) for r in zip(*(columns[n] for n in names), strict=True)]
    with tempfile.TemporaryDirectory(prefix="biorab-table-") as tmp:
        path = Path(tmp) / Path(artifact_file).name
        path.write_text(json.dumps({"columns": names, "data": rows}), encoding="utf-8")
        folder = str(Path(artifact_file).parent)
        client.log_artifact(run_id, str(path), None if folder == "." else folder)
    logged = json.loads(client.get_run(run_id).data.tags.get(LOGGED_ARTIFACTS, "[]"))
    entry = {"path": artifact_file, "type": "table"}
    if entry not in logged:
        client.set_tag(run_id, LOGGED_ARTIFACTS, json.dumps([*logged, entry]))


def _inputs(inputs: list[tuple[str, str, str]]) -> list[Any]:
    from mlflow.entities import Dataset, DatasetInput, InputTag

    return [DatasetInput(Dataset(name=name, digest=digest[:36], source_type="local",
                                 source=json.dumps({"uri": uri})),
                         [InputTag("mlflow.data.context", "eval")]) for name, digest, uri in inputs]
