"""The released query files load into typed records, round-trip byte for byte, and malformed rows fail with
the file, row index and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biorab.common.errors import DataError
from biorab.drugmech.queries.query_files import (
    ADD_LINK,
    CHANGE_LINK,
    DELETE_LINK,
    KNOWN_MOA,
    RELEASE_FILES,
    CounterfactualQuery,
    FactualQuery,
    load_query_file,
    load_release_file,
    resolve_release_dir,
    write_query_file,
)

EXPECTED = {  # file -> (rows, query type, negative, link) per data/drugmechcf/README.md
    "AddLink_pos_dpi_r1k": (1000, ADD_LINK, False, "dpi"),
    "AddLink_neg_ppi_r1k": (1000, ADD_LINK, True, "ppi"),
    "delete_pos_ppi_r250": (250, DELETE_LINK, False, "ppi"),
    "change_neg_dpi_r250": (250, CHANGE_LINK, True, "dpi"),
    "factuals_pos_r1k": (1000, KNOWN_MOA, False, None),
    "factuals_neg_r1k": (1000, KNOWN_MOA, True, None),
}


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
@pytest.mark.parametrize("name", RELEASE_FILES)
def test_every_release_file_round_trips_byte_for_byte(
    name: str, drugmechcf_dir: Path, tmp_path: Path
) -> None:
    qf = load_release_file(name, release_dir=drugmechcf_dir)
    assert qf.name == name
    out = write_query_file(tmp_path / f"{name}.json", qf.queries)
    assert out.read_bytes() == (drugmechcf_dir / "release" / f"{name}.json").read_bytes()


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
@pytest.mark.parametrize(("name", "expected"), EXPECTED.items())
def test_file_kinds(name: str, expected: tuple[int, str, bool, str | None], drugmechcf_dir: Path) -> None:
    qf = load_release_file(f"{name}.json", release_dir=drugmechcf_dir / "release")
    assert (len(qf.queries), qf.query_type, qf.is_negative, qf.link) == expected


def test_records_carry_the_readme_example(drugmechcf_dir: Path) -> None:
    q = load_release_file("delete_pos_dpi_r250", release_dir=drugmechcf_dir).queries[0]
    assert isinstance(q, CounterfactualQuery)
    assert q.edit_link_info.new_relation is None
    assert q.edit_link_info.source_moa_id == q.edit_link_info.target_moa_id
    f = load_release_file("factuals_neg_r1k", release_dir=drugmechcf_dir).queries[0]
    assert isinstance(f, FactualQuery)
    assert (f.moa_id, f.drug_id, f.disease_id) == (None, "DrugBank:DB00203", "MONDO:20989")


def _write(tmp_path: Path, rows: object) -> Path:
    path = tmp_path / "q.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def _delete_row(drugmechcf_dir: Path) -> dict:
    rows = json.loads((drugmechcf_dir / "release" / "delete_pos_dpi_r250.json").read_text())
    return rows[0]


def test_missing_nested_field_names_file_row_and_field(tmp_path: Path, drugmechcf_dir: Path) -> None:
    good, bad = _delete_row(drugmechcf_dir), _delete_row(drugmechcf_dir)
    del bad["edit_link_info"]["target_node"]
    path = _write(tmp_path, [good, good, bad])
    with pytest.raises(DataError) as err:
        load_query_file(path)
    assert err.value.path == str(path) and err.value.field == "edit_link_info.target_node"
    assert "row 2" in str(err.value)


def test_wrong_types_and_unknown_query_type(tmp_path: Path, drugmechcf_dir: Path) -> None:
    row = _delete_row(drugmechcf_dir)
    with pytest.raises(DataError, match="row 0: expected true or false") as err:
        load_query_file(_write(tmp_path, [{**row, "is_negative_sample": "no"}]))
    assert err.value.field == "is_negative_sample"
    with pytest.raises(DataError, match="unknown query_type 'REMOVE_LINK'"):
        load_query_file(_write(tmp_path, [{**row, "query_type": "REMOVE_LINK"}]))
    change = {**row, "query_type": CHANGE_LINK}  # an Invert record needs its relation
    with pytest.raises(DataError, match="CHANGE_LINK needs a relation") as err:
        load_query_file(_write(tmp_path, [change]))
    assert err.value.field == "edit_link_info.new_relation"


def test_mixed_types_not_a_list_and_not_json(tmp_path: Path, drugmechcf_dir: Path) -> None:
    row = _delete_row(drugmechcf_dir)
    fact = {
        "query_type": "known_moa",
        "is_negative_sample": False,
        "source_kg": "X",
        "moa_id": "m",
        "drug_id": "d",
        "drug_name": "D",
        "disease_id": "s",
        "disease_name": "S",
    }
    with pytest.raises(DataError, match="row 1: query_type 'known_moa' differs"):
        load_query_file(_write(tmp_path, [row, fact]))
    with pytest.raises(DataError, match="expected a JSON list"):
        load_query_file(_write(tmp_path, {"a": 1}))
    path = tmp_path / "broken.json"
    path.write_bytes(b"[\xff]")
    with pytest.raises(DataError, match="not a UTF-8 JSON file"):
        load_query_file(path)
    with pytest.raises(DataError, match="query file not found"):
        load_query_file(tmp_path / "absent.json")


def test_unknown_release_name_lists_the_files(drugmechcf_dir: Path) -> None:
    with pytest.raises(DataError, match="unknown query file 'delete_pos_xyz'.*AddLink_pos_dpi_r1k"):
        load_release_file("delete_pos_xyz", release_dir=drugmechcf_dir)
    assert resolve_release_dir(drugmechcf_dir) == drugmechcf_dir / "release"
    assert resolve_release_dir(drugmechcf_dir / "release") == drugmechcf_dir / "release"


def test_unknown_relation_label_names_file_row_and_field(tmp_path: Path, drugmechcf_dir: Path) -> None:
    row = _delete_row(drugmechcf_dir)
    bad = {**row, "edit_link_info": {**row["edit_link_info"], "original_relation": "treats"}}
    with pytest.raises(DataError, match=r"row 1: unknown relation label 'treats'; allowed: decreases") as err:
        load_query_file(_write(tmp_path, [row, bad]))
    assert err.value.field == "edit_link_info.original_relation"
    edit = {**row["edit_link_info"], "new_relation": "x"}
    change = {**row, "query_type": CHANGE_LINK, "edit_link_info": edit}
    with pytest.raises(DataError, match="row 0: unknown relation label 'x'") as err:
        load_query_file(_write(tmp_path, [change]))
    assert err.value.field == "edit_link_info.new_relation"


def test_link_of_a_generated_file_comes_from_its_samples(tmp_path: Path, drugmechcf_dir: Path) -> None:
    surface = load_release_file("delete_pos_dpi_r250", release_dir=drugmechcf_dir).queries[:3]
    deep = load_release_file("delete_pos_ppi_r250", release_dir=drugmechcf_dir).queries[:3]
    assert load_query_file(write_query_file(tmp_path / "a.json", surface)).link == "dpi"
    assert load_query_file(write_query_file(tmp_path / "b.json", deep)).link == "ppi"
    assert load_query_file(write_query_file(tmp_path / "c.json", surface + deep)).link is None
    facts = load_release_file("factuals_pos_r1k", release_dir=drugmechcf_dir).queries[:2]
    assert load_query_file(write_query_file(tmp_path / "d.json", facts)).link is None
