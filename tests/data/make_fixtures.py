"""Cut the small test fixtures in ``tests/data/`` from the staged data, reproducibly.

    python tests/data/make_fixtures.py [--shared ../shared/data] [--rows 40]

* ``biorab/``: every staged file with its first `rows` records in the same format (JSON arrays, JSONL, TSV and
  CSV with their header, gzip kept gzip); small metadata files are copied whole. The first rows are the ones
  the tests' ``limit`` slices read, so a test over a slice gives the numbers it gives on the full data
  (tests whose numbers depend on whole splits, e.g. a retrieval corpus, are marked ``full_data``).
* ``drugmechcf/``: every released query file with its first `DM_QUERIES` queries, and the golden prompts.
* ``drugmechdb/``: the MoAs those queries and the prompts' in-context examples name (by id or drug–disease
  pair) plus the first `DM_MOAS` ones.

Deterministic: the same staged data gives byte-identical fixtures.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
COPY_WHOLE_BELOW = 8_000  # bytes: label maps, relation descriptions, READMEs
DM_QUERIES = 6
DM_MOAS = 40


def _cut_lines(text: str, n: int, header: bool) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[: n + (1 if header else 0)])


def _cut_json_array(text: str, n: int) -> str:
    """The array's first `n` items with the original text up to them, so their line numbers (reported in
    errors and kept as ``source_line``) stay those of the full file."""
    decoder, pos = json.JSONDecoder(), text.index("[") + 1
    for _ in range(n):
        while text[pos] in " \t\r\n,":
            pos += 1
        if text[pos] == "]":
            break
        _, pos = decoder.raw_decode(text, pos)
    return text[:pos] + "\n]\n"


def _cut_json(text: str, n: int) -> str:
    stripped = text.lstrip()
    if stripped.startswith("["):
        return _cut_json_array(text, n)
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError:  # JSON Lines under a .json name
        return _cut_lines(text, n, header=False)
    if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
        data = {k: v[:n] for k, v in data.items()}
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def cut_text(name: str, text: str, n: int) -> str:
    """The first `n` records of one file's text, by the format its name says."""
    if name.endswith(".json"):
        return _cut_json(text, n)
    if name.endswith((".tsv", ".csv")):
        return _cut_lines(text, n, header=True)
    return _cut_lines(text, n, header=False)  # .jsonl, .txt


def cut_file(src: Path, dst: Path, n: int) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.stat().st_size < COPY_WHOLE_BELOW:
        shutil.copyfile(src, dst)
        return
    if src.suffix == ".gz":
        text = gzip.decompress(src.read_bytes()).decode("utf-8")
        dst.write_bytes(gzip.compress(cut_text(src.stem, text, n).encode("utf-8"), mtime=0))
        return
    dst.write_text(cut_text(src.name, src.read_text(encoding="utf-8"), n), encoding="utf-8")


def cut_biorab(shared: Path, out: Path, n: int) -> None:
    for src in sorted(p for p in (shared / "biorab").rglob("*") if p.is_file()):
        cut_file(src, out / "biorab" / src.relative_to(shared / "biorab"), n)


def cut_drugmech(shared: Path, out: Path) -> None:
    release, cut = shared / "drugmechcf" / "release", out / "drugmechcf" / "release"
    cut.mkdir(parents=True, exist_ok=True)
    named: list[str] = []
    for src in sorted(release.glob("*.json")):
        queries = json.loads(src.read_text(encoding="utf-8"))[:DM_QUERIES]
        (cut / src.name).write_text(json.dumps(queries, indent=2) + "\n", encoding="utf-8")
        named += [json.dumps(q) for q in queries]
    shutil.copytree(shared / "drugmechcf" / "golden", out / "drugmechcf" / "golden", dirs_exist_ok=True)
    # The prompts' in-context examples name MoAs too (closed-world Add-Link examples).
    texts = HERE.parents[1] / "biorab" / "drugmech" / "prompts" / "texts.py"
    named.append(texts.read_text(encoding="utf-8"))
    _cut_drugmechdb(shared / "drugmechdb", out / "drugmechdb", " ".join(named))


def _cut_drugmechdb(src: Path, dst: Path, queries_text: str) -> None:
    moas = yaml.safe_load((src / "indication_paths.yaml").read_text(encoding="utf-8"))

    def named(moa: dict[str, Any]) -> bool:
        g = moa["graph"]
        pair = (g.get("drug_mesh") or "\0", g.get("disease_mesh") or "\0")
        return g["_id"] in queries_text or all(f'"{x}"' in queries_text for x in pair)

    kept = [m for i, m in enumerate(moas) if i < DM_MOAS or named(m)]
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "indication_paths.yaml").write_text(yaml.safe_dump(kept, sort_keys=False), encoding="utf-8")
    for extra in ("deprecated_ids.txt", "README.md"):
        if (src / extra).is_file():
            shutil.copyfile(src / extra, dst / extra)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=HERE.parents[1].parent / "shared" / "data")
    parser.add_argument("--rows", type=int, default=40)
    args = parser.parse_args()
    cut_biorab(args.shared, HERE, args.rows)
    cut_drugmech(args.shared, HERE)


if __name__ == "__main__":
    main()
