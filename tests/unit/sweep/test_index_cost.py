"""What `biorab plan` says a sweep's indexes cost on the cluster (issue 45 item 5): the dense (and hybrid)
indexes encode every item of their corpus once; BM25 costs no GPU time. Pinned by hand on made-up corpora."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

import biorab.ral.parts.testbeds as testbeds
from biorab.common.records import CorpusItem
from biorab.sweep.config import ThroughputSpec
from biorab.sweep.indexes import IndexCost, IndexJob, index_cost


def job(retriever: str, dataset: str, params: dict[str, object]) -> IndexJob:
    return IndexJob("labeled", None, dataset, 0, None, retriever, json.dumps(params),
                    json.dumps({"params": params, "selection": {}}))


def test_dense_indexes_are_costed_by_their_encoded_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    corpora = {  # keys of 40 + 80 characters; values of 3 + 5 (read only when fields is key_value)
        "a": [CorpusItem("a/0", "k" * 40, "yes", "a", "classification"),
              CorpusItem("a/1", "k" * 80, "maybe", "a", "classification")],
        "b": [CorpusItem("b/0", "k" * 200, "no", "b", "classification")],
    }
    monkeypatch.setattr(testbeds, "testbed_corpus",
                        lambda testbed, dataset, **_: (SimpleNamespace(items=corpora[dataset]), None))
    throughput = ThroughputSpec(per_size={1.0: (0.01, 1.0), 8.0: (10.0, 1.0)})
    jobs = [job("dense", "a", {"encoder": "minilm"}),                          # 120 chars
            job("dense", "a", {"encoder": "minilm", "fields": "key_value"}),   # 120 + 2 x "\n" + 3 + 5 chars
            job("bm25", "b", {}),                                              # no encoder: not counted
            job("hybrid", "b", {})]                                            # 200 chars
    cost = index_cost(jobs, throughput)
    chars = 120 + (120 + 2 + 8) + 200  # 450 characters -> 112.5 tokens at 4 per token -> 112 (rounded)
    assert chars / 4 == 112.5
    # the encoder (0.11B) reads the table's nearest larger size, 1B: 0.01 prompt tokens/s (not 8B's 10)
    assert cost == IndexCost(indexes=4, encoded=3, encoded_items=2 + 2 + 1, encoded_tokens=112,
                             gpu_hours=3.111111)  # 112 / 0.01 s = 11,200 s


def test_no_encoding_index_costs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(testbeds, "testbed_corpus", lambda *a, **k: pytest.fail("BM25 needs no corpus here"))
    assert index_cost([job("bm25", "a", {})], ThroughputSpec()) == IndexCost(1, 0, 0, 0, 0.0)
