"""SemClass: does a SemMedDB triple belong to its sentence ("y"/"n")? 2,400 train / 600 test, no dev.

The input is a (sentence, triple) pair. `text` is the authors' own key form from their uniform retrieval
corpus (``classification_semmed_train.json``): ``"if the triple <head>|<relation>|<tail> is belong to
sentence <sentence>"`` (reproduced byte for byte for all 2,400 train rows). ``fields`` carries
``sentence``, ``head``, ``relation``, ``tail`` and the SemMedDB ``source_id``.
"""

from __future__ import annotations

from biorab.common.labels import SEMCLASS_LABELS
from biorab.common.registry import DATASETS
from biorab.datasets.base import Converted, Dataset, check_label
from biorab.datasets.readers import SourceRow


def semclass_text(sentence: str, head: str, relation: str, tail: str) -> str:
    """The retrieval key/query of a SemClass instance."""
    return f"if the triple {head}|{relation}|{tail} is belong to sentence {sentence}"


@DATASETS.register("semclass")
class SemClassDataset(Dataset):
    """SemClass from ``{"ID", "head", "relation", "tail", "sentence", "label": "y"|"n"}`` JSONL files."""

    name = "semclass"
    task = "classification"
    files = {"train": "semclass/sentence_triple_train.jsonl", "test": "semclass/sentence_triple_test.jsonl"}

    def convert(self, row: SourceRow) -> Converted:
        sentence, head, relation, tail = (row.string(f) for f in ("sentence", "head", "relation", "tail"))
        label = check_label(row, "label", row.string("label"), SEMCLASS_LABELS, self.name)
        source_id = row.data.get("ID")
        fields = {
            "sentence": sentence,
            "head": head,
            "relation": relation,
            "tail": tail,
            "source_id": source_id if isinstance(source_id, str) else None,
        }
        return Converted(text=semclass_text(sentence, head, relation, tail), label=label, fields=fields)
