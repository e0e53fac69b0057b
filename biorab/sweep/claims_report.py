"""The sweep report's claim-diagnostics table: every cell with claim metrics (`biorab.diagnostics`), ×100
with their 95% CIs, unranked (a higher noise sensitivity is no "best")."""

from __future__ import annotations

from biorab.diagnostics.cell_claims import METRICS
from biorab.diagnostics.report import HEADINGS, NOTE
from biorab.sweep.attribution_report import _one_row_each, _shown
from biorab.sweep.collect import CellRecord
from biorab.sweep.tables import Grid


def claim_grids(cells: list[CellRecord]) -> list[Grid]:
    """The claim-diagnostics table (none when no cell has a claim metric)."""
    found = [c for c in cells if any(m in c.metrics for m in METRICS)]
    if not found:
        return []
    grid = Grid("Claim diagnostics (judge-free RAGChecker metrics), ×100 [95% CI]", list(HEADINGS), note=NOTE)
    for name, c in _one_row_each(found):
        grid.rows.append((name, [_shown(c, m) for m in METRICS]))
    return [grid]
