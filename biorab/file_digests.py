"""Content digests of files, remembered per file by its stat signature.

Every caller that keys something by what files hold uses these: the resume key of retrieving cells
(the files their corpus is built from, `biorab.runner.plan.cell_slices`), the MLflow dataset inputs
(`biorab.tracking.cell_runs.folder_digest`) and the DrugMechDB parse cache. A file whose (size, mtime, ctime,
inode) did not change since this process last read it is not read again, so digesting the corpus sources
of every cell costs one ``stat`` per file after the first read (the staged BioRAB data's 24 corpora: 11
files, 6.6 MB, 0.03 s the first time, 0.002 s after). ctime is in the signature because tools that copy
a file may keep its mtime (``cp -p``, rsync), never its ctime.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from biorab.generation.base import stable_digest

_BLOCK = 1 << 20
# absolute path -> (stat signature when read, sha256 hex); per process, like `functools.cache`
_DIGESTS: dict[str, tuple[tuple[int, int, int, int], str]] = {}


def _signature(path: str) -> tuple[int, int, int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def file_digest(path: str | os.PathLike[str]) -> str:
    """sha256 (hex) of the file's bytes (read again only when its stat signature changed)."""
    key = os.path.abspath(path)
    before = _signature(key)
    known = _DIGESTS.get(key)
    if known is not None and known[0] == before:
        return known[1]
    digest = hashlib.sha256()
    with open(key, "rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
    value = digest.hexdigest()
    if _signature(key) == before:  # not remembered when the file changed while it was read
        _DIGESTS[key] = (before, value)
    return value


def files_digest(files: Mapping[str, Path]) -> str:
    """One digest of named files' contents (``None`` for a missing file, so creating it changes the
    digest); the names, not the paths, enter it, so a moved copy of the same files digests the same."""
    return stable_digest(
        {name: file_digest(path) if path.is_file() else None for name, path in files.items()}
    )
