"""The MLflow UI as a person sees it, in headless Chromium: `biorab run jobs/smoke.yaml` (fake backend),
then `mlflow ui` on its store and the printed "runs table" address. The page must list the six cells with
their metric (no clicks, no GenAI pages), and a trace of a retrieval cell must show its retrieved
documents. Screenshots of both pages are kept (``$BIORAB_SCREENSHOT_DIR``, else the test's tmp dir).

The browser is the system's Chromium driven by Playwright (`tests/support/browser.py`: `.ci/run` installs
Debian's `chromium` when missing; without it the test is skipped here and fails under CI); it may reach
the UI's loopback address only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biorab.tasks import PRIMARY_METRIC
from tests.support.browser import browser_page, require_chromium, screenshot_dir, wait_for_text
from tests.support.cli_runs import biorab
from tests.support.mlflow_ui import MlflowUI

pytestmark = pytest.mark.slow
SMOKE = Path(__file__).resolve().parents[2] / "jobs" / "smoke.yaml"
RUNS_LINE = "runs table: http://127.0.0.1:5000"
CLICK_ROW = """(() => { const els = [...document.querySelectorAll('body *')]
  .filter(e => e.children.length === 0 && e.textContent.includes(%s));
  if (!els.length) return false; els[0].click(); return true; })()"""
CLICK_SPAN = """(() => { const els = [...document.querySelectorAll('body *')]
  .filter(e => e.children.length === 0 && e.textContent.trim() === 'retrieve');
  if (!els.length) return false; els[els.length - 1].click(); return true; })()"""
SCROLL_RIGHT = ("document.querySelectorAll('.ag-body-horizontal-scroll-viewport, .ag-center-cols-viewport')"
                ".forEach(e => { e.scrollLeft = e.scrollWidth; })")
ROW_TEXT = """[...document.querySelectorAll('.ag-row[row-id="%s"]')].map(e => e.innerText).join(' ')"""


def test_runs_page_lists_cells_and_a_trace_shows_its_documents(tmp_path: Path, data_dir: Path) -> None:
    require_chromium()
    from mlflow.tracing.client import TracingClient
    from mlflow.tracking import MlflowClient

    out = biorab("run", str(SMOKE), "--backend", "fake", "--no-ray", "--output-dir", str(tmp_path / "runs"),
                 "--data-dir", str(data_dir), cache=tmp_path / "cache", MLFLOW_TRACKING_URI="")
    assert out.returncode == 0, out.stderr
    route = next(line for line in out.stdout.splitlines() if line.startswith(RUNS_LINE))[len(RUNS_LINE):]
    store = f"sqlite:///{tmp_path}/runs/smoke/mlflow.db"
    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("biorab-smoke")
    assert experiment is not None
    children = [r for r in client.search_runs([experiment.experiment_id]) if "cell_id" in r.data.tags]
    assert len(children) == 6
    shots = screenshot_dir(tmp_path)
    with MlflowUI(store, tmp_path / "ui.log") as base, browser_page(allow=(base,), width=1600) as visit:
        page = visit.page
        page.goto(base + route)
        wait_for_text(page, [r.info.run_name for r in children] + ["Metrics", "f1", "micro_f1", "macro_f1"],
                      timeout=90)
        for run in children:  # each cell's row shows its dataset and its headline metric
            metric = PRIMARY_METRIC[run.data.params["task"]]
            row = page.evaluate(ROW_TEXT % run.info.run_id).split("\n")
            assert run.info.run_name in row and run.data.params["dataset"] in row, row
            assert f"{run.data.metrics[metric]:g}" in row, (metric, row)
        page.screenshot(path=str(shots / "mlflow-runs.png"))
        page.evaluate(SCROLL_RIGHT)  # the CI tags are the table's last columns
        for run in children:
            metric = PRIMARY_METRIC[run.data.params["task"]]
            shown = ROW_TEXT % run.info.run_id
            ci = json.dumps(run.data.tags[f"ci.{metric}"])
            row = page.wait_for_function(f"{shown}.includes({ci}) && {shown}", timeout=20_000).json_value()
            assert run.data.tags[f"ci.{metric}"] in row, (metric, row)

        cell = next(r for r in children if r.data.params["retriever"] == "bm25"
                    and r.data.params["dataset"] == "medmcqa")
        traces = TracingClient(store).search_traces(locations=[experiment.experiment_id],
                                                    run_id=cell.info.run_id)
        trace = min(traces, key=lambda t: t.info.tags["biorab.instance"])
        spans = {s.name: s for s in trace.data.spans}
        (doc,) = spans["retrieve"].outputs
        question = json.loads(json.dumps(spans[cell.info.run_name].inputs))["input"]
        page.goto(f"{base}/#/experiments/{experiment.experiment_id}/runs/{cell.info.run_id}/traces"
                  "?workflowType=machine_learning")
        wait_for_text(page, [question[:60]], timeout=60)
        assert page.evaluate(CLICK_ROW % json.dumps(question[:60]))
        wait_for_text(page, ["Spans", "retrieve", "generate", "parse"], timeout=30)
        assert page.evaluate(CLICK_SPAN)
        text = wait_for_text(page, ["Outputs", doc["page_content"][:40], doc["metadata"]["doc_uri"]],
                             timeout=30)
        assert "query" in text
        page.screenshot(path=str(shots / "mlflow-trace.png"))
