"""MoA graphs, the record loader, `reduce_graph`, the simulator and cut-edges on small hand-made MoAs,
with expected values computed by hand. Malformed records must fail with an error naming the record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from biorab.common.errors import ConfigError, DataError
from biorab.drugmech.graph.cut_edges import cut_edges
from biorab.drugmech.graph.drugmechdb import DrugMechDB, load_drugmechdb, read_deprecated_ids
from biorab.drugmech.graph.moa import capitalize_words, display_name, moa_from_record, reduce_graph, type_name
from biorab.drugmech.graph.simulator import NotSimulatableError, is_simulatable, is_valid, simulate


def record(moa_id: str, nodes: list[tuple[str, str, str]], links: list[tuple[str, str, str]],
           *, drug: str = "X", disease: str = "D") -> dict[str, Any]:
    """A DrugMechDB-shaped record from (id, type, name) nodes and (source, relation, target) links."""
    return {
        "directed": True, "multigraph": True,
        "graph": {"_id": moa_id, "disease": "the disease", "disease_mesh": disease, "drug": "the drug",
                  "drug_mesh": drug, "drugbank": "DB:DB1"},
        "nodes": [{"id": i, "label": t, "name": n} for i, t, n in nodes],
        "links": [{"source": s, "key": k, "target": t} for s, k, t in links],
    }


NODES = [("X", "Drug", "xdrug"), ("P", "Protein", "prot A"), ("Q", "Protein", "prot B"),
         ("C", "ChemicalSubstance", "histamine"), ("D", "Disease", "the disease")]


def test_record_builds_root_sink_and_keyed_edges() -> None:
    moa = moa_from_record(record("M1", NODES, [
        ("X", "decreases activity of", "P"), ("P", "positively regulates", "C"),
        ("P", "positively regulates", "C"),  # an exact duplicate is ignored
        ("P", "causes", "C"),  # a second relation between the same nodes is a second keyed edge
        ("C", "causes", "D"), ("X", "increases activity of", "Q"), ("Q", "negatively regulates", "C"),
    ]))
    assert (moa.root, moa.sink, moa.moa_id) == ("X", "D", "M1")
    assert moa.relations("P", "C") == ["positively regulates", "causes"]
    assert len(moa.edges()) == 6
    assert moa.drug_name == "xdrug" and moa.disease_name == "the disease"
    assert moa.nodes_of_type("Protein") == ["P", "Q"]


def test_first_in_degree_zero_node_is_the_drug_and_is_retyped() -> None:
    nodes = [("G", "BiologicalProcess", "some process"), ("P", "Protein", "p"), ("D", "Disease", "MESH:D1")]
    moa = moa_from_record(record("M2", nodes, [("G", "causes", "P"), ("P", "causes", "D")], drug="nope"))
    assert moa.root == "G" and moa.node_type("G") == "ChemicalSubstance"
    assert moa.disease_name == "the disease"  # a sink named "MESH..." takes graph.disease


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda r: r["graph"].pop("disease_mesh"), "MoA BAD: missing field 'disease_mesh'"),
        (lambda r: r.pop("links"), "MoA BAD: missing field 'links'"),
        (lambda r: r["nodes"][1].pop("name"), "MoA BAD, node 1: missing field 'name'"),
        (lambda r: r["links"][0].update(target="ZZZ"), "MoA BAD, link 0: endpoint 'ZZZ' is not a node"),
        (lambda r: r["links"][0].update(key=""), "MoA BAD, link 0: relation label must be a non-empty"),
    ],
)
def test_malformed_record_names_the_record(mutate: Any, needle: str) -> None:
    rec = record("BAD", NODES[:2] + NODES[4:], [("X", "decreases activity of", "P"), ("P", "causes", "D")])
    mutate(rec)
    with pytest.raises(DataError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        moa_from_record(rec, path="x.yaml")


def test_reduce_graph_bridges_removed_nodes() -> None:
    moa = moa_from_record(record("M3", NODES, [
        ("X", "decreases activity of", "P"), ("P", "positively regulates", "C"), ("C", "causes", "D"),
        ("X", "increases activity of", "Q"), ("Q", "negatively regulates", "D"),
    ]))
    reduced = reduce_graph(moa.graph, keep={"X", "C", "D"})
    assert sorted(reduced.edges(keys=True)) == [
        ("C", "D", "causes"),
        ("X", "C", "decreases activity of :: prot A :: positively regulates"),
        ("X", "D", "increases activity of :: prot B :: negatively regulates"),
    ]
    assert moa.graph.number_of_nodes() == 5  # the input is untouched


def test_simulator_levels_by_hand() -> None:
    moa = moa_from_record(record("S1", NODES, [
        ("X", "decreases activity of", "P"),  # P: -1
        ("P", "positively regulates", "C"),  # C gets -1 from P
        ("X", "increases activity of", "Q"),  # Q: +1
        ("Q", "negatively regulates", "C"),  # C gets -1 from Q  -> C = -1
        ("C", "causes", "D"),  # D = -1
    ]))
    assert simulate(moa) == {"X": 1, "P": -1, "Q": 1, "C": -1, "D": -1}
    assert is_valid(moa)


def test_conflicting_contributions_give_level_zero_and_not_valid() -> None:
    moa = moa_from_record(record("S2", NODES, [
        ("X", "decreases activity of", "P"), ("X", "increases activity of", "Q"),
        ("P", "causes", "D"), ("Q", "part of", "D"),  # -1 + +1: conflicting
    ]))
    assert simulate(moa)["D"] == 0
    assert is_simulatable(moa) and not is_valid(moa)


def test_phenotype_of_is_same() -> None:
    nodes = [("X", "Drug", "x"), ("H", "PhenotypicFeature", "h"), ("D", "Disease", "d")]
    moa = moa_from_record(record("S3", nodes, [("X", "disrupts", "H"), ("H", "phenotype of", "D")]))
    assert simulate(moa)["D"] == -1


def test_unknown_relation_is_not_simulatable_and_named() -> None:
    moa = moa_from_record(record("S4", NODES, [("X", "treats", "P"), ("P", "causes", "D")]))
    assert not is_simulatable(moa)
    expected = r"MoA S4 cannot be simulated: relation 'treats' \(X -> P\)"
    with pytest.raises(NotSimulatableError, match=expected):
        simulate(moa)


def test_cycle_is_not_simulatable_and_named() -> None:
    moa = moa_from_record(record("S5", NODES, [
        ("X", "causes", "P"), ("P", "causes", "Q"), ("Q", "causes", "P"), ("Q", "causes", "D"),
    ]))
    with pytest.raises(NotSimulatableError, match="MoA S5 cannot be simulated: the graph has a cycle"):
        simulate(moa)
    assert cut_edges(moa.graph, "X", "D", mode="faithful") == []


def test_faithful_cut_edges_report_a_false_edge_that_exact_does_not() -> None:
    # X -> {A, B} -> {C, E} -> D: no single edge disconnects X from D. Topological order X A B C E D;
    # the faithful scan jumps from X to E (maxsucc of A) and reports E -> D, missing C -> D.
    nodes = [("X", "Drug", "x")] + [(n, "Protein", n) for n in "ABCE"] + [("D", "Disease", "d")]
    links = [("X", "causes", "A"), ("X", "causes", "B")] + [
        (u, "causes", v) for u in "AB" for v in "CE"] + [("C", "causes", "D"), ("E", "causes", "D")]
    moa = moa_from_record(record("C1", nodes, links))
    assert cut_edges(moa.graph, "X", "D", mode="faithful") == [("E", "D")]
    assert cut_edges(moa.graph, "X", "D", mode="exact") == []


def test_chain_cut_edges_agree() -> None:
    moa = moa_from_record(record("C2", NODES, [
        ("X", "decreases activity of", "P"), ("P", "causes", "C"), ("P", "causes", "Q"),
        ("Q", "causes", "C"), ("C", "causes", "D"),
    ]))
    assert cut_edges(moa.graph, "X", "D", mode="faithful") == [("X", "P"), ("C", "D")]
    assert cut_edges(moa.graph, "X", "D", mode="exact") == [("X", "P"), ("C", "D")]
    with pytest.raises(ConfigError, match="unknown cut-edge mode 'fast'"):
        cut_edges(moa.graph, "X", "D", mode="fast")


def test_display_helpers() -> None:
    assert capitalize_words("carbovir  triphosphate") == "Carbovir Triphosphate"
    assert capitalize_words("CML (ph+) and mRNA") == "CML (ph+) And mRNA"
    assert type_name("ChemicalSubstance") == "Chemical" and type_name("GeneFamily", plural=True) == "Genes"
    assert display_name("Protein", "prot a") == "prot a" and display_name("Cell", "t cell") == "T Cell"


def _write_yaml(path: Path, records: list[dict[str, Any]]) -> Path:
    import yaml

    path.write_text(yaml.safe_dump(records), encoding="utf-8")
    return path


def test_loader_filters_deprecated_ids_exactly(tmp_path: Path) -> None:
    links = [("X", "decreases activity of", "P"), ("P", "causes", "D")]
    nodes = NODES[:2] + NODES[4:]
    _write_yaml(tmp_path / "indication_paths.yaml", [record(i, nodes, links) for i in ("A_1", "B_1", "C_1")])
    (tmp_path / "deprecated_ids.txt").write_text("A_1\nB_1 \n", encoding="utf-8")  # "B_1 " != "B_1"
    assert read_deprecated_ids(tmp_path / "deprecated_ids.txt") == {"A_1", "B_1 "}
    db = load_drugmechdb(tmp_path)
    assert [m.moa_id for m in db] == ["B_1", "C_1"]
    assert db.pair_count(db["B_1"]) == 2 and len(db.by_pair) == 1


def test_loader_errors_name_file_and_record(tmp_path: Path) -> None:
    bad = record("BROKEN_1", NODES[:2] + NODES[4:], [("X", "causes", "Q")])
    path = _write_yaml(tmp_path / "indication_paths.yaml", [bad])
    with pytest.raises(DataError, match=r"indication_paths.yaml.*MoA BROKEN_1, link 0: endpoint 'Q'"):
        load_drugmechdb(path)
    path.write_text("- graph: {_id: A\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"indication_paths.yaml, line \d+: invalid YAML"):
        load_drugmechdb(path)
    path.write_text("- graph: {disease: x}\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"record 0: missing field 'graph._id'"):
        load_drugmechdb(path)


def test_duplicate_moa_id_is_an_error() -> None:
    moa = moa_from_record(record("DUP", NODES[:2] + NODES[4:], [("X", "causes", "P"), ("P", "causes", "D")]))
    with pytest.raises(DataError, match="MoA id 'DUP' occurs twice"):
        DrugMechDB([moa, moa])
