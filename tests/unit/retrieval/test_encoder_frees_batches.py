"""An encoder on the CPU hands each batch's freed activations back to the OS before the next batch (issue
45: glibc kept them, and the driver's RSS grew with the queries encoded); on a GPU it does not (its
activations are the device's, and the trim would only slow its batches)."""

from __future__ import annotations

import numpy as np
import pytest

from biorab.retrieval import encoders
from biorab.retrieval.encoders import HFEncoder


def _encoder(device: str, events: list[str]) -> HFEncoder:
    encoder = HFEncoder.__new__(HFEncoder)  # no model: the batching loop alone
    encoder.device, encoder.batch_size = device, 2

    def batch(texts: list[str]) -> np.ndarray:
        events.append(f"batch {len(texts)}")
        return np.zeros((len(texts), 3), dtype=np.float32)

    encoder._encode_batch = batch  # type: ignore[method-assign]
    return encoder


@pytest.mark.parametrize(("device", "trims"), [("cpu", 3), ("cuda:0", 0), ("cuda", 0)])
def test_a_trim_after_each_cpu_batch(monkeypatch: pytest.MonkeyPatch, device: str, trims: int) -> None:
    events: list[str] = []
    monkeypatch.setattr(encoders, "release_free_memory", lambda: events.append("trim") or True)
    vectors = _encoder(device, events).encode(["a", "b", "c", "d", "e"])
    assert vectors.shape == (5, 3)
    expected = ["batch 2", "trim", "batch 2", "trim", "batch 1", "trim"]
    assert events == (expected if trims else [e for e in expected if e != "trim"])
    assert events.count("trim") == trims
