"""Typed records for the Drug Mechanisms Counterfactuals query files (spec §1.2, data README).

The release holds 14 JSON query files: Add-Link, Delete-Link and Invert-Link ("change") counterfactuals
and the factual (known-MoA) test. Each file is a JSON list of sample dicts. This module loads them into
frozen records with every field checked, so a malformed file fails with the file, the 0-based row index
and the field instead of producing a wrong prompt or score later. `write_query_file` writes the same
schema (key order included) for generated sets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.common.errors import DataError
from biorab.common.paths import drugmechcf_dir
from biorab.drugmech.graph.simulator import INVERSE_RELATIONS

ADD_LINK = "ADD_LINK"
DELETE_LINK = "DELETE_LINK"
CHANGE_LINK = "CHANGE_LINK"
KNOWN_MOA = "known_moa"
COUNTERFACTUAL_TYPES: tuple[str, ...] = (ADD_LINK, DELETE_LINK, CHANGE_LINK)

#: The 14 released query files, by stem (spec §1.2).
RELEASE_FILES: tuple[str, ...] = (
    "AddLink_pos_dpi_r1k",
    "AddLink_neg_dpi_r1k",
    "AddLink_pos_ppi_r1k",
    "AddLink_neg_ppi_r1k",
    "delete_pos_dpi_r250",
    "delete_neg_dpi_r250",
    "delete_pos_ppi_r250",
    "delete_neg_ppi_r250",
    "change_pos_dpi_r250",
    "change_neg_dpi_r250",
    "change_pos_ppi_r250",
    "change_neg_ppi_r250",
    "factuals_pos_r1k",
    "factuals_neg_r1k",
)

_EDIT_BASE = (
    "source_moa_id",
    "source_node",
    "source_node_name",
    "source_node_type",
    "target_moa_id",
    "target_node",
    "target_node_name",
    "target_node_type",
)
_EDIT_EXTRA = ("original_relation", "source_change_descr", "source_node_level_change")


@dataclass(frozen=True)
class EditLinkInfo:
    """The edited link of a counterfactual sample (`edit_link_info` in the files).

    `original_relation`, `source_change_descr` and `source_node_level_change` exist only in Delete/Invert
    records; `new_relation` is null in Delete records.
    """

    source_moa_id: str
    source_node: str
    source_node_name: str
    source_node_type: str
    target_moa_id: str
    target_node: str
    target_node_name: str
    target_node_type: str
    new_relation: str | None
    original_relation: str | None = None
    source_change_descr: str | None = None
    source_node_level_change: str | None = None

    def to_json(self, query_type: str) -> dict[str, Any]:
        """The released dict, keys in the released order (Add-Link records carry no Delete/Invert fields)."""
        row: dict[str, Any] = {k: getattr(self, k) for k in (*_EDIT_BASE, "new_relation")}
        if query_type != ADD_LINK:
            row.update({k: getattr(self, k) for k in _EDIT_EXTRA})
        return row


@dataclass(frozen=True)
class CounterfactualQuery:
    """One Add-Link, Delete-Link or Invert-Link (CHANGE_LINK) sample."""

    is_negative_sample: bool
    query_type: str
    drug_id: str
    disease_id: str
    drug_name: str
    disease_name: str
    edit_link_info: EditLinkInfo

    def to_json(self) -> dict[str, Any]:
        """The released dict, keys in the released order."""
        return {
            "is_negative_sample": self.is_negative_sample,
            "query_type": self.query_type,
            "drug_id": self.drug_id,
            "disease_id": self.disease_id,
            "drug_name": self.drug_name,
            "disease_name": self.disease_name,
            "edit_link_info": self.edit_link_info.to_json(self.query_type),
        }


@dataclass(frozen=True)
class FactualQuery:
    """One factual (known-MoA) sample: a DrugMechDB positive or a PrimeKG negative (`moa_id` null)."""

    is_negative_sample: bool
    source_kg: str
    moa_id: str | None
    drug_id: str
    drug_name: str
    disease_id: str
    disease_name: str
    query_type: str = KNOWN_MOA

    def to_json(self) -> dict[str, Any]:
        """The released dict, keys in the released order."""
        return {
            "query_type": self.query_type,
            "is_negative_sample": self.is_negative_sample,
            "source_kg": self.source_kg,
            "moa_id": self.moa_id,
            "drug_id": self.drug_id,
            "drug_name": self.drug_name,
            "disease_id": self.disease_id,
            "disease_name": self.disease_name,
        }


Query = CounterfactualQuery | FactualQuery


@dataclass(frozen=True)
class QueryFile:
    """A loaded query file: its stem (e.g. ``delete_pos_ppi_r250``), path and samples in file order."""

    name: str
    path: Path
    queries: tuple[Query, ...]

    @property
    def query_type(self) -> str:
        """The query type shared by all samples (the first sample's; files are homogeneous)."""
        return self.queries[0].query_type if self.queries else _type_from_name(self.name)

    @property
    def is_negative(self) -> bool:
        """True when the samples are negatives."""
        return bool(self.queries[0].is_negative_sample) if self.queries else "_neg" in self.name

    @property
    def link(self) -> str | None:
        """``dpi`` (surface) or ``ppi`` (deep) for counterfactual files: from a release-style name, else from
        the samples (surface when every edited link starts at the drug, deep when none does); None for
        factual files and for counterfactual files that mix the two."""
        parts = self.name.split("_")
        if len(parts) > 2 and parts[2] in ("dpi", "ppi"):
            return parts[2]
        starts = {
            q.edit_link_info.source_node == q.drug_id
            for q in self.queries
            if isinstance(q, CounterfactualQuery)
        }
        return {frozenset({True}): "dpi", frozenset({False}): "ppi"}.get(frozenset(starts))


def _type_from_name(name: str) -> str:
    lowered = name.lower()
    for prefix, qtype in (("addlink", ADD_LINK), ("delete", DELETE_LINK), ("change", CHANGE_LINK)):
        if lowered.startswith(prefix):
            return qtype
    return KNOWN_MOA


class _Row:
    """Field access for one JSON row that reports the file, row index and field on failure."""

    def __init__(self, data: Any, path: Path, index: int, prefix: str = "") -> None:
        if not isinstance(data, Mapping):
            raise DataError(
                f"row {index}: expected a JSON object, got {type(data).__name__}",
                path=path,
                field=prefix.rstrip(".") or None,
            )
        self.data, self.path, self.index, self.prefix = data, path, index, prefix

    def fail(self, message: str, key: str) -> DataError:
        """An error naming the file, this row and the (dotted) field."""
        return DataError(f"row {self.index}: {message}", path=self.path, field=self.prefix + key)

    def _get(self, key: str) -> Any:
        if key not in self.data:
            raise self.fail("missing field", key)
        return self.data[key]

    def text(self, key: str, *, nullable: bool = False) -> str | None:
        value = self._get(key)
        if value is None and nullable:
            return None
        if not isinstance(value, str) or (not value.strip()):
            want = "a non-empty string" + (" or null" if nullable else "")
            raise self.fail(f"expected {want}, got {value!r}", key)
        return value

    def req(self, key: str) -> str:
        value = self.text(key)
        assert value is not None  # text() without nullable never returns None
        return value

    def flag(self, key: str) -> bool:
        value = self._get(key)
        if not isinstance(value, bool):
            raise self.fail(f"expected true or false, got {value!r}", key)
        return value

    def child(self, key: str) -> _Row:
        return _Row(self._get(key), self.path, self.index, f"{self.prefix}{key}.")


def _check_relation(row: _Row, key: str, relation: str | None) -> None:
    # Every edited link is one of the three invertible pairs (spec §4.2, §6.1); any other label would be
    # rendered into the prompt and composed into the reference MoA, giving a meaningless sample.
    if relation is not None and relation not in INVERSE_RELATIONS:
        allowed = ", ".join(sorted(INVERSE_RELATIONS))
        raise row.fail(f"unknown relation label {relation!r}; allowed: {allowed}", key)


def _edit_info(row: _Row, query_type: str) -> EditLinkInfo:
    base = {k: row.req(k) for k in _EDIT_BASE}
    new_relation = row.text("new_relation", nullable=True)
    if query_type in (ADD_LINK, CHANGE_LINK) and new_relation is None:
        raise row.fail(f"{query_type} needs a relation, got null", "new_relation")
    _check_relation(row, "new_relation", new_relation)
    if query_type == ADD_LINK:
        return EditLinkInfo(**base, new_relation=new_relation)
    extra = {k: row.req(k) for k in _EDIT_EXTRA}
    _check_relation(row, "original_relation", extra["original_relation"])
    return EditLinkInfo(**base, new_relation=new_relation, **extra)


def parse_query(data: Any, *, path: str | Path, index: int) -> Query:
    """Check one JSON row and build its record.

    Args:
        data: The decoded JSON object.
        path: The file it came from (named in errors).
        index: Its 0-based position in the file (named in errors).

    Raises:
        DataError: On a missing field, a wrong type or an unknown ``query_type``.
    """
    row = _Row(data, Path(path), index)
    query_type = row.req("query_type")
    if query_type == KNOWN_MOA:
        return FactualQuery(
            is_negative_sample=row.flag("is_negative_sample"),
            source_kg=row.req("source_kg"),
            moa_id=row.text("moa_id", nullable=True),
            drug_id=row.req("drug_id"),
            drug_name=row.req("drug_name"),
            disease_id=row.req("disease_id"),
            disease_name=row.req("disease_name"),
        )
    if query_type not in COUNTERFACTUAL_TYPES:
        allowed = ", ".join((*COUNTERFACTUAL_TYPES, KNOWN_MOA))
        raise DataError(
            f"row {index}: unknown query_type {query_type!r}; allowed: {allowed}",
            path=path,
            field="query_type",
        )
    return CounterfactualQuery(
        is_negative_sample=row.flag("is_negative_sample"),
        query_type=query_type,
        drug_id=row.req("drug_id"),
        disease_id=row.req("disease_id"),
        drug_name=row.req("drug_name"),
        disease_name=row.req("disease_name"),
        edit_link_info=_edit_info(row.child("edit_link_info"), query_type),
    )


def load_query_file(path: str | Path) -> QueryFile:
    """Load and check one query file (a JSON list of samples).

    Raises:
        DataError: If the file is missing, not JSON, not a list, mixes query types, or a row is malformed.
    """
    path = Path(path)
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise DataError("query file not found", path=path) from e
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(f"not a UTF-8 JSON file: {e}", path=path) from e
    if not isinstance(rows, list):
        raise DataError(f"expected a JSON list of samples, got {type(rows).__name__}", path=path)
    queries = tuple(parse_query(r, path=path, index=i) for i, r in enumerate(rows))
    for i, q in enumerate(queries):
        if q.query_type != queries[0].query_type:
            raise DataError(
                f"row {i}: query_type {q.query_type!r} differs from row 0's {queries[0].query_type!r}",
                path=path,
                field="query_type",
            )
    return QueryFile(name=path.stem, path=path, queries=queries)


def resolve_release_dir(override: str | Path | None = None) -> Path:
    """The folder holding the released query files: `override`, else ``<drugmechcf>/release``.

    An override may name either the release folder itself or the drugmechcf folder above it.
    """
    if override is not None:
        base = Path(override).expanduser()
        if (base / "release").is_dir() and not (base / f"{RELEASE_FILES[0]}.json").is_file():
            return base / "release"
        if not base.is_dir():
            raise DataError("release folder does not exist", path=base)
        return base
    return drugmechcf_dir() / "release"


def load_release_file(name: str, *, release_dir: str | Path | None = None) -> QueryFile:
    """Load one released query file by stem (``delete_pos_ppi_r250``) or file name (``....json``).

    Raises:
        DataError: If the name is not one of the 14 released files, or the file is malformed.
    """
    stem = name[:-5] if name.endswith(".json") else name
    if stem not in RELEASE_FILES:
        raise DataError(f"unknown query file {name!r}; released files: {', '.join(RELEASE_FILES)}")
    return load_query_file(resolve_release_dir(release_dir) / f"{stem}.json")


def write_query_file(path: str | Path, queries: Sequence[Query]) -> Path:
    """Write samples in the released schema (JSON list, 4-space indent, released key order, no final
    newline), byte-identical to the released files for the same samples."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([q.to_json() for q in queries], indent=4), encoding="utf-8")
    return path
