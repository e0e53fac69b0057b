"""`biorab corpus transform` end to end: LLM labeling of the unlabeled SemClass testbed with a fake backend
that answers "y" to everything, written as a BEIR corpus folder with both ledgers; a second call is all
from the generation cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from biorab.corpora import read_corpus
from biorab.methods import read_transformed

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data


def _biorab(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BIORAB_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "biorab.cli.main", *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_corpus_transform_llm_label(tmp_path: Path, data_dir: Path) -> None:
    config = tmp_path / "backend.yaml"
    config.write_text("backend: {name: fake, params: {mode: fixed, answer: 'y'}}\n"
                      "sampling: {max_tokens: 4}\n")
    args = ["corpus", "transform", "--dataset", "semclass", "--testbed", "unlabeled", "--method", "llm_label",
            "--backend-config", str(config), "--data-dir", str(data_dir), "--n-boot", "0"]
    out = _biorab(tmp_path / "cache", *args, "--out", str(tmp_path / "labeled"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    # 13 items repeat an earlier batch's sentence: the same prompt, read back from the cache.
    assert lines[0].endswith("(13 of 2400 generations from the cache)")
    report = json.loads(lines[1])
    # 1284 of the 2400 SemClass training items are "y": labeling everything "y" gets those right.
    assert report["metrics"]["labeling_accuracy"]["value"] == 1284 / 2400
    assert report["metrics"]["labeling_coverage"]["value"] == 1.0
    assert report["counts"] == {"items": 2400, "flagged": 2400, "changed": 2400, "unreadable": 0}
    corpus, truth = read_corpus(tmp_path / "labeled")  # a plain corpus folder, readable by BEIR tools
    assert corpus.kind == "unlabeled+llm_label" and {i.value for i in corpus.items} == {"y"}
    assert len(truth) == 2400 and read_transformed(tmp_path / "labeled")[3]["method"] == "llm_label"
    again = _biorab(tmp_path / "cache", *args, "--out", str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0].endswith("(2400 of 2400 generations from the cache)")
    assert (tmp_path / "again/corpus.jsonl").read_bytes() == (tmp_path / "labeled/corpus.jsonl").read_bytes()


def test_corpus_transform_refuses_a_method_that_does_not_fit(tmp_path: Path, data_dir: Path) -> None:
    config = tmp_path / "backend.yaml"
    config.write_text("name: fake\n")
    out = _biorab(tmp_path / "cache", "corpus", "transform", "--dataset", "semclass", "--testbed",
                  "unlabeled", "--method", "detect_correct", "--backend-config", str(config),
                  "--out", str(tmp_path / "x"))
    assert out.returncode != 0 and "detect_correct applies to" in out.stderr
