"""`biorab explore` at the size of the testbeds grid: build time, and the page's load, filter and open times
in headless Chromium.

The run is the grid of ``jobs/testbeds.yaml`` (6 datasets × 7 corpora = 42 cells) on the fake backend with
``--limit 1000`` (about 34k rows), into a local output folder with a local MLflow store (the job's server
address and GPU resources are replaced by the defaults). Rows already on disk are reused (``--fresh`` starts
over). Then:

- build: `biorab.explorer.write_explorer` on the run folder, timed in this process (wall and CPU seconds
  per 10k rows: on a loaded machine the CPU time is the steadier figure);
- load: the system Chromium (Playwright, by its path; every non-``file:`` request aborted) opens
  ``explorer/index.html`` from disk; the time from navigation start to the list with its counts (every
  index chunk loaded, the rows decoded, the first filter pass done), as the page measures it;
- filter: each filter applied through the page's own controls, ``--repeat`` times; the page measures from
  the change event to the counts and the list items in view drawn (median and max);
- open: one instance opened (its detail chunk loaded, its cells drawn side by side, or as a table beyond
  6 cells), wall time.

    python bench/explorer.py                    # in-process run (--no-ray), then build and browse
    python bench/explorer.py --ray              # the run on local Ray instead
    python bench/explorer.py --reuse            # a finished run on disk as it is: build and browse only
    python bench/explorer.py --folder RUN_OR_SWEEP  # any finished run or sweep folder (a rehearsal's)
    python bench/explorer.py --synthetic 482621 # a synthetic sweep of the paper grid's shape and size

``--synthetic ROWS`` runs nothing: it writes a sweep-shaped folder (5 models × 5 datasets × 13 retrieval
settings = 325 cells, `tests.support.explorer_sweep`: real configs and cell ids, rows and attribution files
with answers drawn from a seeded generator, short texts) trimmed to ROWS rows, then builds and browses it
as above, and also times the sweep views: the matrix (every listed instance × every chosen cell, drawn
rows only), a scroll of it, choosing cells by an axis, an instance of 65 cells as a table, the pinned
baseline's statistics for every cell, and a view reopened from its URL.

It prints the CPU flags, the core count and the load average first: timings on a shared machine vary.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
JOB = REPO / "jobs" / "testbeds.yaml"
# (filter, how to set it) through the page's controls; the attribution filters are disabled (and not timed)
# until the run writes attribution: every filter costs the same one pass over the rows.
SELECTS = ("dataset", "cell", "probe", "verdict", "flip")
CHECKS = ("parse", "error", "misled", "leaked", "corrupted", "copied")


def machine() -> str:
    from biorab.generation.dtype import cpu_flags

    shown = " ".join(sorted(f for f in cpu_flags() if f in {"avx2", "avx512f", "avx512_bf16", "amx_tile"}))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"CPU: {os.cpu_count()} cores; flags: {shown or '(none of avx2 avx512f avx512_bf16 amx_tile)'}; " \
           f"load average {load}"


def run_grid(out: Path, *, limit: int, ray: bool, fresh: bool) -> tuple[Path, float]:
    config = yaml.safe_load(JOB.read_text(encoding="utf-8"))
    config.update(output_dir=str(out), backend={"name": "fake"}, tracking={"experiment": "bench-explorer"})
    config.pop("resources", None)
    path = out / "testbeds-fake.yaml"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    cmd = [sys.executable, "-m", "biorab.cli.main", "run", str(path), "--limit", str(limit), "--no-fetch",
           "--ray" if ray else "--no-ray", "--fresh" if fresh else "--resume"]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return out / config["name"], time.perf_counter() - started


def write_synthetic(out: Path, rows: int) -> Path:
    """The paper grid's shape: 5 models × 5 datasets × 13 settings = 325 cells, trimmed to `rows`."""
    import shutil

    from tests.support.explorer_sweep import SETTINGS_13, write_sweep

    shutil.rmtree(out / "synthetic", ignore_errors=True)
    datasets = ("ade", "chemprot", "git", "hetionet", "ade_corpus_v2")
    per = -(-rows // (5 * 13 * len(datasets)))  # instances per dataset slice, rounded up
    models = {f"model-{m}": (0.45 + 0.08 * m, 0.9 - 0.15 * m) for m in range(5)}
    return write_sweep(out, models=models, datasets=dict.fromkeys(datasets, per), settings=SETTINGS_13,
                       seed=0, total_rows=rows)


def _wait_ms(page: Any, counter: str, before: int, value: str) -> float:
    page.wait_for_function(f"Number(document.body.dataset.{counter} || 0) > {before}", timeout=300_000)
    return float(page.get_attribute("body", f"data-{value}") or "nan")


def _count(page: Any, counter: str) -> int:
    return int(page.get_attribute("body", f"data-{counter}") or 0)


def sweep_views(page: Any, index: Path, repeat: int) -> dict[str, Any]:
    """Times of the sweep views (ms, as the page measures them unless said wall)."""
    found: dict[str, Any] = {}
    page.goto(index.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=300_000)
    times = []
    for _ in range(repeat):  # choose cells by an axis (one testbed value off), then all again
        box = page.locator("#axes fieldset[data-axis=testbed] input").first
        for action in (box.uncheck, box.check):
            before = _count(page, "filters")
            action()
            times.append(_wait_ms(page, "filters", before, "filter-ms"))
    found["axis"] = times
    times = []
    for _ in range(repeat):
        before = _count(page, "matrix")
        page.click("#show-matrix")
        times.append(_wait_ms(page, "matrix", before, "matrix-ms"))
        page.click("#show-list")
    found["matrix"] = times
    page.click("#show-matrix")
    found["matrix_shape"] = page.text_content("#matrix-header .mid")
    found["matrix_rows_drawn"] = page.locator("#matrix-grid .mrow").count()
    found["scroll"] = [page.evaluate("""(k) => { const g = document.getElementById('matrix-grid');
        const t0 = performance.now(); g.scrollTop = g.scrollHeight * k / 10;
        g.dispatchEvent(new Event('scroll')); return performance.now() - t0; }""", k) for k in range(1, 10)]
    page.click("#show-list")
    started = time.perf_counter()
    page.select_option("#baseline", index=1)
    page.wait_for_selector("#baseline-panel:not([data-done='0'])", timeout=300_000)
    found["baseline_wall_ms"] = (time.perf_counter() - started) * 1000
    found["baseline_rows"] = page.locator("tr.baseline-row").count()
    page.select_option("#baseline", index=0)
    times = []
    instances = int((page.text_content("#status") or "0").split()[0])
    for k in range(repeat):  # instances spread over the sweep, each in a freshly loaded page
        number = instances * (k + 1) // (repeat + 1)
        page.goto("about:blank")  # else a new "#" only would not reload the page
        page.goto(index.as_uri() + f"#i={number}&group=testbed&sort=verdict")
        page.wait_for_selector("body[data-ready='1']", timeout=300_000)
        page.wait_for_selector("table.cells", timeout=60_000)
        page.wait_for_function("document.body.dataset.openMs !== undefined")
        times.append(float(page.get_attribute("body", "data-open-ms") or "nan"))
    found["open_table"] = times
    found["open_table_cells"] = page.locator("table.cells tr.cell-row").count() + sum(
        int(f.get_attribute("data-count")) for f in page.locator("table.cells tr.fold").all())
    url = index.as_uri() + "#v=matrix&f.verdict=2&a.testbed=counterfactual&a.rate=1&a.k=1&a.retriever=bm25" \
                           "&a.method=none&a.slice=ade_corpus_v2-test&mx=model"
    page.goto("about:blank")
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("#matrix-grid .mrow[data-instance]", timeout=300_000)
    found["url_matrix_wall_ms"] = (time.perf_counter() - started) * 1000
    found["url_matrix_shape"] = page.text_content("#matrix-header .mid")
    return found


def browse(index: Path, repeat: int, *, views: bool = False) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from tests.support.browser import FLAGS, chromium_binary

    binary = chromium_binary()
    if binary is None:
        sys.exit("no chromium on PATH (apt-get install -y chromium)")
    found: dict[str, Any] = {"filters": {}}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=binary, args=FLAGS, headless=True)
        context = browser.new_context(viewport={"width": 1500, "height": 1000})
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
        page = context.new_page()
        started = time.perf_counter()
        page.goto(index.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=300_000)
        found["load_wall_ms"] = (time.perf_counter() - started) * 1000
        found["load_ms"] = float(page.get_attribute("body", "data-ready-ms") or "nan")
        found["status"] = page.text_content("#status")
        for name in (*SELECTS, *CHECKS):
            times = _time_filter(page, name, repeat)
            if times:
                found["filters"][name] = times
        page.goto(index.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=300_000)
        middle = page.locator("li.instance a.open").nth(10)
        started = time.perf_counter()
        middle.click()
        page.wait_for_selector(".cell-column, table.cells", timeout=60_000)
        found["open_ms"] = (time.perf_counter() - started) * 1000
        drawn = ".cell-column, table.cells tr.cell-row, table.cells tr.fold"
        found["open_cells"] = page.locator(drawn).count()
        if views:
            found["views"] = sweep_views(page, index, repeat)
        browser.close()
    return found


