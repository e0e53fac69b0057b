"""The factual test set (spec §7): DrugMechDB positives, released / PrimeKG / DrugMechDB negatives, and the
PrimeKG ``kg.csv`` loader on a small file in PrimeKG's 12-column format written by the test."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from biorab.common.errors import ConfigError, DataError
from biorab.drugmech.generate.factual import (
    drugmechdb_negatives,
    eligible_positive,
    generate_factual_positives,
    icl_pairs,
    positive_query,
    primekg_negatives,
    released_negatives,
)
from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.graph.primekg import COLUMNS, load_primekg
from biorab.drugmech.queries.query_files import FactualQuery, load_release_file

pytestmark = pytest.mark.full_data  # pinned on the full staged data (../shared/data)


def test_released_positives_are_eligible_and_rebuilt_identically(
    drugmechdb: DrugMechDB, drugmechcf_dir: Path
) -> None:
    icl = icl_pairs(drugmechdb)
    assert len(icl) == 5
    assert sum(eligible_positive(drugmechdb, m, icl) for m in drugmechdb) == 4336
    released = load_release_file("factuals_pos_r1k", release_dir=drugmechcf_dir / "release").queries
    for i, q in enumerate(released):
        assert isinstance(q, FactualQuery) and q.moa_id is not None
        moa = drugmechdb[q.moa_id]
        assert eligible_positive(drugmechdb, moa, icl), f"row {i}"
        assert positive_query(moa) == q, f"row {i}"


def test_generated_positives(drugmechdb: DrugMechDB) -> None:
    made = generate_factual_positives(drugmechdb, n=200, seed=42, mode="NAMED_DISEASE")
    assert len(made) == 200 and len({q.moa_id for q in made}) == 200
    icl = icl_pairs(drugmechdb)
    assert all(eligible_positive(drugmechdb, drugmechdb[q.moa_id], icl) for q in made if q.moa_id)
    again = generate_factual_positives(drugmechdb, n=20, seed=42, mode="NAMED_DISEASE")
    assert again == made[:20]
    anonymized = generate_factual_positives(drugmechdb, n=20, seed=42, mode="ANONYMIZED_DISEASE")
    assert len(anonymized) == 20
    with pytest.raises(ConfigError, match="unknown disease mode 'NAMED'"):
        generate_factual_positives(drugmechdb, n=5, mode="NAMED")
    with pytest.raises(DataError, match="only 4336 eligible factual positives; asked for 5000"):
        generate_factual_positives(drugmechdb, n=5000, mode="NAMED_DISEASE")


def test_released_negatives_halves(drugmechcf_dir: Path) -> None:
    rows = released_negatives(1000, release_dir=drugmechcf_dir / "release")
    assert len(rows) == 1000 and rows[0].drug_id == "DrugBank:DB00203"
    small = released_negatives(10, release_dir=drugmechcf_dir / "release")
    assert small == rows[:5] + rows[500:505]
    with pytest.raises(ConfigError, match="n must be even"):
        released_negatives(7, release_dir=drugmechcf_dir / "release")


def test_drugmechdb_negatives_have_no_moa(drugmechdb: DrugMechDB) -> None:
    made = drugmechdb_negatives(drugmechdb, n=100, seed=3)
    assert len({(q.drug_id, q.disease_id) for q in made}) == 100
    assert not any((q.drug_id, q.disease_id) in drugmechdb.by_pair for q in made)
    assert all(q.is_negative_sample and q.moa_id is None for q in made)


def _row(rel: str, x: tuple[str, str, str, str], y: tuple[str, str, str, str]) -> dict[str, str]:
    """x, y = (id, type, name, source)."""
    return {"relation": rel, "display_relation": rel, "x_index": "0", "x_id": x[0], "x_type": x[1],
            "x_name": x[2], "x_source": x[3], "y_index": "1", "y_id": y[0], "y_type": y[1], "y_name": y[2],
            "y_source": y[3]}


DRUGS = [(f"DB0000{i}", "drug", f"Drug{i}", "DrugBank") for i in range(1, 5)]
DISEASES = [("20989", "disease", "hereditary persistence of fetal hemoglobin", "MONDO"),
            ("4565_2803", "disease", "intestinal obstruction", "MONDO_grouped"),
            ("7", "disease", "pain", "MONDO")]
PHENO = ("HP1", "effect/phenotype", "anemia", "HPO")
GENE = ("G1", "gene/protein", "HBB", "NCBI")


def _write_kg(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _both(rel: str, a: tuple[str, str, str, str], b: tuple[str, str, str, str]) -> list[dict[str, str]]:
    return [_row(rel, a, b), _row(rel, b, a)]  # PrimeKG stores every edge in both directions


@pytest.fixture()
def kg_csv(tmp_path: Path) -> Path:
    rows = (_both("contraindication", DRUGS[0], DISEASES[0])
            + _both("contraindication", DRUGS[1], DISEASES[1])
            + _both("contraindication", DRUGS[2], DISEASES[0]) + _both("indication", DRUGS[2], DISEASES[0])
            + _both("off-label use", DRUGS[3], DISEASES[1])
            + _both("disease_phenotype_positive", DISEASES[0], PHENO)
            + _both("disease_protein", DISEASES[0], GENE)
            + _both("drug_protein", DRUGS[0], GENE))
    return _write_kg(tmp_path / "kg.csv", rows)


def test_primekg_loader(kg_csv: Path) -> None:
    kg = load_primekg(kg_csv)
    assert list(kg.drugs) == [f"DrugBank:DB0000{i}" for i in range(1, 5)]
    assert list(kg.diseases) == ["MONDO:20989", "MONDO_grouped:4565_2803"]
    assert kg.drug_disease_relations("DrugBank:DB00003", "MONDO:20989") == {"contraindication", "indication"}
    assert kg.has_indication("DrugBank:DB00003", "MONDO:20989")
    assert kg.pairs_with("contraindication") == [("DrugBank:DB00001", "MONDO:20989"),
                                                 ("DrugBank:DB00002", "MONDO_grouped:4565_2803"),
                                                 ("DrugBank:DB00003", "MONDO:20989")]
    # the disease -> drug rows are the same edges read backwards; only phenotype/exposure/gene neighbours
    assert kg.disease_neighbours("MONDO:20989") == [("effect/phenotype", "anemia"), ("gene/protein", "HBB")]
    assert kg.disease_neighbours("MONDO_grouped:4565_2803") == []


def test_primekg_negatives(kg_csv: Path) -> None:
    kg = load_primekg(kg_csv)
    made = primekg_negatives(kg, n=4, seed=0)
    contra = [(q.drug_id, q.disease_id) for q in made[:2]]
    # DB00003 also has an indication for the disease, so only the other two contraindications qualify
    assert sorted(contra) == [("DrugBank:DB00001", "MONDO:20989"),
                              ("DrugBank:DB00002", "MONDO_grouped:4565_2803")]
    for q in made[2:]:
        assert kg.drug_disease_relations(q.drug_id, q.disease_id) == set()
    assert all(q.is_negative_sample and q.source_kg == "PRIME_KG" and q.moa_id is None for q in made)
    assert made[0].to_json()["disease_name"] in {"hereditary persistence of fetal hemoglobin",
                                                 "intestinal obstruction"}
    kept = primekg_negatives(kg, n=4, seed=0, keep=lambda q: bool(kg.disease_neighbours(q.disease_id)))
    assert all(q.disease_id == "MONDO:20989" for q in kept)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("relation,x_id\nindication,1\n", r"kg.csv, line 1, field 'display_relation': not a PrimeKG kg.csv"),
        ("", r"kg.csv, line 1: empty file"),
        (",".join(COLUMNS) + "\nindication,indication,0,DB1,drug,,DrugBank,1,2,disease,d,MONDO\n",
         r"kg.csv, line 2, field 'x_name': empty value"),
        (",".join(COLUMNS) + "\nindication,indication,0\n", r"kg.csv, line 2: expected 12 columns"),
    ],
)
def test_primekg_malformed(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "kg.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=needle):
        load_primekg(path)


def test_primekg_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="PrimeKG kg.csv not found"):
        load_primekg(tmp_path / "nope.csv")
