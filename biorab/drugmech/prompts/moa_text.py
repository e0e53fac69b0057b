"""Rendering rules shared by every Drug Mechanisms prompt (spec §2 "prompt rendering of a MoA", §8.4).

A MoA is written one edge per line as ``"{Type}: {Name} | {relation} | {Type}: {Name}"``, nodes in
lexicographical topological order (ties broken by node id), each node's out-edges in insertion order.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Protocol

import networkx as nx

from biorab.common.errors import DataError
from biorab.drugmech.graph.moa import MoA, capitalize_words, display_name, type_name
from biorab.drugmech.prompts.texts import KNOWN_MOA_INSERT

OPEN_WORLD = "open"
CLOSED_WORLD = "closed"
WORLDS: tuple[str, ...] = (OPEN_WORLD, CLOSED_WORLD)

# textwrap width of the Delete/Invert response options (spec §8.3).
OPTION_WRAP_WIDTH = 90


class MoaLookup(Protocol):
    """Anything that returns a MoA by id: a `DrugMechDB`, or a plain ``dict[str, MoA]``."""

    def __getitem__(self, moa_id: str, /) -> MoA: ...


def node_label(moa: MoA, node: str) -> str:
    """``"{TypeName}: {Name}"`` for one node, as prompts and parsed answers write it."""
    node_type = moa.node_type(node)
    return f"{type_name(node_type)}: {display_name(node_type, moa.node_name(node))}"


def moa_for_prompt(moa: MoA) -> str:
    """The MoA as prompt text: one ``head | relation | tail`` line per edge, no trailing newline.

    Nodes follow ``networkx.lexicographical_topological_sort`` keyed by node id; a cyclic graph (which the
    original also tolerates here) is written in edge-insertion order.
    """
    graph = moa.graph
    try:
        order = list(nx.lexicographical_topological_sort(graph, key=str))
    except nx.NetworkXUnfeasible:
        edges = list(graph.edges(keys=True))
    else:
        edges = [e for node in order for e in graph.out_edges(node, keys=True)]
    return "\n".join(f"{node_label(moa, u)} | {k} | {node_label(moa, v)}" for u, v, k in edges)


def known_moa_block(moa: MoA) -> str:
    """The closed-world insert for one MoA, named by its own drug and disease (spec §8.2, §8.3)."""
    return KNOWN_MOA_INSERT.format(
        drug_name=capitalize_words(moa.drug_name),
        disease_name=capitalize_words(moa.disease_name),
        moa_repr=moa_for_prompt(moa),
    )


def format_options(options: Mapping[str, str]) -> str:
    """The response options block: each text wrapped at 90 columns, prefixed ``"* "``, blank-line apart."""
    return "\n\n".join(
        "* " + "\n".join(textwrap.wrap(text, width=OPTION_WRAP_WIDTH)) for text in options.values()
    )


def check_world(world: str) -> str:
    """Validate a world name (``open`` or ``closed``)."""
    if world not in WORLDS:
        raise DataError(f"unknown world {world!r}; allowed: {', '.join(WORLDS)}", field="world")
    return world


def lookup_moa(moas: MoaLookup | None, moa_id: str, *, needed_for: str) -> MoA:
    """Fetch a MoA by id from a DrugMechDB-like mapping, with an error that says why it was needed."""
    if moas is None:
        raise DataError(
            f"{needed_for} needs DrugMechDB (MoA {moa_id!r}); load it with load_drugmechdb()", field="moa_id"
        )
    try:
        return moas[moa_id]
    except (KeyError, DataError) as e:
        raise DataError(f"{needed_for}: MoA {moa_id!r} is not in DrugMechDB", field="moa_id") from e