def _time_filter(page: Any, name: str, repeat: int) -> list[float]:
    """The page's own times (ms) for setting filter `name` and clearing it again, `repeat` times each."""
    control = page.locator(f"[name={name}]")
    if control.is_disabled():
        return []
    times = []
    for _ in range(repeat):
        for setting in (True, False):
            before = int(page.get_attribute("body", "data-filters") or 0)
            if name in SELECTS:
                value = page.eval_on_selector(f"select[name={name}]", "s => s.options[1].value")
                page.select_option(f"select[name={name}]", value if setting else "")
            elif setting:
                page.check(f"input[name={name}]")
            else:
                page.uncheck(f"input[name={name}]")
            page.wait_for_function(f"Number(document.body.dataset.filters) > {before}")
            times.append(float(page.get_attribute("body", "data-filter-ms") or "nan"))
    return times


def print_views(views: dict[str, Any]) -> None:
    def stat(name: str) -> str:
        return f"median {statistics.median(views[name]):6.1f} ms, max {max(views[name]):6.1f} ms " \
               f"({len(views[name])} times)"

    print(f"choose cells by an axis (a testbed off, on again): {stat('axis')}")
    print(f"matrix drawn ({views['matrix_shape']}, {views['matrix_rows_drawn']} rows in the page): "
          f"{stat('matrix')}")
    print(f"matrix scrolled to 9 places (rows redrawn): {stat('scroll')}")
    print(f"baseline statistics for {views['baseline_rows']} cells (n, Δ, McNemar at once; the bootstrap "
          f"CIs in the background): {views['baseline_wall_ms']:.0f} ms wall until every CI is shown")
    print(f"instance as a table ({views['open_table_cells']} cells, grouped by testbed, sorted by verdict), "
          f"opened from its URL: {stat('open_table')} (detail chunk load and drawing)")
    print(f"a matrix view reopened from its URL ({views['url_matrix_shape']}): "
          f"{views['url_matrix_wall_ms']:.0f} ms wall (page load included)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "biorab-bench-explorer",
                    help="run folder root (default: biorab-bench-explorer in the system temp dir)")
    ap.add_argument("--limit", type=int, default=1000, help="instances per dataset")
    ap.add_argument("--ray", action="store_true", help="run on local Ray (default: in-process)")
    ap.add_argument("--fresh", action="store_true", help="recompute the rows even when they are on disk")
    ap.add_argument("--reuse", action="store_true",
                    help="skip the run when its summary.json is on disk (--synthetic: the sweep written)")
    ap.add_argument("--folder", type=Path, default=None,
                    help="a finished run folder (summary.json) or sweep folder (sweep.yaml) on disk: build "
                         "and browse it as it is (e.g. a rehearsal's, bench/grid.py)")
    ap.add_argument("--repeat", type=int, default=5, help="times each filter is set and cleared")
    ap.add_argument("--synthetic", type=int, metavar="ROWS",
                    help="no run: a synthetic sweep of the paper grid's shape (325 cells) with ROWS rows")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    from biorab.cli.support.process_env import apply_process_env_defaults
    from biorab.explorer import write_explorer

    apply_process_env_defaults()
    print(machine())
    reused = args.out / yaml.safe_load(JOB.read_text(encoding="utf-8"))["name"]
    if args.folder is not None:
        if not any((args.folder / name).is_file() for name in ("summary.json", "sweep.yaml")):
            sys.exit(f"{args.folder}: neither a run folder (summary.json) nor a sweep folder (sweep.yaml)")
        run_dir = args.folder
        print(f"folder: {run_dir} as it is on disk")
    elif args.synthetic and args.reuse and (args.out / "synthetic").is_dir():
        run_dir = args.out / "synthetic"
        print(f"SYNTHETIC sweep (no model ran): {run_dir} reused as it is on disk")
    elif args.synthetic:
        started = time.perf_counter()
        run_dir = write_synthetic(args.out, args.synthetic)
        print(f"SYNTHETIC sweep (no model ran): {run_dir}, {args.synthetic} rows written in "
              f"{time.perf_counter() - started:.1f} s")
    elif args.reuse and (reused / "summary.json").is_file():
        run_dir = reused
        print(f"run: {run_dir} reused as it is on disk")
    else:
        run_dir, run_s = run_grid(args.out, limit=args.limit, ray=args.ray, fresh=args.fresh)
        where = "local Ray" if args.ray else "in-process"
        print(f"run: {run_dir} ({where}, --limit {args.limit}) in {run_s:.1f} s")
    cpu = time.process_time()
    build = write_explorer(run_dir)
    cpu = time.process_time() - cpu
    size = sum(f.stat().st_size for f in (run_dir / "explorer").rglob("*") if f.is_file())
    shards = len(list(run_dir.glob("**/cells/*/part-*.parquet")))  # a run folder, or a sweep's runs
    print(f"build: {build.rows} rows ({shards} row shards), {build.instances} instances, {build.cells} "
          f"cells, {build.index_chunks} index + {build.detail_chunks} detail chunks, {size / 1e6:.1f} MB, in "
          f"{build.seconds:.1f} s wall, {cpu:.1f} s CPU = {build.seconds / build.rows * 10_000:.2f} s wall, "
          f"{cpu / build.rows * 10_000:.2f} s CPU per 10k rows")
    found = browse(build.index_html, args.repeat, views=bool(args.synthetic))
    print(f"page load (navigation start → list and counts): {found['load_ms']:.0f} ms "
          f"(wall {found['load_wall_ms']:.0f} ms); {found['status']}")
    for name, times in found["filters"].items():
        print(f"filter {name:<10} median {statistics.median(times):6.1f} ms, max {max(times):6.1f} ms "
              f"({len(times)} changes)")
    skipped = [n for n in (*SELECTS, *CHECKS) if n not in found["filters"]]
    if skipped:
        print(f"not timed (disabled: no evidence attribution in this run): {', '.join(skipped)}")
    print(f"open one instance ({found['open_cells']} cells or folded lines drawn): "
          f"{found['open_ms']:.0f} ms wall")
    views = found.get("views")
    if views:
        print_views(views)
    print(machine())


if __name__ == "__main__":
    main()
