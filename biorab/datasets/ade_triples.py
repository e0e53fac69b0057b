"""ADE extended to triples (drug, effect|dosage, text): 4,970 train / 2,130 test rows, no dev split.

Train is the authors' retrieval corpus ``triplet_extraction_ade_train.json``; test is
``test.derived.jsonl`` (the ``context``/``response`` of the authors' test container). Each row carries
exactly one gold triple, even when its sentence has several.
"""

from __future__ import annotations

from biorab.common.labels import ADE_RELATIONS
from biorab.common.registry import DATASETS
from biorab.datasets.base import Converted, Dataset
from biorab.datasets.readers import SourceRow
from biorab.datasets.triples import sentence_example, split_triple
from biorab.tasks.triples import TripleExtraction


@DATASETS.register("ade")
class AdeDataset(Dataset):
    """ADE triples from ``{"text": sentence, "label": "head|relation|tail"}`` JSONL files."""

    name = "ade"
    task = TripleExtraction.name
    files = {"train": "ade/triplet_extraction_ade_train.json", "test": "ade/test.derived.jsonl"}

    def convert(self, row: SourceRow) -> Converted:
        label = split_triple(row, "label", row.string("label"), ADE_RELATIONS, self.name)
        return sentence_example(row.string("text"), label)
