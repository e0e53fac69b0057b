"""Resume after an edit of a retrieval corpus source: the rows of exactly the cells whose corpus is built
from the edited file are computed again (through the caches: only the prompts that changed are generated),
the scored rows show the edited corpus, and every other cell keeps its rows. A real `biorab run --no-ray`
with the fake backend on a copy of the fixtures in tests/data."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq

from tests.support.cli_runs import biorab, write_config

RETRIEVAL = [
    {"testbed": "none"},
    {"testbed": "labeled", "retriever": "bm25", "k": 1},
    {"testbed": "diverse", "retriever": "bm25", "k": 1},
]
CELLS = ("none", "labeled", "diverse")


def run(cfg: Path, cache: Path) -> tuple[int, int]:
    """(generated, from cache) of one run, as it prints them."""
    out = biorab("run", str(cfg), "--no-ray", cache=cache)
    assert out.returncode == 0, out.stderr
    found = re.search(r"generated (\d+), from cache (\d+), failed 0", out.stderr)
    assert found, out.stderr
    return int(found[1]), int(found[2])


def shards(run_dir: Path) -> dict[str, set[str]]:
    """The shard files of each cell (by testbed)."""
    return {
        kind: {p.name for p in run_dir.glob(f"cells/semclass-test__{kind}*/part-*.parquet")} for kind in CELLS
    }


def new_rows(run_dir: Path, kind: str, names: set[str]) -> int:
    """How many rows the shard files `names` of the cell hold."""
    (cell,) = run_dir.glob(f"cells/semclass-test__{kind}*")
    return sum(pq.read_metadata(cell / name).num_rows for name in names)


def hits(run_dir: Path, kind: str) -> list[tuple[str, str]]:
    """(doc id, value) of the one hit of each scored row of the cell, in slice order."""
    (path,) = run_dir.glob(f"predictions/semclass-test__{kind}*.parquet")
    rows = pq.read_table(path).to_pylist()
    return [(h["doc_id"], h["value"]) for r in rows for h in json.loads(r["hits"])]


def edit_line(path: Path, index: int, label: str) -> None:
    """Set the label of the `index`-th JSON line of a train file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[index])
    row["label"] = label
    lines[index] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_corpus_edit_recomputes_exactly_the_cells_that_read_it(tmp_path: Path, data_dir: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(data_dir, data)
    cfg = write_config(tmp_path, data, retrieval=RETRIEVAL)
    run_dir = tmp_path / "runs" / "rel"
    cache = tmp_path / "cache"
    assert run(cfg, cache) == (18, 0)
    # semclass/train/5 (label n) is the hit of test rows 0, 1 and 2 in the labeled corpus
    assert hits(run_dir, "labeled")[:3] == [("semclass/train/5", "n")] * 3
    first = shards(run_dir)

    edit_line(data / "semclass" / "sentence_triple_train.jsonl", 5, "y")
    # the labeled cell reads that file: its 6 rows again, 3 new prompts (the edited hit) and 3 from the cache;
    # the diverse pool excludes semclass, and the cell without retrieval reads no corpus
    assert run(cfg, cache) == (3, 3)
    second = shards(run_dir)
    assert second["none"] == first["none"] and second["diverse"] == first["diverse"]
    assert new_rows(run_dir, "labeled", second["labeled"] - first["labeled"]) == 6
    assert hits(run_dir, "labeled")[:3] == [("semclass/train/5", "y")] * 3  # never the stale rows

    # a file of the diverse pool: ade/train/15 is the hit of test row 4 there
    assert hits(run_dir, "diverse")[4] == ("ade/train/15", "Ampicillin|effect|myasthenia gravis")
    edit_line(data / "ade" / "triplet_extraction_ade_train.json", 15, "Ampicillin|effect|weakness")
    assert run(cfg, cache) == (1, 5)
    third = shards(run_dir)
    assert third["none"] == first["none"] and third["labeled"] == second["labeled"]
    assert new_rows(run_dir, "diverse", third["diverse"] - second["diverse"]) == 6
    assert hits(run_dir, "diverse")[4] == ("ade/train/15", "Ampicillin|effect|weakness")

    assert run(cfg, cache) == (0, 0)  # nothing changed: nothing computed
    assert shards(run_dir) == third
