"""Rebuild ``drugmechdb/indication_paths.yaml`` from the per-MoA files of SuLab/DrugMechDB-agentic.

No public source has the staged file's bytes: the upstream ``indication_paths.yaml`` of SuLab/DrugMechDB is
in another (curation) order and another field naming. The data staging made it from the 4,846
``kb/paths/*.yaml`` files of DrugMechDB-agentic, and this module repeats that, byte for byte:

* the records in the order of ``kb/paths/_index.yaml`` (its ``file`` column),
* each record's keys in its file's order, except ``graph``, whose keys come first in the order
  ``_id, disease, disease_mesh, drug, drug_mesh, drugbank`` (a key the file lacks is restored as null, as
  the agentic copy dropped 59 null ``drug_mesh`` and 1 null ``drugbank``), then any other graph key,
* the whole list dumped once by libyaml (`_DUMP` below).

The caller checks the result against the manifest's sha256; any drift (another PyYAML emitter, a changed
upstream file) fails there instead of installing other bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from biorab.common.errors import DataError

INDEX = "_index.yaml"
GRAPH_KEYS: tuple[str, ...] = ("_id", "disease", "disease_mesh", "drug", "drug_mesh", "drugbank")

# libyaml when PyYAML has it (every binary wheel does), which is what the staging used; the pure-Python
# classes are the fallback, and the sha256 check decides whether their bytes are accepted.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
# No line wrapping: the staging wrote every scalar on one line.
_DUMP: dict[str, Any] = {"sort_keys": False, "allow_unicode": True, "width": 2**31 - 1}


def _load(path: Path) -> Any:
    try:
        return yaml.load(path.read_bytes(), Loader=_LOADER)
    except FileNotFoundError as e:
        raise DataError("file not found (it is listed in _index.yaml)", path=path) from e
    except yaml.YAMLError as e:
        raise DataError(f"not valid YAML: {e}", path=path) from e


def index_files(folder: Path) -> list[str]:
    """The per-MoA file names of ``folder/_index.yaml``, in its order."""
    if not (folder / INDEX).is_file():
        raise DataError(
            "file not found: the folder must hold _index.yaml and the files it lists", path=folder / INDEX
        )
    rows = _load(folder / INDEX)
    if not isinstance(rows, list):
        raise DataError("expected a YAML list of {id, file, ...} rows", path=folder / INDEX)
    names: list[str] = []
    for i, row in enumerate(rows, 1):
        name = row.get("file") if isinstance(row, dict) else None
        if not isinstance(name, str) or "/" in name or not name.endswith(".yaml"):
            raise DataError(
                f"row {i}: 'file' must be a file name ending in .yaml, got {name!r}",
                path=folder / INDEX,
                field="file",
            )
        names.append(name)
    return names


def _record(path: Path) -> dict[str, Any]:
    record = _load(path)
    graph = record.get("graph") if isinstance(record, dict) else None
    if not isinstance(graph, dict):
        raise DataError("expected a mapping with a 'graph' mapping", path=path, field="graph")
    ordered = {key: graph.get(key) for key in GRAPH_KEYS}
    ordered.update((key, value) for key, value in graph.items() if key not in ordered)
    record["graph"] = ordered  # same position among the record's keys: only the value is replaced
    return record


def assemble(folder: Path) -> bytes:
    """``indication_paths.yaml`` from a folder holding ``_index.yaml`` and the files it lists.

    Raises:
        DataError: a missing or malformed file, named.
    """
    records = [_record(folder / name) for name in index_files(folder)]
    text: str = yaml.dump(records, Dumper=_DUMPER, **_DUMP)
    return text.encode("utf-8")
