"""Hetionet link prediction over BioRAB's 15 relation verbs: 4,000 train / 500 test, no dev split.

Train is the authors' ``link_predcition_hetionet_train.json``; test is ``test.derived.json`` (the
``context``/``response`` of the authors' no-example test prompts). No dev split was ever published.
"""

from __future__ import annotations

from biorab.common.labels import HETIONET_LABELS
from biorab.common.registry import DATASETS
from biorab.datasets.linkprediction import LinkPredictionDataset


@DATASETS.register("hetionet")
class HetionetDataset(LinkPredictionDataset):
    """Hetionet (participates, expresses, regulates, ...)."""

    name = "hetionet"
    labels = HETIONET_LABELS
    files = {
        "train": "hetionet/link_predcition_hetionet_train.json",
        "test": "hetionet/test.derived.json",
    }
