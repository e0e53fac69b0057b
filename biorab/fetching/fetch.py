"""Fetch a selection of manifest files into a data folder: skip what is already there and verified,
download or copy originals, rebuild derived files, and collect why anything failed.

Every file reaches its final path only by ``os.replace`` of a verified temp file, so an interrupted run
never leaves a half-written or unverified file where loaders would read it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from biorab.common.errors import BioRABError
from biorab.fetching import drugmechdb_paths
from biorab.fetching.derive import BUILDERS, gzip_like_staging
from biorab.fetching.download import FetchFailure, download
from biorab.fetching.manifest import ManifestFile
from biorab.fetching.parts import PartsSource, fetch_parts
from biorab.fetching.progress import FetchProgress


@dataclass
class FetchReport:
    """What happened to each selected file: already there, installed, or failed (path -> reason)."""

    present: list[str] = field(default_factory=list)
    installed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def is_installed(entry: ManifestFile, root: Path) -> bool:
    """The file is at its place with the manifest's size and sha256."""
    target = root / entry.path
    return target.is_file() and target.stat().st_size == entry.size and sha256_of(target) == entry.sha256


def fetch_files(
    files: list[ManifestFile], root: Path, *, mirror: str | None = None, progress: FetchProgress | None = None
) -> FetchReport:
    """Bring every file of `files` into `root`, originals first, then the derived files built from them.

    Args:
        mirror: a URL or folder laid out like the data folder; originals, assembled files (such as
            DrugMechDB's ``indication_paths.yaml``) and mirror-only files come from there instead of their
            public sources. Derived files are always rebuilt locally.
    """
    report, shown = FetchReport(), progress or FetchProgress(stream=None)
    ordered = [f for f in files if f.builder is None] + [f for f in files if f.builder is not None]
    for entry in ordered:
        if is_installed(entry, root):
            report.present.append(entry.path)
            continue
        try:
            _install(entry, root, mirror, shown, report)
        except (FetchFailure, BioRABError, OSError) as e:
            # One file's failure (a read-only folder, a permission) must not hide the others' results.
            reason = f"cannot write: {e.strerror or e} ({e.filename or entry.path})" if isinstance(
                e, OSError) else str(e)
            report.failed[entry.path] = reason
            shown.failed(entry.path, reason)
        else:
            report.installed.append(entry.path)
            shown.installed(entry.path)
    return report


def _install(entry: ManifestFile, root: Path, mirror: str | None, shown: FetchProgress,
             report: FetchReport) -> None:
    target = root / entry.path
    if entry.builder is not None:
        _build(entry, root, report)
        return
    if entry.parts is not None and not mirror:
        _assemble(entry, entry.parts, target, shown)
        return
    source, expected, transform = _source_of(entry, mirror)
    part = target.with_name(target.name + (".src.part" if transform else ".part"))
    shown.start(entry.path, entry.size if not transform else None)
    download(source, part, advance=shown.advance)
    got = sha256_of(part)
    if got != expected:
        part.unlink()  # a wrong .part must not be resumed
        raise FetchFailure(f"sha256 mismatch: expected {expected[:12]}…, got {got[:12]}… from {source} "
                           "(not installed)")
    if transform == "gzip":
        _write_atomically(target, gzip_like_staging(part.read_bytes()), entry.sha256)
        part.unlink()
    else:
        os.replace(part, target)


def _source_of(entry: ManifestFile, mirror: str | None) -> tuple[str, str, str | None]:
    """Where the bytes come from, the sha256 they must have there, and the transform to apply."""
    if mirror:
        sep = "" if mirror.endswith("/") else "/"
        local = str(Path(mirror).expanduser() / entry.path)
        where = f"{mirror}{sep}{entry.path}" if "://" in mirror else local
        return where, entry.sha256, None
    if entry.url is None:
        raise FetchFailure(f"no public source ({entry.mirror_only}); fetch it with --mirror URL|DIR")
    return entry.url, entry.source_sha256 or entry.sha256, entry.transform


def _assemble(entry: ManifestFile, parts: PartsSource, target: Path, shown: FetchProgress) -> None:
    """Fetch the verified upstream parts into ``FILE.parts/``, rebuild FILE from them, and drop the folder
    once FILE is installed (it is kept after a failure, so a rerun fetches only what is missing)."""
    staging = target.with_name(target.name + ".parts")
    fetch_parts(entry.path, parts, staging, shown)
    _write_atomically(target, drugmechdb_paths.assemble(staging), entry.sha256)
    shutil.rmtree(staging)


def _build(entry: ManifestFile, root: Path, report: FetchReport) -> None:
    for name in entry.inputs:
        if name in report.failed or not (root / name).is_file():
            raise FetchFailure(f"cannot rebuild: its input {name} was not fetched")
    data = BUILDERS[entry.builder or ""]([(root / name).read_bytes() for name in entry.inputs])
    _write_atomically(root / entry.path, data, entry.sha256)


def _write_atomically(target: Path, data: bytes, expected: str) -> None:
    got = hashlib.sha256(data).hexdigest()
    if got != expected:
        raise FetchFailure(f"rebuilt bytes differ from the manifest: sha256 {got[:12]}…, expected "
                           f"{expected[:12]}… (not installed)")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_bytes(data)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise FetchFailure(f"cannot write {target}: {e.strerror}" +
                           (" (disk full)" if e.errno == errno.ENOSPC else "")) from e
    os.replace(tmp, target)

