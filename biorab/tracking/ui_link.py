"""The line that opens a run's experiment in the MLflow UI on its runs table.

MLflow 3.17's UI opens every experiment in its GenAI mode (an empty traces "Overview") unless the URL
says ``workflowType=machine_learning``; the experiment's ``mlflow.experimentKind`` tag (set by
`biorab.tracking.session`) is not enough on its own. So the CLI prints the address of the runs page.
"""

from __future__ import annotations

from urllib.parse import urlparse

from biorab.tracking.preflight import is_server

#: Where `mlflow ui` listens by default.
LOCAL_UI = "http://127.0.0.1:5000"
RUNS_QUERY = "workflowType=machine_learning"


def runs_page_path(experiment_id: str) -> str:
    """The UI route of an experiment's runs table (MLflow routes after ``#``).

    >>> runs_page_path("3")
    '/#/experiments/3/runs?workflowType=machine_learning'
    """
    return f"/#/experiments/{experiment_id}/runs?{RUNS_QUERY}"


def runs_page(uri: str, experiment: str) -> str | None:
    """The address of `experiment`'s runs table: on the tracking server of `uri`, or on a local `mlflow ui`
    (port 5000) for a local store; ``None`` when the experiment is not in the store."""
    from mlflow.tracking import MlflowClient

    found = MlflowClient(tracking_uri=uri).get_experiment_by_name(experiment)
    if found is None:
        return None
    parsed = urlparse(uri)
    base = f"{parsed.scheme}://{parsed.netloc}{parsed.path.rstrip('/')}" if is_server(uri) else LOCAL_UI
    return base + runs_page_path(str(found.experiment_id))


def browse_lines(uri: str, experiment: str) -> list[str]:
    """What the CLI prints after a tracked run or sweep."""
    lines = [] if is_server(uri) else [f"browse: mlflow ui --backend-store-uri {uri}"]
    page = runs_page(uri, experiment)
    if page is not None:
        lines.append(f"runs table: {page}")
    return lines
