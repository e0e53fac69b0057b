"""Reference counts on the staged DrugMechDB v2.0.1 (spec §1.1, §3.3, §4, §6.1; data README), the parse
cache, and the paper's documented quirks (the self-loop MoA, the false cut-edges)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biorab.drugmech.generate.stats import drugmechdb_stats, query_set_stats
from biorab.drugmech.graph import drugmechdb as drugmechdb_module
from biorab.drugmech.graph.cut_edges import cut_edges
from biorab.drugmech.graph.drugmechdb import DrugMechDB, load_drugmechdb
from biorab.drugmech.graph.simulator import is_simulatable, unsimulatable_reason

pytestmark = pytest.mark.full_data  # pinned on the full staged data (../shared/data)


def test_reference_counts(drugmechdb: DrugMechDB) -> None:
    stats = drugmechdb_stats(drugmechdb)
    assert (stats["moas"], stats["pairs"], stats["drugs"], stats["diseases"]) == (4846, 4664, 1612, 744)
    assert stats["pairs_with_several_moas"] == 141
    assert (stats["simulatable"], stats["valid"]) == (3592, 3523)
    assert stats["sink_levels"] == {"-1": 3523, "0": 14, "1": 55}
    faithful = stats["editable_links"]["faithful"]
    assert faithful["reduced_db"] == {"links": 2499, "surface": 2151, "deep": 348, "moas": 2165}
    assert faithful["full_db"] == {"links": 3310, "surface": 2575, "deep": 735, "moas": 2847}
    assert stats["editable_links"]["exact"]["reduced_db"]["links"] == 2497  # the 2 false cut-edges go
    assert stats["add_link_targets"] == {"triples": 5201, "moas": 2473}


def test_pair_multiplicity_distribution(drugmechdb: DrugMechDB) -> None:
    sizes = sorted(len(v) for v in drugmechdb.by_pair.values() if len(v) > 1)
    assert {s: sizes.count(s) for s in set(sizes)} == {2: 118, 3: 14, 4: 3, 5: 5, 8: 1}


def test_every_moa_has_one_source_and_one_sink(drugmechdb: DrugMechDB) -> None:
    for moa in drugmechdb:
        g = moa.graph
        assert [n for n in g if g.in_degree(n) == 0] == [moa.root], moa.moa_id
        assert [n for n in g if g.out_degree(n) == 0] == [moa.sink], moa.moa_id


def test_self_loop_moa_is_loaded_but_not_simulatable(drugmechdb: DrugMechDB) -> None:
    moa = drugmechdb["DB00993_MESH_D001172_1"]
    assert moa.graph.has_edge("GO:0006955", "GO:0006955")
    assert not is_simulatable(moa)
    assert "has metabolite" in (unsimulatable_reason(moa) or "")  # also has an undirected label


def test_spec_false_cut_edge_examples(drugmechdb: DrugMechDB) -> None:
    moa = drugmechdb["DB00068_MESH_D020529_1"]  # four parallel branches end at the disease
    assert cut_edges(moa.graph, moa.root, moa.sink, mode="faithful") == [("GO:0019882", "MESH:D020529")]
    assert cut_edges(moa.graph, moa.root, moa.sink, mode="exact") == []
    moa = drugmechdb["DB01064_MESH_D003139_1"]
    assert ("UniProt:B7Z2C7", "CHEBI:17489") in cut_edges(moa.graph, moa.root, moa.sink, mode="faithful")
    assert cut_edges(moa.graph, moa.root, moa.sink, mode="exact") == []


def test_drug_names_are_raw_node_names(drugmechdb: DrugMechDB) -> None:
    moa = drugmechdb["DB00619_MESH_D015464_1"]
    assert (moa.root, moa.drug_name, moa.sink, moa.disease_name) == (
        "MESH:D000068877", "imatinib", "MESH:D015464", "CML (ph+)")


def test_parse_cache_is_keyed_by_digest(
    drugmechdb: DrugMechDB, drugmechdb_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cache = tmp_path_factory.getbasetemp() / "biorab-cache"
    cached = cache / "drugmech" / "drugmechdb-e23c254111003dd6-v1.json"
    assert drugmechdb.digest == "e23c254111003dd61c1f3497b5a75a8fd5beba3cd9f2267415fc4bccfaca6d20"
    records = json.loads(cached.read_text(encoding="utf-8"))
    assert len(records) == 4846 and set(records[0]) == {"graph", "nodes", "links"}

    def no_yaml(path: Path) -> None:
        raise AssertionError(f"parsed {path} although it is cached")

    with pytest.MonkeyPatch.context() as mp:  # a second load must come from the cache, not the YAML
        mp.setenv("BIORAB_CACHE_DIR", str(cache))
        mp.setattr(drugmechdb_module, "_parse_yaml", no_yaml)
        again = load_drugmechdb(drugmechdb_dir)
    assert [m.moa_id for m in again] == [m.moa_id for m in drugmechdb]


def _datastats(path: Path) -> dict[str, dict[str, dict[str, int]]]:
    """File stem -> {"source": {type: count}, "target": {type: count}} from the authors' DataStats.txt."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    stem, side = "", ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if "] File: " in line:
            stem = Path(line.split("File: ")[1].strip()).stem
            out[stem] = {"source": {}, "target": {}}
        elif line.startswith(("Source Node type counts", "Target Node type counts")):
            side = line.split()[0].lower()
        elif stem and side and line.startswith("|  ") and "EntityType" not in line:
            cells = [c.strip() for c in line.strip("|").split("|")]
            out[stem][side][cells[1]] = int(cells[2].replace(",", ""))
        elif line.startswith("Dataset Summary"):
            stem = ""
    return out


def test_query_set_stats_reproduce_datastats(drugmechcf_dir: Path) -> None:
    from biorab.drugmech.queries.query_files import load_release_file

    expected = _datastats(drugmechcf_dir / "release" / "DataStats.txt")
    assert len(expected) == 12
    for stem, sides in expected.items():
        queries = load_release_file(stem, release_dir=drugmechcf_dir / "release").queries
        got = query_set_stats(queries)
        assert got["n_samples"] == sum(sides["source"].values()), stem
        assert got["is_surface_level"] == ("_dpi_" in stem), stem
        for side in ("source", "target"):
            assert {t: v["count"] for t, v in got[f"{side}_node_types"].items()} == sides[side], (stem, side)
