"""PharmKG link prediction over 4 coarse labels: 4,000 train / 500 dev / 500 test.

Train is the authors' ``link_predcition_pharmkg_train_4000.json``. The authors' dev and test files were
never published: dev and test are the staged **reconstructions** ``pharmkg/reconstructed/{dev,test}_500.json``
(typed PharmKG-8k pairs, see the data README). Their extra ``pharmkg_relation`` / ``pharmkg_file`` fields
are not copied into `Example.fields`: the fine relation code determines the gold label.
"""

from __future__ import annotations

from biorab.common.labels import PHARMKG_LABELS
from biorab.common.registry import DATASETS
from biorab.datasets.linkprediction import LinkPredictionDataset


@DATASETS.register("pharmkg")
class PharmKGDataset(LinkPredictionDataset):
    """PharmKG (Interactions, Disease-Gene, Disease-Chemical, Chemical-Gene)."""

    name = "pharmkg"
    labels = PHARMKG_LABELS
    files = {
        "train": "pharmkg/link_predcition_pharmkg_train_4000.json",
        "dev": "pharmkg/reconstructed/dev_500.json",
        "test": "pharmkg/reconstructed/test_500.json",
    }
