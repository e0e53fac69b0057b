"""ChemProt at sentence level (CPR:3/4/5/6/9 as ACTIVATOR, DOWNREGULATOR, AGONIST, ANTAGONIST, PRODUCT-OF).

Splits 4,111 / 2,411 / 3,438 from BiomedRAG's ``{train,dev,test}_triples.json`` (one JSON array each).
The gold label is ``triple_list[0]``, as in the original scripts; every staged item has exactly one triple,
and an item with more is an error rather than a silently dropped gold triple. The sentence keeps the
spaces that pad entity mentions (the authors' retrieval corpus keeps them too).
"""

from __future__ import annotations

from typing import Any

from biorab.common.labels import CHEMPROT_RELATIONS
from biorab.common.registry import DATASETS
from biorab.datasets.base import Converted, Dataset
from biorab.datasets.readers import SourceRow
from biorab.datasets.triples import join_triple, sentence_example
from biorab.tasks.triples import TripleExtraction


@DATASETS.register("chemprot")
class ChemProtDataset(Dataset):
    """ChemProt triples from ``{"text", "triple_list": [[chemical, relation, gene]]}`` items."""

    name = "chemprot"
    task = TripleExtraction.name
    file_format = "json_array"
    files = {
        "train": "chemprot/train_triples.json",
        "dev": "chemprot/dev_triples.json",
        "test": "chemprot/test_triples.json",
    }

    def convert(self, row: SourceRow) -> Converted:
        sentence = row.string("text")
        triples = row.value("triple_list")
        if not isinstance(triples, list) or len(triples) != 1:
            count = len(triples) if isinstance(triples, list) else type(triples).__name__
            raise row.error(f"expected a list with exactly one triple, got {count}", "triple_list")
        parts = _triple_parts(row, triples[0])
        label = join_triple(
            row,
            parts,
            ("triple_list[0][0]", "triple_list[0][1]", "triple_list[0][2]"),
            CHEMPROT_RELATIONS,
            self.name,
        )
        return sentence_example(sentence, label)


def _triple_parts(row: SourceRow, triple: Any) -> tuple[str, str, str]:
    if not isinstance(triple, list) or len(triple) != 3 or not all(isinstance(p, str) for p in triple):
        raise row.error(f"expected [head, relation, tail] strings, got {triple!r}", "triple_list[0]")
    return triple[0], triple[1], triple[2]
