"""The explorer's matrix on a real sweep folder (a rehearsed grid, say), checked against the files:
`biorab explore` is built, the page opens from ``file://`` in headless Chromium with every counterfactual
cell chosen (``#v=matrix&a.testbed=counterfactual``), and each cell's right / wrong / misled counts in the
matrix's count table are compared with the cell's ``attribution.parquet``. Prints one line per mismatch and
a summary; exits 1 on any mismatch.

    python bench/explorer_matrix.py runs/rehearsal/paper
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep", type=Path, help="a sweep folder (runs one level down) or a run folder")
    args = parser.parse_args()

    from biorab.explorer import write_explorer
    from biorab.explorer.attribution_file import read_attribution
    from tests.support.browser import browser_page

    started = time.perf_counter()
    built = write_explorer(args.sweep)
    print(f"explorer: {built.cells} cells, {built.rows} rows, built in {time.perf_counter() - started:.1f} s")
    runs = [args.sweep] if (args.sweep / "summary.json").is_file() else sorted(
        p for p in args.sweep.iterdir() if (p / "summary.json").is_file())
    cells = [(run.name, c["cell"], read_attribution(run / "cells" / c["cell_id"]) or {})
             for run in runs for c in json.loads((run / "summary.json").read_text())["cells"]
             if c.get("testbed") == "counterfactual"]
    if not cells:
        print("no counterfactual cell in the folder")
        return 1
    with browser_page(allow=("file://",)) as visit:
        page = visit.page
        started = time.perf_counter()
        page.goto(built.index_html.as_uri() + "#v=matrix&a.testbed=counterfactual")
        page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        page.wait_for_selector("table.matrix-counts tbody tr", timeout=120_000)
        print(f"matrix open in {time.perf_counter() - started:.2f} s (wall); {page.text_content('#chosen')}")
        rows = {r.get_attribute("data-cells"): r for r in page.locator("table.matrix-counts tbody tr").all()}
        # the page numbers cells as its baseline selector lists them (after "no baseline")
        listed = page.evaluate(
            "() => Array.from(document.querySelectorAll('#baseline option')).map(o => o.text)")
        wrong_by_run: dict[str, int] = {}
        bad = 0
        for run, label, attribution in cells:
            row = rows[str(listed.index(f"{run} · {label}") - 1)]
            a = list(attribution.values())
            want = (sum(x["correct"] is True for x in a), sum(x["correct"] is False for x in a),
                    sum(bool(x["followed_corruption"]) for x in a))
            got = tuple(int(row.get_attribute(f"data-{k}") or -1) for k in ("right", "wrong", "misled"))
            if got != want:
                bad += 1
                print(f"mismatch: {run} / {label}: page (right, wrong, misled) {got}, files {want}")
            wrong_by_run[run] = wrong_by_run.get(run, 0) + want[1]
        print(f"{len(cells)} counterfactual cells checked, {bad} mismatches; page errors: {visit.errors}")
        print("wrong answers under counterfactual evidence, by run:", wrong_by_run)
    return 1 if bad or visit.errors else 0


if __name__ == "__main__":
    sys.exit(main())
