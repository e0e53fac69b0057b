"""Mechanism-of-action (MoA) graphs: a directed multigraph with a root (the drug) and a sink (the disease).

A MoA wraps a ``networkx.MultiDiGraph`` whose nodes are entity ids carrying two attributes, ``type`` (the raw
DrugMechDB entity type, e.g. ``Protein``) and ``name`` (the raw name), and whose edge keys are relation
labels (``decreases activity of``). Construction from a DrugMechDB record follows the paper's loader
(spec §1.1); `reduce_graph` follows spec §2. The display helpers (`capitalize_words`, `type_name`,
`display_name`) are the shared rendering rules of spec §8.4, used by generators and prompts alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from biorab.common.errors import DataError

NODE_TYPE = "type"
NODE_NAME = "name"

DRUG_TYPES = frozenset({"Drug", "ChemicalSubstance"})

# spec §8.4: DrugMechDB type -> (singular, plural) display name.
TYPE_NAMES: dict[str, tuple[str, str]] = {
    "Protein": ("Protein", "Proteins"),
    "Drug": ("Drug", "Drugs"),
    "Disease": ("Disease", "Diseases"),
    "BiologicalProcess": ("Biological Process", "Biological Processes"),
    "ChemicalSubstance": ("Chemical", "Chemicals"),
    "GrossAnatomicalStructure": ("Anatomical Structure", "Anatomical Structures"),
    "Pathway": ("Pathway", "Pathways"),
    "OrganismTaxon": ("Organism", "Organisms"),
    "MolecularActivity": ("Molecular Activity", "Molecular Activities"),
    "GeneFamily": ("Gene", "Genes"),
    "CellularComponent": ("Cellular Component", "Cellular Components"),
    "PhenotypicFeature": ("Phenotype", "Phenotypes"),
    "Cell": ("Cell", "Cells"),
    "MacromolecularComplex": ("Macromolecular Complex", "Macromolecular Complexes"),
}
# The reverse map: a singular display name (as an LLM writes it) -> DrugMechDB type.
FORMAL2KG: dict[str, str] = {singular: kg for kg, (singular, _plural) in TYPE_NAMES.items()}

# Names of these types are gene/protein symbols and keep their case (spec §8.4).
UNCAPITALIZED_TYPES = frozenset({"Protein", "GeneFamily"})


def capitalize_words(text: str) -> str:
    """Upper-case the first letter of every purely alphabetic, all-lower-case word (spec §8.4).

    >>> capitalize_words("carbovir  triphosphate")
    'Carbovir Triphosphate'
    >>> capitalize_words("CML (ph+) and mRNA")
    'CML (ph+) And mRNA'
    """
    return " ".join(w[0].upper() + w[1:] if w.isalpha() and w.islower() else w for w in text.split())


def type_name(entity_type: str, *, plural: bool = False) -> str:
    """The display name of a DrugMechDB type (``ChemicalSubstance`` -> ``Chemical``); unknown types pass
    through unchanged."""
    names = TYPE_NAMES.get(entity_type)
    if names is None:
        return entity_type
    return names[1] if plural else names[0]


def display_name(entity_type: str, name: str) -> str:
    """A node name as prompts show it: word-capitalised unless the type is Protein or GeneFamily."""
    return name if entity_type in UNCAPITALIZED_TYPES else capitalize_words(name)


@dataclass(eq=False)
class MoA:
    """One mechanism of action.

    Attributes:
        moa_id: the DrugMechDB ``_id`` (``DB00619_MESH_D015464_1``) or a generated id.
        graph: the multigraph; node attributes ``type`` and ``name``; edge key = relation label.
        root: the drug node id.
        sink: the disease node id.
        attrs: the record's ``graph`` mapping (``disease``, ``disease_mesh``, ``drug``, ...), or the
            provenance of a composed MoA.
    """

    moa_id: str
    graph: nx.MultiDiGraph
    root: str
    sink: str
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def drug_id(self) -> str:
        return self.root

    @property
    def disease_id(self) -> str:
        return self.sink

    @property
    def drug_name(self) -> str:
        """The raw name of the drug node."""
        return self.node_name(self.root)

    @property
    def disease_name(self) -> str:
        """The raw name of the disease node."""
        return self.node_name(self.sink)

    @property
    def pair(self) -> tuple[str, str]:
        """The drug–disease pair ``(root, sink)``."""
        return (self.root, self.sink)

    def node_type(self, node: str) -> str:
        return str(self.graph.nodes[node][NODE_TYPE])

    def node_name(self, node: str) -> str:
        return str(self.graph.nodes[node][NODE_NAME])

    def nodes_of_type(self, entity_type: str) -> list[str]:
        """Node ids of one type, in insertion order."""
        return [n for n, t in self.graph.nodes(data=NODE_TYPE) if t == entity_type]

    def relations(self, u: str, v: str) -> list[str]:
        """The labels of all ``u -> v`` edges, in insertion order (empty if there is none)."""
        if not self.graph.has_edge(u, v):
            return []
        return [str(k) for k in self.graph[u][v]]

    def edges(self) -> list[tuple[str, str, str]]:
        """All ``(source, target, relation)`` edges in insertion order."""
        return [(str(u), str(v), str(k)) for u, v, k in self.graph.edges(keys=True)]

    def is_acyclic(self) -> bool:
        return bool(nx.is_directed_acyclic_graph(self.graph))

    def __len__(self) -> int:
        return int(self.graph.number_of_nodes())

    def __repr__(self) -> str:
        return f"MoA({self.moa_id!r}, {self.root} -> {self.sink}, {len(self)} nodes)"

    def __contains__(self, node: object) -> bool:
        return node in self.graph


def reduce_graph(graph: nx.MultiDiGraph, keep: Iterable[str]) -> nx.MultiDiGraph:
    """Remove every node not in `keep`, bridging over it (spec §2).

    Nodes are removed one at a time in node-iteration order. Removing ``x`` adds an edge
    ``(p, s, key=f"{k_in} :: {name(x)} :: {k_out}")`` for every in-edge ``(p, x, k_in)`` and out-edge
    ``(x, s, k_out)``. In a DAG, ``(u, v)`` is then an edge iff the original has a directed path from
    ``u`` to ``v`` whose interior nodes were all removed. The input graph is not modified.
    """
    kept = set(keep)
    reduced = graph.copy()
    for x in list(graph.nodes):
        if x in kept:
            continue
        name = reduced.nodes[x].get(NODE_NAME, x)
        ins = [(p, k) for p, _, k in reduced.in_edges(x, keys=True) if p != x]
        outs = [(s, k) for _, s, k in reduced.out_edges(x, keys=True) if s != x]
        for p, k_in in ins:
            for s, k_out in outs:
                key = f"{k_in} :: {name} :: {k_out}"
                if not reduced.has_edge(p, s, key=key):
                    reduced.add_edge(p, s, key=key)
        reduced.remove_node(x)
    return reduced


def _require(rec: Mapping[str, Any], key: str, where: str, path: str | Path | None) -> Any:
    if not isinstance(rec, Mapping) or key not in rec or rec[key] is None:
        raise DataError(f"{where}: missing field {key!r}", path=path, field=key)
    return rec[key]


def _record_nodes(rec: Mapping[str, Any], moa_id: str, path: str | Path | None) -> nx.MultiDiGraph:
    graph = nx.MultiDiGraph()
    for i, node in enumerate(_require(rec, "nodes", f"MoA {moa_id}", path)):
        where = f"MoA {moa_id}, node {i}"
        node_id = str(_require(node, "id", where, path))
        if node_id not in graph:  # the first occurrence of a repeated id wins
            graph.add_node(
                node_id,
                **{NODE_TYPE: str(_require(node, "label", where, path)),
                   NODE_NAME: str(_require(node, "name", where, path))},
            )
    for i, link in enumerate(_require(rec, "links", f"MoA {moa_id}", path)):
        where = f"MoA {moa_id}, link {i}"
        u, v = str(_require(link, "source", where, path)), str(_require(link, "target", where, path))
        key = _require(link, "key", where, path)
        if not isinstance(key, str) or not key.strip():
            raise DataError(f"{where}: relation label must be a non-empty string, got {key!r}", path=path,
                            field="key")
        for end in (u, v):
            if end not in graph:
                raise DataError(f"{where}: endpoint {end!r} is not a node of the MoA", path=path,
                                field="links")
        if not graph.has_edge(u, v, key=key):
            graph.add_edge(u, v, key=key)
    return graph


def moa_from_record(rec: Mapping[str, Any], *, path: str | Path | None = None) -> MoA:
    """Build a MoA from one DrugMechDB ``indication_paths.yaml`` record, as the paper's loader does.

    Raises:
        DataError: a required field is missing, a link points to an unknown node, or the drug or the
            disease node cannot be determined; the message names the MoA id.
    """
    meta = _require(rec, "graph", "MoA record", path)
    moa_id = str(_require(meta, "_id", "MoA record 'graph'", path))
    disease_mesh = str(_require(meta, "disease_mesh", f"MoA {moa_id}", path))
    graph = _record_nodes(rec, moa_id, path)
    drug = meta.get("drug_mesh")
    if drug is None or "," in str(drug):
        drug = meta.get("drugbank")
    for node in graph.nodes:  # the first in-degree-0 node is the drug, whatever the metadata says
        if graph.in_degree(node) == 0:
            drug = node
            if graph.nodes[node][NODE_TYPE] not in DRUG_TYPES:
                graph.nodes[node][NODE_TYPE] = "ChemicalSubstance"
            break
    for node in [n for n in graph.nodes if graph.out_degree(n) == 0]:
        graph.nodes[node][NODE_TYPE] = "Disease"
        if graph.nodes[node][NODE_NAME].startswith("MESH"):
            graph.nodes[node][NODE_NAME] = str(meta.get("disease", graph.nodes[node][NODE_NAME]))
    if drug is None or str(drug) not in graph:
        raise DataError(f"MoA {moa_id}: drug node {drug!r} is not in the graph", path=path, field="drug_mesh")
    if disease_mesh not in graph:
        raise DataError(f"MoA {moa_id}: disease node {disease_mesh!r} is not in the graph", path=path,
                        field="disease_mesh")
    graph.graph.update(dict(meta))
    return MoA(moa_id=moa_id, graph=graph, root=str(drug), sink=disease_mesh, attrs=dict(meta))
