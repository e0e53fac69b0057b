"""`LiveTracking`: a run or sweep's MLflow session that never stops the compute.

A tracking failure (unreachable server, broken store) is remembered, tracking stops, the work goes on and
its results are written to disk; `finish` then raises one `TrackingError` that says where the results are
and how to log them (``biorab track RUN_DIR``).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from biorab.common.errors import TrackingError
from biorab.tracking.session import CellEntry, TrackingSession

ProgressFn = Callable[[int, int], None]
CellRowsFn = Callable[[Mapping[str, int]], None]
_PACKAGES = ("biorab", "ray", "mlflow", "torch", "transformers", "vllm", "pyarrow")


def provenance_tags() -> dict[str, str]:
    """Git commit of the checkout (MLflow's own tag, shown in the UI) and package versions."""
    tags = {f"version.{name}": _version(name) for name in _PACKAGES}
    commit = _git_commit()
    if commit:
        tags["mlflow.source.git.commit"] = commit
    return tags


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, timeout=5,
                             capture_output=True, text=True, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


class LiveTracking:
    """The MLflow session of one run or sweep (see the module docstring)."""

    def __init__(self, session: TrackingSession | None, error: str | None, results_dir: Path) -> None:
        self.session, self.error, self.results_dir = session, error, results_dir
        self._written = 0

    @classmethod
    def start(cls, *, results_dir: Path, **open_kwargs: Any) -> LiveTracking:
        """Open the parent run (`TrackingSession.open` arguments); a failure is kept for `finish`."""
        hint = f"Results stay on disk in {results_dir}; log them later with `biorab track {results_dir}`"
        try:
            return cls(TrackingSession.open(hint=hint, **open_kwargs), None, results_dir)
        except TrackingError as e:
            error = str(e) if hint in str(e) else f"{e}. {hint}"
            print(f"biorab: tracking disabled for this run: {error}", file=sys.stderr, flush=True)
            return cls(None, error, results_dir)

    def _guard(self, fn: Callable[[TrackingSession], Any]) -> None:
        if self.session is None:
            return
        try:
            fn(self.session)
        except TrackingError as e:
            print(f"biorab: tracking stopped: {e}", file=sys.stderr, flush=True)
            self.session, self.error = None, str(e)

    def watch_cells(self, entries: dict[str, CellEntry]) -> CellRowsFn:
        """Register the children of a run's cells (by cell id); returns the executor's per-cell callback
        (`biorab.runner.executors.CellRowsFn`) that opens each child when its cell starts."""
        self._guard(lambda s: s.register_cells(list(entries.values())))
        keys = {cell_id: entry.key for cell_id, entry in entries.items()}

        def cell_rows(counts: Mapping[str, int]) -> None:
            by_key = {keys[c]: n for c, n in counts.items() if c in keys}
            if by_key:
                self._guard(lambda s: s.cell_rows(by_key))

        return cell_rows

    def progress(self, inner: ProgressFn | None) -> ProgressFn:
        """A progress callback that also logs rows written on the parent (at most every 2 %)."""
        state = {"last": 0}

        def report(advance: int, total: int) -> None:
            self._written += advance
            if inner is not None:
                inner(advance, total)
            if self._written - state["last"] >= max(1, total // 50) or self._written >= total:
                state["last"] = self._written
                self._guard(lambda s: s.progress(self._written, total))

        return report

    def finish_cell(self, key: str, metrics: dict[str, float], tags: dict[str, str],
                    artifacts: list[tuple[Path, str | None]], table: dict[str, list[Any]] | None,
                    trace_rows: list[dict[str, Any]] | None = None) -> None:
        self._guard(lambda s: s.finish_cell(key, metrics, tags, artifacts, table, trace_rows))

    def add_to_cell(self, key: str, metrics: dict[str, float], tags: dict[str, str]) -> None:
        self._guard(lambda s: s.add_to_cell(key, metrics, tags))

    def finish(self, artifacts: list[tuple[Path, str | None]],
               tables: dict[str, dict[str, list[Any]]] | None = None,
               view: dict[str, Any] | None = None) -> str:
        """End the parent; raises the remembered `TrackingError` (results are on disk by then)."""
        uri: list[str] = []
        self._guard(lambda s: uri.append(s.finish(artifacts, tables=tables, view=view)))
        if self.error is not None:
            raise TrackingError(self.error)
        return uri[0]

    def fail(self, status: str = "FAILED") -> None:
        if self.session is not None:
            self.session.fail(status)
