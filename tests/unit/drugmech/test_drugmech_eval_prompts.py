"""Rendered prompts equal the golden prompts of the original code byte for byte (spec §8, acceptance 4)."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from biorab.common.errors import DataError
from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.graph.moa import MoA
from biorab.drugmech.prompts.edit_link import editlink_options
from biorab.drugmech.prompts.factual import factual_prompt_nodes, render_factual
from biorab.drugmech.prompts.factual_associations import describe_disease, describe_primekg_disease
from biorab.drugmech.prompts.moa_text import format_options, moa_for_prompt
from biorab.drugmech.prompts.render import render_prompt
from biorab.drugmech.prompts.texts import AL_TEMPLATE, EL_OPTIONS, EL_TEMPLATE, F_EXAMPLES
from biorab.drugmech.queries.query_files import FactualQuery, load_release_file
from tests.support.golden import GOLDEN

COUNTERFACTUAL_GOLDEN = [
    f"{q}_{pn}_{link}_0_{world}"
    for q in ("delete", "change", "addlink")
    for pn in (("pos",) if q == "addlink" else ("pos", "neg"))
    for link in ("dpi", "ppi")
    for world in ("open", "closed")
]
FACTUAL_MODES = ("ANONYMIZED_DISEASE", "NAMED_DISEASE", "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS")


def _golden(name: str) -> str:
    return (GOLDEN / "prompts" / f"{name}.txt").read_text(encoding="utf-8")


def _release_name(golden: str) -> str:
    q, pn, link = golden.split("_")[:3]
    return f"AddLink_{pn}_{link}_r1k" if q == "addlink" else f"{q}_{pn}_{link}_r250"


def test_template_strings_equal_the_originals() -> None:
    strings = json.loads((GOLDEN / "prompt_strings.json").read_text(encoding="utf-8"))
    assert strings["AL_TEMPLATE"] == AL_TEMPLATE
    assert strings["EL_TEMPLATE_v2"] == EL_TEMPLATE
    assert strings["EL_OPTIONS"] == EL_OPTIONS
    assert list(F_EXAMPLES) == strings["F_examples"]


@pytest.mark.parametrize("golden", COUNTERFACTUAL_GOLDEN)
def test_counterfactual_prompt_is_byte_identical(
    golden: str, drugmechdb: DrugMechDB, drugmechcf_dir: Path
) -> None:
    query = load_release_file(_release_name(golden), release_dir=drugmechcf_dir).queries[0]
    world = golden.rsplit("_", 1)[1]
    assert render_prompt(query, world=world, moas=drugmechdb) == _golden(golden)


@pytest.mark.parametrize("mode", FACTUAL_MODES)
def test_factual_positive_prompt_and_nodes(mode: str, drugmechdb: DrugMechDB, drugmechcf_dir: Path) -> None:
    query = load_release_file("factuals_pos_r1k", release_dir=drugmechcf_dir).queries[0]
    assert isinstance(query, FactualQuery)
    expected = _golden(f"factual_pos_0_{mode}")
    assert render_factual(query, mode=mode, moas=drugmechdb) == expected
    nodes = json.loads(_golden(f"factual_pos_0_{mode}_prompt_nodes"))
    assert factual_prompt_nodes(query, mode=mode, moas=drugmechdb)[1] == nodes


def test_factual_negative_named_needs_no_drugmechdb(drugmechcf_dir: Path) -> None:
    query = load_release_file("factuals_neg_r1k", release_dir=drugmechcf_dir).queries[0]
    assert render_prompt(query, mode="NAMED_DISEASE") == _golden("factual_neg_0_NAMED_DISEASE"
    )


@pytest.mark.parametrize("mode", ["ANONYMIZED_DISEASE", "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS"])
def test_factual_negative_without_primekg_is_an_error(
    mode: str, drugmechdb: DrugMechDB, drugmechcf_dir: Path
) -> None:
    query = load_release_file("factuals_neg_r1k", release_dir=drugmechcf_dir).queries[0]
    with pytest.raises(DataError, match="needs PrimeKG disease neighbours, which are not staged"):
        render_prompt(query, mode=mode, moas=drugmechdb)


@pytest.mark.parametrize("mode", ["ANONYMIZED_DISEASE", "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS"])
def test_drugmechdb_negative_outside_named_mode_says_it_has_no_description(
    mode: str, drugmechdb: DrugMechDB
) -> None:
    # A no-relation negative drawn among DrugMechDB pairs (`generate --negatives drugmechdb`): neither its MoA
    # nor PrimeKG can describe the disease, and supplying PrimeKG would not help either.
    query = FactualQuery(True, "DRUG_MECH_DB", None, "MESH:C120662", "Calcium acetate", "MESH:D014549", "x")
    expected = r"comes from DRUG_MECH_DB; use NAMED_DISEASE"
    with pytest.raises(DataError, match=expected):
        render_prompt(query, mode=mode, moas=drugmechdb, primekg=FakePrimeKG())
    assert "I would like to find a treatment for the disease x." in render_prompt(query, mode="NAMED_DISEASE")


def test_closed_world_without_drugmechdb_is_an_error(drugmechcf_dir: Path) -> None:
    query = load_release_file("delete_pos_dpi_r250", release_dir=drugmechcf_dir).queries[0]
    with pytest.raises(DataError, match="closed-world prompt needs DrugMechDB"):
        render_prompt(query, world="closed")
    with pytest.raises(DataError, match="unknown world 'half'"):
        render_prompt(query, world="half")


class FakePrimeKG:
    """A tiny PrimeKG neighbour source (fakes over mocks)."""

    def disease_neighbours(self, disease_id: str, /) -> list[tuple[str, str]]:
        return [
            ("gene/protein", "HBB"),
            ("effect/phenotype", "anemia"),
            ("gene/protein", "BCL11A"),
            ("drug", "ignored"),
            ("effect/phenotype", "fetal hemoglobin persistence"),
        ]


def test_primekg_negative_descriptions() -> None:
    text = describe_primekg_disease(
        "hereditary persistence of fetal hemoglobin", FakePrimeKG().disease_neighbours("x"), anonymized=False
    )
    assert text == "the Proteins: BCL11A, HBB; and the Phenotypes: Anemia, Fetal Hemoglobin Persistence"
    # The anonymized mode drops the phenotype that repeats the disease name (TF-IDF cosine > 0.2).
    anon = describe_primekg_disease(
        "hereditary persistence of fetal hemoglobin", FakePrimeKG().disease_neighbours("x"), anonymized=True
    )
    assert anon == "the Proteins: BCL11A, HBB; and the Phenotypes: Anemia"
    query = FactualQuery(True, "PRIME_KG", None, "DrugBank:DB00203", "Sildenafil", "MONDO:20989", "hpfh")
    with pytest.raises(DataError, match="needs DrugMechDB"):  # the examples still come from DrugMechDB
        render_factual(query, mode="ANONYMIZED_DISEASE", primekg=FakePrimeKG())


def _moa(edges: list[tuple[str, str, str]], types: dict[str, tuple[str, str]], root: str, sink: str) -> MoA:
    graph = nx.MultiDiGraph()
    for node, (kind, name) in types.items():
        graph.add_node(node, type=kind, name=name)
    for u, v, k in edges:
        graph.add_edge(u, v, key=k)
    return MoA("m1", graph, root, sink)


def test_disease_description_anatomy_first_and_plural_before_filtering() -> None:
    moa = _moa(
        [
            ("d", "p", "decreases activity of"),
            ("p", "a", "located in"),
            ("bp", "a", "occurs in"),
            ("a", "s", "location of"),
            ("p", "ph1", "causes"),
            ("p", "ph2", "causes"),
            ("ph1", "s", "manifestation of"),
            ("ph2", "s", "manifestation of"),
        ],
        {
            "d": ("Drug", "aspirin"),
            "p": ("Protein", "COX-2"),
            "a": ("GrossAnatomicalStructure", "joint"),
            "bp": ("BiologicalProcess", "inflammatory response"),
            "ph1": ("PhenotypicFeature", "joint pain"),
            "ph2": ("PhenotypicFeature", "swelling"),
            "s": ("Disease", "Joint pain syndrome"),
        },
        "d",
        "s",
    )
    text, nodes = describe_disease(moa, anonymized=False)
    assert text == (
        "Inflammatory Response in the Anatomical Structure: Joint; and the Phenotypes: Joint Pain, Swelling"
    )
    assert nodes == ["a", "bp", "ph1", "ph2"]
    text, nodes = describe_disease(moa, anonymized=True)
    assert text.endswith("the Phenotypes: Swelling")  # "joint pain" is too close to the disease name
    assert nodes == ["a", "bp", "ph2"]


def test_disease_description_order_within_a_type_is_by_name_not_graph_order() -> None:
    # The original iterated a set (its order varies between processes); names are sorted (spec §8.1.2 [I]).
    types = {
        "d": ("Drug", "aspirin"),
        "z": ("PhenotypicFeature", "swelling"),
        "y": ("PhenotypicFeature", "Fever"),
        "x": ("PhenotypicFeature", "ache"),
        "s": ("Disease", "Flu"),
    }
    for order in (["z", "y", "x"], ["x", "z", "y"]):
        edges = [("d", n, "causes") for n in order] + [(n, "s", "manifestation of") for n in order]
        text, nodes = describe_disease(_moa(edges, types, "d", "s"), anonymized=False)
        assert (text, nodes) == ("the Phenotypes: Ache, Fever, Swelling", ["x", "y", "z"])


def test_moa_rendering_order_and_options_wrapping() -> None:
    moa = _moa(
        [
            ("d", "z", "decreases activity of"),
            ("d", "b", "increases activity of"),
            ("b", "s", "causes"),
            ("z", "s", "causes"),
        ],
        {
            "d": ("Drug", "imatinib"),
            "z": ("Protein", "abl kinase"),
            "b": ("ChemicalSubstance", "atp"),
            "s": ("Disease", "CML (ph+)"),
        },
        "d",
        "s",
    )
    assert moa_for_prompt(moa) == (
        "Drug: Imatinib | decreases activity of | Protein: abl kinase\n"
        "Drug: Imatinib | increases activity of | Chemical: Atp\n"
        "Chemical: Atp | causes | Disease: CML (ph+)\n"
        "Protein: abl kinase | causes | Disease: CML (ph+)"
    )
    block = format_options(editlink_options())
    assert block.startswith(
        "* The observed behavior will not affect the drug's mechanism of action on the disease. The\n"
    )
    assert block.count("\n\n* ") == 3
    assert "* The effect of the observed" in format_options(editlink_options(with_unknown=True))
