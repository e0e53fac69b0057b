"""Rebuild the derived data files from fetched originals, byte for byte as the data staging made them.

Each builder takes the bytes of its inputs (in manifest order) and returns the bytes of the file; the
caller checks them against the manifest's sha256, so a builder that drifts fails loudly, never silently.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable

from biorab.common.errors import DataError
from biorab.fetching import pharmkg_reconstruction

Builder = Callable[[list[bytes]], bytes]


def _jsonl(rows: list[dict[str, object]]) -> bytes:
    # json.dumps defaults plus ensure_ascii=False: the staging wrote exactly this.
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def context_response(inputs: list[bytes]) -> bytes:
    """An instruction file's ``context``/``response`` as ``{"text", "label"}`` JSONL (ADE and Hetionet
    test sets)."""
    rows = [json.loads(line) for line in inputs[0].decode("utf-8").splitlines() if line.strip()]
    return _jsonl([{"text": row["context"], "label": row["response"]} for row in rows])


def rows_500_to_999(inputs: list[bytes]) -> bytes:
    """Rows 500-999 of the Ade-corpus-v2 full test split (the inferred dev set), re-serialised with
    ``\\n`` line ends (the source has ``\\r\\n``)."""
    lines = inputs[0].decode("utf-8").splitlines()
    return _jsonl([json.loads(line) for line in lines[500:1000]])


def gzip_like_staging(data: bytes) -> bytes:
    """`data` compressed as the staging did (``gzip -9 -n``: no name, mtime 0).

    Why GNU gzip and not Python's zlib: its deflate picks different matches, and for the Hetionet prompt
    files no zlib level reproduces the staged bytes, while ``gzip -9 -n`` reproduces all eight.
    """
    exe = shutil.which("gzip")
    if exe is None:
        raise DataError("the `gzip` program is needed to rebuild the staged .gz files; install gzip "
                        "(e.g. apt-get install gzip) or fetch from a mirror")
    return subprocess.run([exe, "-9", "-n", "-c"], input=data, capture_output=True, check=True).stdout


BUILDERS: dict[str, Builder] = {
    "context_response": context_response,
    "rows_500_to_999": rows_500_to_999,
    "pharmkg_test_500": pharmkg_reconstruction.test_500,
    "pharmkg_dev_500": pharmkg_reconstruction.dev_500,
}
