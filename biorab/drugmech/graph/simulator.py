"""The qualitative MoA simulator (spec §3): propagate the drug's +1 level along the MoA to the disease.

Each relation label has a direction: POSITIVE (+1) and SAME (0) pass the head's level on unchanged,
NEGATIVE (-1) flips it. Any other label is UNKNOWN and makes the MoA not simulatable. The level of a node is
the sign of the sum of its incoming contributions: +1 increased/activated, -1 decreased/inhibited,
0 unchanged or conflicting. A MoA is *valid* when it is simulatable and the disease ends at -1.
"""

from __future__ import annotations

from collections import defaultdict

import networkx as nx

from biorab.common.errors import DataError
from biorab.drugmech.graph.moa import MoA

POSITIVE, SAME, NEGATIVE = 1, 0, -1

# spec §3.1: the 20 most frequent DrugMechDB labels have a direction; ``phenotype of`` is the one label of the
# staged v2.0.1 copy absent from the paper's copy and is mapped to SAME (with it the paper's counts match).
RELATION_DIRECTIONS: dict[str, int] = {
    **dict.fromkeys(
        ("positively regulates", "positively correlated with", "increases activity of", "causes",
         "increases abundance of", "contributes to", "correlated with"), POSITIVE),
    **dict.fromkeys(
        ("decreases activity of", "negatively regulates", "negatively correlated with",
         "decreases abundance of", "disrupts"), NEGATIVE),
    **dict.fromkeys(
        ("participates in", "occurs in", "manifestation of", "in taxon", "located in", "location of",
         "part of", "phenotype of"), SAME),
}

# spec §4.2: the three invertible relation pairs.
INVERSE_RELATIONS: dict[str, str] = {
    "decreases activity of": "increases activity of",
    "increases activity of": "decreases activity of",
    "negatively regulates": "positively regulates",
    "positively regulates": "negatively regulates",
    "decreases abundance of": "increases abundance of",
    "increases abundance of": "decreases abundance of",
}


class NotSimulatableError(DataError):
    """The MoA has a cycle or a relation with no direction; the message names the MoA and the cause."""


def direction(relation: str) -> int | None:
    """The direction of a relation label: +1, 0 (SAME) or -1; None when it is UNKNOWN."""
    return RELATION_DIRECTIONS.get(relation)


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def unsimulatable_reason(moa: MoA) -> str | None:
    """Why `moa` cannot be simulated (a cycle, or the first relation without a direction), or None."""
    for u, v, rel in moa.edges():
        if rel not in RELATION_DIRECTIONS:
            return f"relation {rel!r} ({u} -> {v}) has no direction"
    if not moa.is_acyclic():
        cycle = nx.find_cycle(moa.graph)
        return "the graph has a cycle through " + " -> ".join(str(e[0]) for e in cycle)
    return None


def is_simulatable(moa: MoA) -> bool:
    """True when every relation has a direction and the graph is acyclic."""
    return unsimulatable_reason(moa) is None


def simulate(moa: MoA) -> dict[str, int]:
    """Node levels after propagating the drug's +1 through `moa` (spec §3.2).

    Nodes that receive no contribution get no entry; read levels with ``levels.get(node, 0)``.

    Raises:
        NotSimulatableError: the MoA has a cycle or a relation without a direction (names the MoA).
    """
    reason = unsimulatable_reason(moa)
    if reason is not None:
        raise NotSimulatableError(f"MoA {moa.moa_id} cannot be simulated: {reason}", field="links")
    pending: dict[str, list[int]] = defaultdict(list)
    pending[moa.root].append(POSITIVE)
    levels: dict[str, int] = {}
    for head in nx.topological_sort(moa.graph):
        if pending[head]:
            levels[head] = _sign(sum(pending[head]))
        head_level = levels.get(head, 0)
        for _, tail, rel in moa.graph.out_edges(head, keys=True):
            flip = -1 if RELATION_DIRECTIONS[rel] == NEGATIVE else 1
            pending[tail].append(head_level * flip)
    return levels


def sink_level(moa: MoA) -> int:
    """The disease's simulated level (raises `NotSimulatableError` like `simulate`)."""
    return simulate(moa).get(moa.sink, 0)


def is_valid(moa: MoA) -> bool:
    """Simulatable and the drug reduces the disease (sink level -1)."""
    return is_simulatable(moa) and sink_level(moa) == NEGATIVE
