"""ADE-Corpus-V2 sentence classification (does the sentence describe an adverse drug event? "1"/"0").

4,000 train / 500 dev / 500 test. Train and test are BiomedRAG's ``ade_corpus_v2_train_4000.json`` and
``ade_corpus_v2_test.json``; dev is the staged ``dev_500.derived.json`` (rows 500-999 of the full test
split, **inferred** from the authors' prompt files, which cover rows 0-999). Source labels are the
integers 0/1 (the strings "0"/"1" are accepted too); canonical labels are the strings "1"/"0".
"""

from __future__ import annotations

from biorab.common.labels import ADE_CORPUS_V2_LABELS
from biorab.common.registry import DATASETS
from biorab.datasets.base import Converted, Dataset, check_label
from biorab.datasets.readers import SourceRow


@DATASETS.register("ade_corpus_v2")
class AdeCorpusV2Dataset(Dataset):
    """ADE-Corpus-V2 from ``{"text": sentence, "label": 0|1}`` JSONL files."""

    name = "ade_corpus_v2"
    task = "classification"
    files = {
        "train": "ade_corpus_v2/ade_corpus_v2_train_4000.json",
        "dev": "ade_corpus_v2/dev_500.derived.json",
        "test": "ade_corpus_v2/ade_corpus_v2_test.json",
    }

    def convert(self, row: SourceRow) -> Converted:
        sentence = row.string("text")
        raw = row.value("label")
        # bool is an int subclass: JSON true/false must not pass as 1/0.
        if isinstance(raw, bool) or not isinstance(raw, int | str):
            raise row.error(f"expected 0 or 1, got {raw!r}", "label")
        label = check_label(row, "label", str(raw), ADE_CORPUS_V2_LABELS, self.name)
        return Converted(text=sentence, label=label, fields={"sentence": sentence})
