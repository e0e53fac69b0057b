"""The paper's own methods (section 4.3): Detect-and-Correct on labeled/counterfactual corpora and LLM
labeling of unlabeled corpora, as corpus transforms run through the generation cache.

`transform_corpus` turns a testbed corpus into a corrected or labeled one plus a `TransformLedger`;
`score_transform` scores that ledger against the testbed's true ledger. The RAL assembly runs a retrieval
entry's ``method`` through the plug-in `biorab.methods.corpus_hooks` (stored under the cache by
`biorab.methods.apply.ensure_method_corpus`). See docs/methods.md.
"""

from __future__ import annotations

from biorab.methods.corpus_transform import (
    METHODS,
    TransformEntry,
    TransformLedger,
    transform_corpus,
)
from biorab.methods.store import StoredTransform, read_transformed, write_transformed
from biorab.methods.transform_metrics import score_transform

__all__ = [
    "METHODS",
    "StoredTransform",
    "TransformEntry",
    "TransformLedger",
    "read_transformed",
    "score_transform",
    "transform_corpus",
    "write_transformed",
]
