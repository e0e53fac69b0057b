"""GIT (non-drug therapy triples over 22 SemMedDB predicates): 3,734 / 492 / 930 rows.

The label is ``SUBJECT_TEXT|PREDICATE|OBJECT_TEXT``. The test file holds 465 unique rows, each twice;
they are kept (and reported as duplicates by ``biorab data stats``) because the authors' test container
(``git/test_instruction_container.json``, 930 rows) and hence their scores include both copies.
"""

from __future__ import annotations

from biorab.common.labels import GIT_RELATIONS
from biorab.common.registry import DATASETS
from biorab.datasets.base import Converted, Dataset
from biorab.datasets.readers import SourceRow
from biorab.datasets.triples import join_triple, sentence_example
from biorab.tasks.triples import TripleExtraction

_FIELDS = ("SUBJECT_TEXT", "PREDICATE", "OBJECT_TEXT")


@DATASETS.register("git")
class GitDataset(Dataset):
    """GIT triples from ``{"PREDICATE", "SUBJECT_TEXT", "OBJECT_TEXT", "SENTENCE"}`` JSONL files."""

    name = "git"
    task = TripleExtraction.name
    files = {
        "train": "git/renew_triplet_T_train.jsonl",
        "dev": "git/renew_triplet_T_dev.jsonl",
        "test": "git/renew_triplet_T_test.jsonl",
    }

    def convert(self, row: SourceRow) -> Converted:
        sentence = row.string("SENTENCE")
        head, relation, tail = (row.string(field) for field in _FIELDS)
        label = join_triple(row, (head, relation, tail), _FIELDS, GIT_RELATIONS, self.name)
        return sentence_example(sentence, label)
