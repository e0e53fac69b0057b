"""The one query-file resolver: a name in a config, a responses file or on the command line → a `QueryFile`.

``biorab run`` (``drugmech.query_files``), ``biorab drugmech prompts|respond|score`` and the responses
scorer all resolve names here, so a name means the same file everywhere.
"""

from __future__ import annotations

from pathlib import Path

from biorab.common.errors import DataError
from biorab.drugmech.queries.query_files import RELEASE_FILES, QueryFile, load_query_file, load_release_file


def resolve_query_file(name: str, *, base: Path, release_dir: str | Path | None = None) -> QueryFile:
    """The query file a response names: a released file by stem or file name (``delete_pos_ppi_r250``,
    ``....json``), or the path of any query file in the released schema (e.g. one written by ``biorab
    drugmech generate``), absolute or relative to `base` (the responses file's folder) or the working folder.

    Raises:
        DataError: If the name is neither a released file nor an existing ``.json`` query file, or the file
            is malformed.
    """
    stem = name[:-5] if name.endswith(".json") else name
    if stem in RELEASE_FILES and "/" not in name and "\\" not in name:
        return load_release_file(name, release_dir=release_dir)
    if name.endswith(".json"):
        candidate = Path(name).expanduser()
        for path in (candidate,) if candidate.is_absolute() else (base / candidate, candidate):
            if path.is_file():
                return load_query_file(path)
        raise DataError(f"query file {name!r} not found (looked in {base} and the working folder)")
    return load_release_file(name, release_dir=release_dir)
