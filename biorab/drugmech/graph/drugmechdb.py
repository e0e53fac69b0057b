"""The DrugMechDB loader (spec §1.1): ``indication_paths.yaml`` -> MoA graphs, indexed by id, drug, disease
and drug–disease pair.

Parsing 7 MB of YAML takes seconds, so the parsed records are cached as JSON under
``cache_dir()/drugmech/`` keyed by the SHA-256 of the YAML file; a changed file gets a new cache entry.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biorab.common.errors import DataError
from biorab.common.paths import cache_dir, drugmechdb_dir
from biorab.drugmech.graph.moa import MoA, moa_from_record
from biorab.file_digests import file_digest

PATHS_FILE = "indication_paths.yaml"
DEPRECATED_FILE = "deprecated_ids.txt"
_CACHE_FORMAT = 1  # bump when the cached record shape changes


@dataclass(eq=False)
class DrugMechDB:
    """A set of MoAs with the indexes the generators need. Build one with `load_drugmechdb` or `subset`.

    Attributes:
        moas: the MoAs in file order.
        digest: SHA-256 of the source YAML (``""`` for a hand-made set).
    """

    moas: list[MoA]
    digest: str = ""
    by_id: dict[str, MoA] = field(init=False)
    by_pair: dict[tuple[str, str], list[MoA]] = field(init=False)
    by_drug: dict[str, list[MoA]] = field(init=False)
    by_disease: dict[str, list[MoA]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {}
        pairs: dict[tuple[str, str], list[MoA]] = defaultdict(list)
        drugs: dict[str, list[MoA]] = defaultdict(list)
        diseases: dict[str, list[MoA]] = defaultdict(list)
        for moa in self.moas:
            if moa.moa_id in self.by_id:
                raise DataError(f"MoA id {moa.moa_id!r} occurs twice", field="_id")
            self.by_id[moa.moa_id] = moa
            pairs[moa.pair].append(moa)
            drugs[moa.root].append(moa)
            diseases[moa.sink].append(moa)
        self.by_pair, self.by_drug, self.by_disease = dict(pairs), dict(drugs), dict(diseases)

    def __len__(self) -> int:
        return len(self.moas)

    def __repr__(self) -> str:
        return f"DrugMechDB({len(self.moas)} MoAs, digest={self.digest[:12] or None!r})"

    def __iter__(self) -> Iterator[MoA]:
        return iter(self.moas)

    def __getitem__(self, moa_id: str) -> MoA:
        try:
            return self.by_id[moa_id]
        except KeyError:
            raise DataError(f"unknown MoA id {moa_id!r}", field="moa_id") from None

    def __contains__(self, moa_id: object) -> bool:
        return moa_id in self.by_id

    def pair_count(self, moa: MoA) -> int:
        """How many MoAs of this set share `moa`'s drug–disease pair."""
        return len(self.by_pair.get(moa.pair, ()))

    def subset(self, moas: Iterable[MoA]) -> DrugMechDB:
        """A new set holding `moas` (in the given order) with fresh indexes."""
        return DrugMechDB(list(moas), digest=self.digest)


def _slim(rec: Any, index: int, path: Path) -> dict[str, Any]:
    """Keep only what the benchmark reads; the rest (references, comments) is dropped from the cache."""
    if not isinstance(rec, Mapping):
        raise DataError(f"record {index} is a {type(rec).__name__}, expected a mapping", path=path)
    graph = rec.get("graph")
    if not isinstance(graph, Mapping) or not graph.get("_id"):
        raise DataError(f"record {index}: missing field 'graph._id'", path=path, field="graph._id")
    nodes = [{k: n.get(k) for k in ("id", "label", "name")} if isinstance(n, Mapping) else n
             for n in rec.get("nodes") or []]
    links = [{k: x.get(k) for k in ("source", "target", "key")} if isinstance(x, Mapping) else x
             for x in rec.get("links") or []]
    return {"graph": dict(graph), "nodes": nodes if "nodes" in rec else None,
            "links": links if "links" in rec else None}


def _parse_yaml(path: Path) -> list[dict[str, Any]]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml is ~5x faster when present
    try:
        with path.open("rb") as f:
            data = yaml.load(f, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.MarkedYAMLError as e:
        line = e.problem_mark.line + 1 if e.problem_mark is not None else None
        raise DataError(f"invalid YAML: {e.problem}", path=path, line=line) from e
    except yaml.YAMLError as e:
        raise DataError(f"invalid YAML: {e}", path=path) from e
    if not isinstance(data, list):
        raise DataError(f"expected a list of MoA records, got {type(data).__name__}", path=path)
    return [_slim(rec, i, path) for i, rec in enumerate(data)]


def load_records(path: Path, *, use_cache: bool = True) -> tuple[list[dict[str, Any]], str]:
    """The slimmed records of one ``indication_paths.yaml`` and its digest, through the JSON cache."""
    if not path.is_file():
        raise DataError("DrugMechDB file not found", path=path)
    digest = file_digest(path)  # the sha256 of the file: keys the parse cache
    cached = cache_dir() / "drugmech" / f"drugmechdb-{digest[:16]}-v{_CACHE_FORMAT}.json"
    if use_cache and cached.is_file():
        records: list[dict[str, Any]] = json.loads(cached.read_text(encoding="utf-8"))
        return records, digest
    records = _parse_yaml(path)
    if use_cache:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(records), encoding="utf-8")
        tmp.replace(cached)  # atomic, so a concurrent reader never sees half a file
    return records, digest


def read_deprecated_ids(path: Path) -> frozenset[str]:
    """Deprecated MoA ids, one per line, compared exactly as written: trailing spaces and tabs are kept,
    as the paper's loader keeps them (spec §1.1), so ``"X "`` does not remove ``"X"``."""
    if not path.is_file():
        return frozenset()
    text = path.read_text(encoding="utf-8")
    return frozenset(line for line in text.split("\n") if line)


def load_drugmechdb(
    path: str | Path | None = None, *, deprecated: str | Path | None = None, use_cache: bool = True
) -> DrugMechDB:
    """Load DrugMechDB as the paper does (spec §1.1).

    Args:
        path: the ``indication_paths.yaml`` file or its folder; default
        `biorab.common.paths.drugmechdb_dir()`.
        deprecated: the deprecated-ids file; default ``deprecated_ids.txt`` beside the YAML.
        use_cache: read/write the parsed-record cache under ``cache_dir()``.

    Returns:
        The MoAs in file order, minus the deprecated ids.

    Raises:
        DataError: the file is missing or malformed; the message names the file and the MoA record.
    """
    base = Path(path) if path is not None else drugmechdb_dir()
    yaml_path = base / PATHS_FILE if base.is_dir() else base
    dep_path = Path(deprecated) if deprecated is not None else yaml_path.parent / DEPRECATED_FILE
    records, digest = load_records(yaml_path, use_cache=use_cache)
    skip = read_deprecated_ids(dep_path)
    moas = [moa_from_record(rec, path=yaml_path) for rec in records if rec["graph"]["_id"] not in skip]
    try:
        return DrugMechDB(moas, digest=digest)
    except DataError as e:
        raise DataError(str(e), path=yaml_path, field="_id") from e
