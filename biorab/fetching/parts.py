"""Download the many small upstream files one data file is assembled from, each verified by its own
pinned sha256, into a staging folder beside the target.

Used for ``drugmechdb/indication_paths.yaml`` (4,846 ``kb/paths/*.yaml`` files plus ``_index.yaml``).
The pinned hashes are a gzipped ``sha256sum`` list packaged with the manifest (``HEX  NAME`` lines, the
first being ``_index.yaml``), so ``zcat LIST | sha256sum -c`` checks a folder by hand too.

* Bounded concurrency: `THREADS` downloads at a time (one small file each; a file is a request).
* Resumable: a file reaches its name in the staging folder only after its hash matched, so a rerun skips
  every file already there and verified and downloads only the rest (a ``.part`` resumes by HTTP Range).
* Failures: each is shown as it happens; a systemic one (no network, a full disk) or `MAX_FAILURES` of
  them stop the run early, since the rest would fail the same way. The raised `FetchFailure` names the
  first few files with their reasons, worded as for any other file.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import urllib.parse
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from biorab.common.errors import DataError
from biorab.fetching.download import FetchFailure, download
from biorab.fetching.progress import FetchProgress

THREADS = 16
MAX_FAILURES = 20
#: How many failed files the final message names (the progress lines show each one).
NAMED = 3


@dataclass(frozen=True)
class PartsSource:
    """Where the parts are (`base_url` + file name) and the packaged list of their sha256."""

    base_url: str
    sha256_list: Path


def read_sha256_list(path: Path) -> list[tuple[str, str]]:
    """``(name, sha256)`` in list order from a gzipped ``sha256sum`` file."""
    rows: list[tuple[str, str]] = []
    for i, line in enumerate(gzip.decompress(path.read_bytes()).decode("utf-8").splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or not name or "/" in name:
            raise DataError(
                "expected 'SHA256  NAME' (64 hex digits, two spaces, a file name)", path=path, line=i
            )
        rows.append((name, digest))
    return rows


def _verified(path: Path, sha256: str) -> bool:
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256


def _no_bytes(_n: int) -> None:
    """Byte counts are not shown per part: the files are small, progress counts files."""


def _fetch_one(url: str, sha256: str, target: Path) -> str | None:
    """Download `url` to `target` through a verified ``.part``; the failure reason, or None."""
    part = target.with_name(target.name + ".part")
    try:
        download(url, part, advance=_no_bytes)
        got = hashlib.sha256(part.read_bytes()).hexdigest()
        if got != sha256:
            part.unlink()  # a wrong .part must not be resumed
            return f"sha256 mismatch: expected {sha256[:12]}…, got {got[:12]}… from {url} (not installed)"
        os.replace(part, target)
    except FetchFailure as e:
        return str(e)
    except OSError as e:
        return f"cannot write: {e.strerror or e} ({e.filename or target})"
    return None


def _systemic(reason: str) -> bool:
    return reason.startswith(("no network", "disk full", "cannot write"))


def fetch_parts(
    path: str, source: PartsSource, staging: Path, progress: FetchProgress, *, threads: int = THREADS
) -> None:
    """Bring every listed file, verified, into `staging` (created; verified files are kept).

    Args:
        path: the data file being assembled, for the progress lines.

    Raises:
        FetchFailure: how many files failed, the first `NAMED` with their reasons, and how to resume.
    """
    listed = read_sha256_list(source.sha256_list)
    staging.mkdir(parents=True, exist_ok=True)
    todo = [(name, digest) for name, digest in listed if not _verified(staging / name, digest)]
    progress.parts_start(path, todo=len(todo), total=len(listed), source=source.base_url, threads=threads)
    failed: dict[str, str] = {}
    done = 0
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="biorab-fetch")
    try:
        futures: dict[Future[str | None], str] = {
            pool.submit(_fetch_one, source.base_url + urllib.parse.quote(name), digest, staging / name): name
            for name, digest in todo
        }
        for future in as_completed(futures):
            done += 1
            reason = future.result()
            if reason is not None:
                failed[futures[future]] = reason
                progress.failed(futures[future], reason)
                if _systemic(reason) or len(failed) >= MAX_FAILURES:
                    break
            progress.parts_advance(done, len(todo))
    finally:
        # Ctrl-C or an early stop: drop what has not started; the running downloads finish (each is small
        # and bounded by the download timeout), so no thread writes after we return.
        pool.shutdown(wait=True, cancel_futures=True)
    if failed:
        named = "; ".join(f"{name}: {why}" for name, why in list(failed.items())[:NAMED])
        more = f"; and {len(failed) - NAMED} more" if len(failed) > NAMED else ""
        untried = len(todo) - done
        stopped = f", {untried:,} not finished (stopped early)" if untried else ""
        raise FetchFailure(
            f"{len(failed)} of {len(listed):,} upstream files failed{stopped}: {named}{more}; "
            f"run again to fetch only the rest (verified files are kept in {staging})"
        )
