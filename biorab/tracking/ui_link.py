"""The address that opens a run's experiment in the MLflow UI on its runs table, cells and metrics shown.

What MLflow 3.17's UI does, read from its bundled app and checked in headless Chromium
(tests/integration/test_mlflow_ui_browser.py):

- it opens every experiment in its GenAI mode (an empty traces "Overview") unless the URL says
  ``workflowType=machine_learning``; the experiment's ``mlflow.experimentKind`` tag (set by
  `biorab.tracking.session`) is not enough on its own;
- its runs table shows children collapsed under their parent, except children tagged
  ``mlflow.runType = evaluation`` (what a cell's child is: an evaluation), whose parent it expands;
- it shows no metric or param column until one is chosen, unless the URL names a *shared view*
  (``viewStateShareKey=K``): the experiment tag ``mlflow.sharedViewState.K`` holding the table's state
  (the columns). biorab writes one per run or sweep (`runs_view`) with each cell's headline metric, its
  CI tag and the settings that tell cells apart.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlparse

from biorab.tracking.names import mlflow_name
from biorab.tracking.preflight import is_server

#: Where `mlflow ui` listens by default.
LOCAL_UI = "http://127.0.0.1:5000"
RUNS_QUERY = "workflowType=machine_learning"
VIEW_TAG = "mlflow.sharedViewState."
#: The params shown beside the metrics: what tells the cells of a run or sweep apart.
VIEW_PARAMS = ("dataset", "retriever", "testbed", "rate")


def view_key(parent_key: str) -> str:
    """The shared view's key of a parent run (stable: the same view is rewritten by reruns)."""
    return "biorab-" + hashlib.sha256(parent_key.encode()).hexdigest()[:12]


def runs_view(metrics: Iterable[str]) -> dict[str, Any]:
    """The runs table's state: the headline `metrics` (value and CI tag) and the settings, newest first."""
    names = list(dict.fromkeys(metrics))
    columns = [f"metrics.`{mlflow_name(m)}`" for m in names] + [f"tags.`ci.{mlflow_name(m)}`" for m in names]
    columns += [f"params.`{p}`" for p in VIEW_PARAMS]
    return {"selectedColumns": columns, "orderByKey": "attributes.start_time", "orderByAsc": False}


def headline_metrics(cells: Iterable[Any]) -> list[str]:
    """The headline metric of each scored cell (`biorab.ral.specs.cell_records.CellResult`), in order, without
    repeats."""
    from biorab.tasks import PRIMARY_METRIC

    out: list[str] = []
    for cell in cells:
        metrics: Mapping[str, Any] = cell.metrics
        name = PRIMARY_METRIC.get(cell.plan.task) or next(iter(metrics), None)
        if name and name in metrics and name not in out:
            out.append(name)
    return out


def runs_page_path(experiment_id: str, view: str | None = None) -> str:
    """The UI route of an experiment's runs table (MLflow routes after ``#``), in a shared view.

    >>> runs_page_path("3", "biorab-ab12")
    '/#/experiments/3/runs?workflowType=machine_learning&viewStateShareKey=biorab-ab12'
    """
    shared = f"&viewStateShareKey={view}" if view else ""
    return f"/#/experiments/{experiment_id}/runs?{RUNS_QUERY}{shared}"


def runs_page(uri: str, experiment: str, parent_key: str | None = None) -> str | None:
    """The address of `experiment`'s runs table (in the shared view of `parent_key` when the experiment
    has it): on the tracking server of `uri`, or on a local `mlflow ui` (port 5000) for a local store;
    ``None`` when the experiment is not in the store."""
    from mlflow.tracking import MlflowClient

    found = MlflowClient(tracking_uri=uri).get_experiment_by_name(experiment)
    if found is None:
        return None
    view = view_key(parent_key) if parent_key else None
    if view is not None and VIEW_TAG + view not in found.tags:
        view = None
    parsed = urlparse(uri)
    base = f"{parsed.scheme}://{parsed.netloc}{parsed.path.rstrip('/')}" if is_server(uri) else LOCAL_UI
    return base + runs_page_path(str(found.experiment_id), view)


def browse_lines(uri: str, experiment: str, parent_key: str | None = None) -> list[str]:
    """What the CLI prints after a tracked run or sweep."""
    lines = [] if is_server(uri) else [f"browse: mlflow ui --backend-store-uri {uri}"]
    page = runs_page(uri, experiment, parent_key)
    if page is not None:
        lines.append(f"runs table: {page}")
    return lines
