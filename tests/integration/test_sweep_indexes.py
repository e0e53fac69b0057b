"""A sweep's retrieval indexes: one per corpus and retriever (settings that differ only in their selection
share it), built once with their own progress lines, and loaded, not rebuilt, by a later sweep."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from biorab.experiment import ExperimentConfig
from biorab.sweep.indexes import build_indexes, index_jobs


def config(data_dir: Path, name: str, retrieval: list[dict]) -> ExperimentConfig:
    return ExperimentConfig.model_validate({
        "name": name, "data_dir": str(data_dir), "datasets": [{"name": "medmcqa"}, {"name": "ade"}],
        "retrieval": retrieval})


def test_each_index_once_then_loaded(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))  # no index built by another test
    a = config(data_dir, "a", [{"testbed": "none"}, {"testbed": "labeled", "retriever": "bm25", "k": 1},
                                {"testbed": "labeled", "retriever": "bm25", "k": 3}])  # same index as k=1
    b = config(data_dir, "b", [{"testbed": "labeled", "retriever": "bm25", "k": 2},  # same again
                                {"testbed": "counterfactual", "rate": 0.2, "retriever": "bm25"}])
    jobs = index_jobs([a, b])
    assert [j.describe() for j in jobs] == ["bm25 over medmcqa labeled", "bm25 over ade labeled",
                                           "bm25 over medmcqa counterfactual 0.2",
                                           "bm25 over ade counterfactual 0.2"]
    lines: list[str] = []
    first = build_indexes(jobs, echo=lines.append, every_s=3600.0)  # no "still building" line here
    # BM25 indexes the keys (the test inputs' side): the counterfactual corpus has the labeled one's keys,
    # so its index is the same content and is loaded, not built
    assert (first.built, first.loaded) == (2, 2)
    assert "bm25 over ade counterfactual 0.2: " in lines[-2] and "loaded (built before)" in lines[-2]
    assert lines[0] == "  index 1/4: bm25 over medmcqa labeled ..."
    assert lines[1].startswith("  index 1/4: bm25 over medmcqa labeled: ") and " items, built in " in lines[1]
    assert lines[2].startswith("indexes: 1/4 indexes (25%)")  # their own count, rate and ETA
    again = build_indexes(jobs, echo=lines.append)
    assert (again.built, again.loaded) == (0, 4)
    assert index_jobs([config(data_dir, "c", [{"testbed": "none"}])]) == []


class Built:
    """What `build_indexes` reads of a built retriever: none (no items, not loaded)."""

    retriever = None


def build_one_dense_index(monkeypatch: pytest.MonkeyPatch, build: Callable[[], None], every_s: float
                          ) -> list[str]:
    """`build_indexes` of one dense index built by `build` (in place of embedding a corpus); its lines."""
    import biorab.ral.parts.retriever as retriever
    from biorab.sweep.indexes import IndexJob

    def fake(**_: object) -> Built:
        build()
        return Built()

    monkeypatch.setattr(retriever, "build_testbed_retriever", fake)
    job = IndexJob("labeled", None, "ade", 0, None, "dense", '{"encoder": "minilm"}',
                   '{"params": {}, "selection": {}}')
    lines: list[str] = []
    build_indexes([job], echo=lines.append, every_s=every_s)
    return lines


def test_a_long_build_says_it_is_still_building(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = build_one_dense_index(monkeypatch, lambda: time.sleep(0.35), every_s=0.1)
    beats = [x for x in lines if x.startswith("  index 1/1: dense (minilm) over ade labeled: building, ")]
    assert len(beats) >= 2 and beats[0].endswith(" s so far"), lines


def test_an_index_being_embedded_shows_its_items_rate_and_eta(monkeypatch: pytest.MonkeyPatch) -> None:
    from biorab.retrieval.encoders import ENCODE_PROGRESS

    def embed() -> None:  # 8 items in 4 batches of 2, as `HFEncoder.encode` reports them
        report = ENCODE_PROGRESS.get()
        assert report is not None
        for _batch in range(4):
            time.sleep(0.5)
            report(2, 8)

    lines = build_one_dense_index(monkeypatch, embed, every_s=0.25)
    head = "  index 1/1: dense (minilm) over ade labeled: embedding: "
    embedding = [x for x in lines if x.startswith(head)]
    # a line every 0.25 s while the items come (the clock starts at the first batch, and within its first
    # second there is no rate: "at once"), the last with the rate over the batches (8 items in ~1.5 s)
    assert len(embedding) >= 2 and embedding[-1].startswith(head + "8/8 items (100%), "), lines
    assert embedding[-1].endswith(" items/s, eta 0s"), lines
    assert ENCODE_PROGRESS.get() is None  # nobody watches once the index is built


def test_the_encoder_reports_each_batch() -> None:
    from types import SimpleNamespace

    import numpy as np

    from biorab.retrieval.encoders import ENCODE_PROGRESS, HFEncoder

    stub = SimpleNamespace(batch_size=2, dim=3, device="cpu",
                           _encode_batch=lambda texts: np.zeros((len(texts), 3), dtype=np.float32))
    seen: list[tuple[int, int]] = []
    token = ENCODE_PROGRESS.set(lambda n, total: seen.append((n, total)))
    try:
        vectors = HFEncoder.encode(stub, ["a", "b", "c", "d", "e"])  # type: ignore[arg-type]
    finally:
        ENCODE_PROGRESS.reset(token)
    assert vectors.shape == (5, 3) and seen == [(2, 5), (2, 5), (1, 5)]
