"""Dense query vectors encoded once per encoder and text in a process (issue 45): a text seen before is
not encoded again, only the unseen texts are batched, and the memo keeps the last `QUERY_MEMO` texts."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

from biorab.retrieval import encoders
from biorab.retrieval.encoders import HFEncoder


def _encoder(calls: list[list[str]]) -> HFEncoder:
    encoder = HFEncoder.__new__(HFEncoder)  # the memo alone: no model to load
    encoder._queries = OrderedDict()

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        # a vector that also depends on its batch, as padding makes a real one do (at 1e-7)
        return np.array([[len(t), len(texts)] for t in texts], dtype=np.float32).reshape(-1, 2)

    encoder.encode = encode  # type: ignore[method-assign]
    return encoder


def test_each_text_is_encoded_once_in_the_batch_that_first_held_it() -> None:
    calls: list[list[str]] = []
    encoder = _encoder(calls)
    first = encoder.encode_queries(["aa", "b", "aa"])
    second = encoder.encode_queries(["ccc", "b", "aa"])
    assert calls == [["aa", "b"], ["ccc"]]  # distinct, and only the unseen ones
    assert first["aa"].tolist() == [2, 2] and first["b"].tolist() == [1, 2]
    assert second["b"].tolist() == [1, 2]  # the first batch's vector, not one re-encoded with "ccc"
    assert second["ccc"].tolist() == [3, 1]
    assert list(second) == ["ccc", "b", "aa"]


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoders, "QUERY_MEMO", 3)
    calls: list[list[str]] = []
    encoder = _encoder(calls)
    encoder.encode_queries(["a", "b", "c"])
    encoder.encode_queries(["a", "d"])  # "a" used again: "b" is now the oldest and goes
    encoder.encode_queries(["a", "b", "c", "d"])
    assert calls == [["a", "b", "c"], ["d"], ["b"]]
    assert list(encoder._queries) == ["b", "c", "d"]  # the last three used, oldest first
