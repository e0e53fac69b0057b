"""The MLflow UI's runs page for a sweep, timed in headless Chromium: how long a person waits to see the
sweep's runs, and to see all of them.

`mlflow ui` (one worker, loopback, no job runner: `tests/support/mlflow_ui.py`) on the sweep's store; the
system Chromium (Playwright, by its path; every request outside the UI aborted) opens the experiment's
"Training runs" page. Timed, from navigation start (wall, in this process):

- first rows: the table shows its first runs (the UI asks the server for runs 100 at a time);
- all runs: the page's "Load more" clicked until every run of the experiment is listed, as the page counts
  them ("N matching runs"; the table is virtualized, so rows in the DOM are not a count);
- reload: the same page opened again in the same browser (the server and the browser warm).

    python bench/mlflow_ui.py runs/rehearsal/paper/mlflow.db --experiment biorab-paper

It prints the CPU flags, the core count and the load average first, and one JSON object last.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.explorer import machine  # noqa: E402  (CPU flags, cores, load: one place)
from tests.support.browser import browser_page  # noqa: E402
from tests.support.mlflow_ui import MlflowUI  # noqa: E402

# The grid is virtualized: its "Load more" button is drawn only once the grid is scrolled to its end.
LOAD_MORE = """(() => { document.querySelectorAll('.ag-body-viewport, .ag-center-cols-viewport')
  .forEach(e => { e.scrollTop = e.scrollHeight; });
  const b = [...document.querySelectorAll('button')]
  .find(e => e.innerText.trim().toLowerCase() === 'load more');
  if (!b || b.disabled) return false; b.scrollIntoView(); b.click(); return true; })()"""


MATCHING = "(() => { const m = document.body.innerText.match(/([0-9,]+) matching runs?/); " \
    "return m ? parseInt(m[1].replace(/,/g, ''), 10) : 0; })()"


def open_runs_page(page: Any, url: str, total: int, timeout_s: float) -> dict[str, float | int]:
    """Open the runs page; the seconds to its first rows and to every one of `total` runs listed, as the
    page counts them ("N matching runs"); "Load more" is clicked only once the previous page has arrived
    (a second click before that asks for the same page again)."""
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(".ag-row", timeout=timeout_s * 1000)
    first = time.perf_counter() - start
    deadline = start + timeout_s
    clicks = 0
    listed = page.evaluate(MATCHING)
    while listed < total and time.perf_counter() < deadline:
        if not page.evaluate(LOAD_MORE):
            page.wait_for_timeout(50)
            listed = page.evaluate(MATCHING)
            continue
        clicks += 1
        before = listed
        while listed == before and time.perf_counter() < deadline:
            page.wait_for_timeout(50)
            listed = page.evaluate(MATCHING)
    return {"first_rows_s": round(first, 2), "all_runs_s": round(time.perf_counter() - start, 2),
            "runs_listed": listed, "load_more_clicks": clicks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path, help="the sweep's mlflow.db (sqlite store)")
    parser.add_argument("--experiment", required=True)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    print(machine(), flush=True)
    from mlflow.tracking import MlflowClient

    store = f"sqlite:///{args.db.resolve()}"
    client = MlflowClient(store)
    experiment = client.get_experiment_by_name(args.experiment)
    if experiment is None:
        raise SystemExit(f"{args.db}: no experiment {args.experiment!r}")
    total = len(client.search_runs([experiment.experiment_id], max_results=50_000))
    log = Path(tempfile.mkdtemp(prefix="mlflow-ui-")) / "ui.log"
    with MlflowUI(store, log) as base, browser_page(allow=(base,), width=1600) as visit:
        url = f"{base}/#/experiments/{experiment.experiment_id}/runs"
        cold = open_runs_page(visit.page, url, total, args.timeout)
        warm = open_runs_page(visit.page, url, total, args.timeout)
    result = {"store": str(args.db), "runs": total, "cold": cold, "reload": warm}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
