"""When two texts are the same item: compared after lower-casing and collapsing whitespace.

The corpora own it because the leakage audit (`biorab.corpora.leakage`) asks it of corpus items; the
retrieval selection (`biorab.retrieval.own_text`) and the training holdout (`biorab.learn.holdout`) ask
the same question of hits and instances, one layer up.
"""

from __future__ import annotations


def normalized_text(text: str) -> str:
    """`text` lower-cased, with runs of whitespace collapsed to one space and the ends stripped.

    >>> normalized_text("  Aspirin\\tcaused  RASH. ")
    'aspirin caused rash.'
    """
    return " ".join(text.lower().split())
