"""The DrugMech golden fixtures: the original code's rendered prompts and expected MoAs, test expectations
made when the data was staged. They are not published data (`biorab data fetch` has no source for them),
so the tests read the project's copy (`tests/data/drugmechcf/golden`, cut by tests/data/make_fixtures.py)
whichever DrugMechDB and release they render from."""

from __future__ import annotations

from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "drugmechcf" / "golden"
