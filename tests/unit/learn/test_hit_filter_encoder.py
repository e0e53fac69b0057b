"""The trained-encoder hit filter on a saved (untrained) MiniLM encoder: hits re-ranked nearest first,
ranks renumbered, a distance threshold drops the far ones, and the fingerprint follows the threshold."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.common.records import Hit
from biorab.learn import EncoderTrainParams
from biorab.learn.hit_filter import EncoderHitFilter, HitFilterSpec

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from biorab.learn.encoder_model import new_encoder

    folder = tmp_path_factory.mktemp("enc") / "encoder"
    new_encoder(EncoderTrainParams(kind="sentence", model="minilm", max_length=32)).save(folder)
    return folder


def test_filter_reranks_and_thresholds(encoder_dir: Path) -> None:
    hits = [
        Hit("d0", 9.0, 0, "The patient walked home after lunch.", "0"),
        Hit("d1", 8.0, 1, "Aspirin caused a severe rash.", "1"),
    ]
    keep_all = EncoderHitFilter(HitFilterSpec(encoder=str(encoder_dir)), task="classification")
    ranked = keep_all.apply("Aspirin induced a rash in the patient.", hits)
    assert [h.doc_id for h in ranked] == ["d1", "d0"] and [h.rank for h in ranked] == [0, 1]
    from biorab.learn.encoder_eval import distances
    from biorab.learn.triplets import item_text

    d = distances(keep_all.encoder, ["Aspirin induced a rash in the patient."] * 2,
                  [item_text("classification", h.key, h.value) for h in hits])  # fmt: skip
    middle = float((d[0] + d[1]) / 2)
    spec = HitFilterSpec(encoder=str(encoder_dir), threshold=middle)
    strict = EncoderHitFilter(spec, task="classification")
    assert [h.doc_id for h in strict.apply("Aspirin induced a rash in the patient.", hits)] == ["d1"]
    assert strict.fingerprint != keep_all.fingerprint
