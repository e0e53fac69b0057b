"""One entry point for every Drug Mechanisms prompt: `render_prompt(query, world=, mode=, moas=)`.

Counterfactual samples take a world (``open``/``closed``); factual samples take a disease mode. Every
prompt is sent as a single user message with no system prompt (spec §8).
"""

from __future__ import annotations

from collections.abc import Iterator

from biorab.drugmech.prompts.add_link import render_addlink
from biorab.drugmech.prompts.edit_link import render_editlink
from biorab.drugmech.prompts.factual import (
    ANONYMIZED,
    DISEASE_MODES,
    NAMED,
    NAMED_WITH_ASSOCIATIONS,
    DiseaseNeighbours,
    render_factual,
)
from biorab.drugmech.prompts.moa_text import CLOSED_WORLD, OPEN_WORLD, WORLDS, MoaLookup, check_world
from biorab.drugmech.queries.query_files import ADD_LINK, FactualQuery, Query, QueryFile

__all__ = [
    "ANONYMIZED",
    "CLOSED_WORLD",
    "DISEASE_MODES",
    "NAMED",
    "NAMED_WITH_ASSOCIATIONS",
    "OPEN_WORLD",
    "WORLDS",
    "needs_drugmechdb",
    "render_file",
    "render_prompt",
]


def needs_drugmechdb(query_type: str, *, world: str, mode: str) -> bool:
    """Whether rendering this kind of prompt reads MoAs from DrugMechDB."""
    if query_type == "known_moa":
        return mode != NAMED
    return world == CLOSED_WORLD


def render_prompt(
    query: Query,
    *,
    world: str = OPEN_WORLD,
    mode: str = NAMED,
    moas: MoaLookup | None = None,
    primekg: DiseaseNeighbours | None = None,
) -> str:
    """Render the prompt of any released or generated sample.

    Args:
        query: A counterfactual or factual sample.
        world: ``open`` or ``closed``; counterfactual samples only.
        mode: The disease mode; factual samples only.
        moas: DrugMechDB, needed in the closed world and in the factual modes that describe the disease.
        primekg: PrimeKG neighbours, needed for factual negatives outside ``NAMED_DISEASE``.

    Raises:
        DataError: When the inputs a prompt needs are missing, or the world/mode is unknown.
    """
    check_world(world)
    if isinstance(query, FactualQuery):
        return render_factual(query, mode=mode, moas=moas, primekg=primekg)
    if query.query_type == ADD_LINK:
        return render_addlink(query, world=world, moas=moas)
    return render_editlink(query, world=world, moas=moas)


def render_file(
    query_file: QueryFile,
    *,
    world: str = OPEN_WORLD,
    mode: str = NAMED,
    moas: MoaLookup | None = None,
    primekg: DiseaseNeighbours | None = None,
) -> Iterator[tuple[int, str]]:
    """Yield ``(row index, prompt)`` for every sample of a query file, in file order."""
    for index, query in enumerate(query_file.queries):
        yield index, render_prompt(query, world=world, mode=mode, moas=moas, primekg=primekg)
