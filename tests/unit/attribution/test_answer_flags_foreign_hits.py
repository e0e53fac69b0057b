"""A hit whose value is not in the task's answer form (the diverse testbed's hits come from other tasks'
corpora: a classification label 'y' under a triple task) copies nothing and ends nothing: it ended the
paper grid's rehearsal at --limit 2 with "triple line 1 'y' has 1 '|'-separated parts"."""

from __future__ import annotations

from biorab.attribution.answers import answer_flags
from biorab.common.records import Hit, Prediction


def test_foreign_hit_values_are_not_copied() -> None:
    answer = "aspirin|effect|pain"
    hits = [Hit("d1", 1.0, 0, "a sentence", "y"), Hit("d2", 0.5, 1, "another", answer)]
    tags = [{"corrupted": False, "corrupted_label": None, "original_label": None}] * 2
    said = Prediction(label=answer, raw=answer, ok=True)
    flags = answer_flags("triple_extraction", answer, said, hits, tags)
    assert flags.copied_evidence  # the second hit's triple is the answer: copied
    assert not flags.copied_corrupted and flags.clean_evidence
    only_foreign = answer_flags("triple_extraction", answer, said, hits[:1], tags[:1])
    assert not only_foreign.copied_evidence  # 'y' is no triple: nothing to copy
