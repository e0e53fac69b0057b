"""Check that `biorab data fetch` rebuilds `drugmechdb/indication_paths.yaml` byte-identical from the pinned
upstream files, given a copy of those files (no network needed); optionally (re)write the packaged list of
their sha256.

    python scripts/check_drugmechdb_rebuild.py --from-git-dir PATH/TO/DrugMechDB-agentic.git [--write-list]
    python scripts/check_drugmechdb_rebuild.py --from-folder PATH/TO/kb/paths

`--from-git-dir` takes `kb/paths` at the manifest's pinned commit from a (bare) clone of
SuLab/DrugMechDB-agentic (`git archive`); `--from-folder` takes a folder holding `_index.yaml` and the
per-MoA files (for example a finished `indication_paths.yaml.parts/` staging folder). The script checks
every file against the packaged sha256 list (or, with `--write-list`, writes that list from the folder:
`_index.yaml` first, then the files in index order), then rebuilds with the project's own
`biorab.fetching.drugmechdb_paths.assemble` and compares size and sha256 with the manifest entry.
Exit code 0 when everything matches, 1 otherwise.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from biorab.fetching import load_manifest  # noqa: E402
from biorab.fetching.drugmechdb_paths import INDEX, assemble, index_files  # noqa: E402
from biorab.fetching.parts import read_sha256_list  # noqa: E402

TARGET = "drugmechdb/indication_paths.yaml"


def _from_git(git_dir: Path, commit: str, out: Path) -> Path:
    """`kb/paths` of `commit` extracted under `out`."""
    archive = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", commit, "kb/paths"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out / "kb" / "paths"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_list(folder: Path, out: Path) -> None:
    names = [INDEX, *index_files(folder)]
    extra = sorted({p.name for p in folder.iterdir()} - set(names))
    if extra:
        raise SystemExit(f"error: {folder}: {len(extra)} files not in {INDEX}, e.g. {extra[:3]}")
    text = "".join(f"{_sha(folder / name)}  {name}\n" for name in names).encode("utf-8")
    out.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
    print(f"wrote {out}: {len(names)} files, {out.stat().st_size:,} bytes")


def _check_files(folder: Path, listed: list[tuple[str, str]]) -> int:
    bad = [name for name, digest in listed if not (folder / name).is_file() or _sha(folder / name) != digest]
    extra = sorted({p.name for p in folder.iterdir()} - {name for name, _ in listed})
    print(
        f"upstream files: {len(listed) - len(bad)} of {len(listed)} match the packaged sha256 list"
        + (f"; missing or different: {bad[:5]}" if bad else "")
        + (f"; {len(extra)} files not in the list: {extra[:5]}" if extra else "")
    )
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--from-git-dir", type=Path, help="a (bare) git clone of SuLab/DrugMechDB-agentic")
    where.add_argument("--from-folder", type=Path, help="a folder with _index.yaml and the per-MoA files")
    parser.add_argument(
        "--write-list",
        action="store_true",
        help="write the packaged sha256 list from the files instead of checking them",
    )
    args = parser.parse_args()
    manifest = load_manifest()
    entry = next(f for f in manifest.files if f.path == TARGET)
    assert entry.parts is not None, f"{TARGET} has no parts in the manifest"
    commit = manifest.sources[entry.source or ""]["commit"]
    print(f"{TARGET}: expected {entry.size:,} bytes, sha256 {entry.sha256}")
    print(f"upstream: {entry.parts.base_url}")
    with tempfile.TemporaryDirectory() as tmp:
        if args.from_git_dir:
            folder = _from_git(args.from_git_dir, commit, Path(tmp))
            print(f"source: git archive {commit} kb/paths from {args.from_git_dir}")
        else:
            folder = args.from_folder
            print(f"source: folder {folder}")
        if args.write_list:
            _write_list(folder, entry.parts.sha256_list)
        status = _check_files(folder, read_sha256_list(entry.parts.sha256_list))
        start = time.monotonic()
        built = assemble(folder)
        got = hashlib.sha256(built).hexdigest()
        same = got == entry.sha256 and len(built) == entry.size
        print(
            f"rebuilt by biorab.fetching.drugmechdb_paths.assemble in {time.monotonic() - start:.1f} s: "
            f"{len(built):,} bytes, sha256 {got} -> {'byte-identical' if same else 'DIFFERENT'}"
        )
    return status or (0 if same else 1)


if __name__ == "__main__":
    sys.exit(main())
