"""Graph consistency (spec §10) on hand-built graphs with hand-computed scores, and the TF-IDF matcher
against scikit-learn."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from biorab.drugmech.graph.drugmechdb import load_drugmechdb
from biorab.drugmech.graph.moa import MoA
from biorab.drugmech.parsing.moa_answer import ParsedMoA, parse_moa_answer
from biorab.drugmech.prompts.moa_text import moa_for_prompt
from biorab.drugmech.queries.query_files import CounterfactualQuery, load_release_file
from biorab.drugmech.scoring.correctness import addlink_reference
from biorab.drugmech.scoring.graph_matching import match_graphs, normalize_name
from biorab.drugmech.tfidf import TfidfMatcher
from tests.support.golden import GOLDEN

# Reference: Tolazoline -> Alpha-1A -> DNA gyrase -> DNA replication -> S. pneumoniae -> pneumonia (6 nodes,
# 5 edges), the expected MoA of AddLink_pos_ppi_r1k[0].
REF_TYPES = {
    "drug": ("Drug", "tolazoline"),
    "a1a": ("Protein", "Alpha-1A adrenergic receptor"),
    "gyr": ("Protein", "DNA gyrase subunit A"),
    "rep": ("BiologicalProcess", "bacterial-type DNA replication"),
    "org": ("OrganismTaxon", "Streptococcus pneumoniae"),
    "dis": ("Disease", "Bacterial pneumonia"),
}
CHAIN = ["drug", "a1a", "gyr", "rep", "org", "dis"]


def _reference() -> MoA:
    g = nx.MultiDiGraph()
    for n, (t, name) in REF_TYPES.items():
        g.add_node(n, type=t, name=name)
    for u, v in zip(CHAIN, CHAIN[1:], strict=False):
        g.add_edge(u, v, key="rel")
    return MoA("ref", g, "drug", "dis")


def _answer(lines: list[str]) -> ParsedMoA:
    ans = parse_moa_answer(
        "YES.\n" + "\n".join(lines), drug_name="tolazoline", disease_name="Bacterial Pneumonia"
    )
    assert ans.moa is not None
    return ans.moa


FULL = [
    "Drug: Tolazoline | inhibits | Protein: Alpha-1A adrenergic receptor",
    "Protein: Alpha-1A adrenergic receptor | activates | Protein: DNA gyrase subunit A",
    "Protein: DNA gyrase subunit A | participates in | Biological Process: Bacterial-type DNA Replication",
    "Biological Process: Bacterial-type DNA Replication | occurs in | Organism: Streptococcus Pneumoniae",
    "Organism: Streptococcus Pneumoniae | causes | Disease: Bacterial Pneumonia",
]


def test_identical_answer_scores_one() -> None:
    m = match_graphs(_reference(), _answer(FULL))
    assert (m.interior_node_match, m.reduced_edge_match, m.edge_match) == (1.0, 1.0, 1.0)
    assert len(m.mapping) == 6


def test_flipping_one_interior_edge() -> None:
    lines = list(FULL)
    lines[2] = "Biological Process: Bacterial-type DNA Replication | needs | Protein: DNA gyrase subunit A"
    lines.insert(
        3,
        "Protein: Alpha-1A adrenergic receptor | activates | "
        "Biological Process: Bacterial-type DNA Replication",
    )
    m = match_graphs(_reference(), _answer(lines))
    # All 4 interior nodes map; of the 5 reference edges only gyr -> rep has no path in the answer.
    assert (m.interior_node_match, m.reduced_edge_match) == (1.0, pytest.approx(0.8))


def test_missing_protein_and_an_unrelated_node() -> None:
    lines = [
        "Drug: Tolazoline | inhibits | Protein: Alpha-1A adrenergic receptor",
        "Protein: Alpha-1A adrenergic receptor | activates | Protein: Histone H1",
        "Biological Process: Bacterial-type DNA Replication | occurs in | Organism: Streptococcus Pneumoniae",
        "Organism: Streptococcus Pneumoniae | causes | Disease: Bacterial Pneumonia",
        "Protein: Histone H1 | causes | Disease: Bacterial Pneumonia",
    ]
    m = match_graphs(_reference(), _answer(lines))
    # 3 of 4 interior nodes map (not the gyrase). The reduced reference has edges drug-a1a, a1a-rep (through
    # the unmapped gyrase), rep-org, org-dis; a1a -> rep has no path in the answer: 3/4.
    assert m.interior_node_match == 0.75
    assert m.reduced_edge_match == 0.75
    assert m.edge_match == pytest.approx(3 / 5)
    assert "gyr" not in m.mapping


def test_fuzzy_names_still_match() -> None:
    lines = [line.replace("Alpha-1A adrenergic receptor", "alpha1A-adrenergic receptor") for line in FULL]
    m = match_graphs(_reference(), _answer(lines))
    assert (m.interior_node_match, m.reduced_edge_match) == (1.0, 1.0)
    assert match_graphs(_reference(), _answer(lines), matcher="rapidfuzz").interior_node_match == 1.0


def test_types_must_agree_except_protein_and_gene() -> None:
    lines = [line.replace("Protein: DNA gyrase", "Pathway: DNA gyrase") for line in FULL]
    assert "gyr" not in match_graphs(_reference(), _answer(lines)).mapping
    lines = [line.replace("Protein: DNA gyrase", "Gene: DNA gyrase") for line in FULL]
    assert "gyr" in match_graphs(_reference(), _answer(lines)).mapping


def test_no_root_gives_undefined_interior_and_minimal_match() -> None:
    cyclic = FULL + ["Disease: Bacterial Pneumonia | causes | Drug: Tolazoline"]
    m = match_graphs(_reference(), _answer(cyclic))
    assert m.interior_node_match is None  # no in-degree-0 node: no root
    partial = match_graphs(
        _reference(),
        _answer([FULL[0], "Protein: Alpha-1A adrenergic receptor | x | Disease: Bacterial Pneumonia"]),
    )
    # 3 mapped nodes: the reduced reference is drug -> a1a -> dis, both edges hold; 2 of the 5 original edges.
    assert (partial.interior_node_match, partial.reduced_edge_match, partial.edge_match) == (0.25, 1.0, 0.4)
    assert not partial.minimal_match
    minimal = match_graphs(
        _reference(), _answer(["Drug: Tolazoline | treats | Disease: Bacterial Pneumonia"])
    )
    # Only the endpoints map (|mapped| = 2 <= 0 + 2 while |R| = 6 > 2): a potentially very different MoA.
    assert minimal.minimal_match and minimal.minimal_target
    assert (minimal.interior_node_match, minimal.reduced_edge_match) == (0.0, 0.0)


def test_normalize_name() -> None:
    assert normalize_name("β2-Adrenergic  receptor_(ADRB2)") == "beta2 adrenergic receptor adrb2"


@pytest.mark.parametrize(
    ("analyzer", "ngram", "lowercase"),
    [("char", (2, 5), False), ("char", (2, 4), False), ("char_wb", (2, 4), True)],
)
def test_tfidf_equals_scikit_learn(analyzer: str, ngram: tuple[int, int], lowercase: bool) -> None:
    sk = pytest.importorskip("sklearn.feature_extraction.text")
    from sklearn.metrics.pairwise import linear_kernel

    docs = [
        "the observed behavior\nwill not  affect x",
        "Partially blocked",
        "alpha 1a adrenergic receptor",
        "a b",
    ]
    queries = ["fully blocked", "observed behavior will not\naffect", "alpha1a adrenergic", "b", "zz"]
    vec = sk.TfidfVectorizer(analyzer=analyzer, ngram_range=ngram, lowercase=lowercase)
    fitted = vec.fit_transform(docs)
    ours = TfidfMatcher(docs, ngram_range=ngram, analyzer=analyzer, lowercase=lowercase)
    for q in queries:
        assert ours.similarities(q) == pytest.approx(
            list(linear_kernel(vec.transform([q]), fitted)[0]), abs=1e-12
        )


@pytest.mark.parametrize("link", ["dpi", "ppi"])
def test_composed_addlink_reference_equals_golden(
    link: str, drugmechdb_dir: Path, drugmechcf_dir: Path
) -> None:
    db = load_drugmechdb(drugmechdb_dir)
    query = load_release_file(f"AddLink_pos_{link}_r1k", release_dir=drugmechcf_dir).queries[0]
    assert isinstance(query, CounterfactualQuery)
    expected = (GOLDEN / "prompts" / f"addlink_pos_{link}_0_expected_moa.txt").read_text()
    assert moa_for_prompt(addlink_reference(query, db)) == expected
