"""Editable links (spec §4.2): the cut-edges that Delete-Link and Invert-Link edit, and the reduced DB.

A link qualifies when its MoA is the only one for its drug–disease pair, both ends are of an editable type
(ChemicalSubstance, Drug, GeneFamily, Protein) and the target is not a Drug, and it carries exactly one
relation, which must be invertible. "Surface" links (file tag ``dpi``) start at the drug; "deep" ones
(``ppi``) start at an interior node.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from biorab.drugmech.graph.cut_edges import cut_edges
from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.graph.moa import MoA
from biorab.drugmech.graph.simulator import INVERSE_RELATIONS, is_valid

EDITABLE_TYPES = frozenset({"ChemicalSubstance", "Drug", "GeneFamily", "Protein"})


@dataclass(frozen=True, eq=False)
class EditableLink:
    """One editable edge ``source -> target`` with its single relation and that relation's inverse."""

    moa: MoA
    source: str
    target: str
    relation: str
    inverse: str

    @property
    def is_surface(self) -> bool:
        """True when the edge starts at the drug (file tag ``dpi``)."""
        return self.source == self.moa.root

    @property
    def key(self) -> tuple[str, str, str]:
        """``(moa id, source, target)``: identifies the link across runs."""
        return (self.moa.moa_id, self.source, self.target)


def reduced_db(db: DrugMechDB) -> DrugMechDB:
    """The valid MoAs (simulatable, disease level -1): the base of all counterfactual generation."""
    return db.subset(m for m in db if is_valid(m))


def editable_links(db: DrugMechDB, *, mode: str = "exact") -> Iterator[EditableLink]:
    """The editable links of `db` in MoA order, then cut-edge order (spec §4.2).

    Args:
        db: the MoA set; the "one MoA per pair" rule counts pairs within it.
        mode: the cut-edge mode, ``faithful`` (the paper's pool) or ``exact``.
    """
    for moa in db:
        if db.pair_count(moa) > 1:
            continue
        for u, v in cut_edges(moa.graph, moa.root, moa.sink, mode=mode):
            if moa.node_type(u) not in EDITABLE_TYPES or moa.node_type(v) not in EDITABLE_TYPES:
                continue
            if moa.node_type(v) == "Drug":
                continue
            labels = moa.relations(u, v)
            if len(labels) == 1 and labels[0] in INVERSE_RELATIONS:
                yield EditableLink(moa, u, v, labels[0], INVERSE_RELATIONS[labels[0]])
