"""`biorab plan` benchmark: cold (empty cache folder) and warm (the same folder again) plan times, side by
side, of this checkout and optionally another one (``--other /path/to/checkout``: e.g. main, for before and
after numbers measured under the same load).

Each plan runs as a user runs it, ``python -m biorab.cli.main plan SWEEP --json``, in a subprocess whose
``PYTHONPATH`` is the checkout under test. A cold run gets a fresh ``BIORAB_CACHE_DIR`` (no corpus digests,
no hit or generation store: a fresh machine), the warm run reuses it. Checkouts are interleaved round by
round, so a burst of load from other users hits both. Printed per checkout and mode: the median wall
seconds, the median CPU seconds (user + sys of the subprocess: what other users' load does not inflate),
and ratios. The plans' JSON (less ``seconds``) must agree across checkouts and modes; a mismatch is printed.

Run: ``.venv/bin/python bench/plan.py [SWEEP] [--rounds 3] [--other OTHER_CHECKOUT]`` (SWEEP defaults to
jobs/paper.yaml; its data is found as ``biorab plan`` finds it, e.g. ``$BIORAB_DATA_DIR``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Timings:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def plan_once(checkout: Path, sweep: Path, cache: Path) -> tuple[float, float, dict[str, Any]]:
    """Wall and CPU seconds of one ``biorab plan --json`` run with `checkout`'s code, and its JSON."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "BIORAB_CACHE_DIR": str(cache)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "biorab.cli.main", "plan", str(sweep), "--json"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"plan failed with {checkout}:\n{out.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    got = json.loads(out.stdout)
    got.pop("seconds", None)
    return wall, cpu, got


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sweep", nargs="?", default=str(REPO / "jobs" / "paper.yaml"))
    parser.add_argument("--rounds", type=int, default=3, help="cold+warm pairs per checkout")
    parser.add_argument("--other", type=Path, help="another checkout to time beside this one (e.g. main)")
    args = parser.parse_args()
    sweep = Path(args.sweep).resolve()
    checkouts = {"this": REPO, **({"other": args.other.resolve()} if args.other else {})}
    times = {(name, mode): Timings() for name in checkouts for mode in ("cold", "warm")}
    plans: dict[tuple[str, str], dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as tmp:
        for r in range(args.rounds):
            for name, checkout in checkouts.items():
                cache = Path(tmp) / f"{name}-{r}"
                for mode in ("cold", "warm"):
                    wall, cpu, plans[(name, mode)] = plan_once(checkout, sweep, cache)
                    times[(name, mode)].wall.append(wall)
                    times[(name, mode)].cpu.append(cpu)
                    print(
                        f"  round {r + 1}: {name:5} {mode}: {wall:6.2f} s wall, {cpu:6.2f} s CPU", flush=True
                    )
    first = next(iter(plans.values()))
    for key, got in plans.items():
        if got != first:
            print(f"MISMATCH: the plan of {key} differs from {next(iter(plans))}")
    med = {k: (statistics.median(t.wall), statistics.median(t.cpu)) for k, t in times.items()}
    print(
        f"\n{sweep.name}: {first['cells']} cells, {first['unique_generation_keys']} generation keys "
        f"(medians of {args.rounds} rounds)"
    )
    heads = ("cold wall", "warm wall", "cold CPU", "warm CPU", "cold/warm CPU")
    print(f"{'checkout':10} " + " ".join(f"{h:>10}" for h in heads[:4]) + f" {heads[4]:>14}")
    for name, checkout in checkouts.items():
        (cw, cc), (ww, wc) = med[(name, "cold")], med[(name, "warm")]
        print(f"{name:10} {cw:9.2f}s {ww:9.2f}s {cc:9.2f}s {wc:9.2f}s {cc / wc:13.2f}x   ({checkout})")
    if "other" in checkouts:
        for mode in ("cold", "warm"):
            (tw, tc), (ow, oc) = med[("this", mode)], med[("other", mode)]
            print(f"{mode}: other/this = {ow / tw:.2f}x wall, {oc / tc:.2f}x CPU")


if __name__ == "__main__":
    main()
