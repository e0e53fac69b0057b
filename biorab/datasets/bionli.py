"""BioNLI preset of the bring-your-own loader (premise / hypothesis / label, entailment|contradiction).

BioNLI (Bastan et al., 2022; CC BY 4.0) cannot be redistributed here: it is published through Google
Drive (test set on request). Put ``train.jsonl``, ``dev.jsonl`` and ``test.jsonl`` (one JSON object per
line with ``premise``, ``hypothesis`` and ``label``) under ``<data dir>/bionli/``, or give other paths,
field names or label aliases through the params.
"""

from __future__ import annotations

from pathlib import Path

from biorab.common.labels import BIONLI_LABELS
from biorab.common.params import Params
from biorab.common.paths import biorab_data_dir
from biorab.common.registry import DATASETS
from biorab.datasets.byo import ByoDataset, FileFormat, SplitName
from biorab.datasets.byo_tasks import FieldMap

DEFAULT_FILES: dict[SplitName, str] = {
    "train": "bionli/train.jsonl",
    "dev": "bionli/dev.jsonl",
    "test": "bionli/test.jsonl",
}


@DATASETS.register("bionli")
class BioNLIDataset(ByoDataset):
    """BioNLI in its published premise/hypothesis/label format, labels per
    `biorab.common.labels.BIONLI_LABELS`."""

    task = "nli"  # declared on the class as the staged loaders do (`biorab.common.registry.dataset_task`)

    class Params(Params):  # the preset takes fewer options than byo
        files: dict[SplitName, str] | None = None
        format: FileFormat | None = None
        fields: FieldMap = FieldMap()
        label_map: dict[str, str] = {}

    def __init__(
        self, params: BioNLIDataset.Params | None = None, *, data_dir: str | Path | None = None
    ) -> None:
        preset = params or BioNLIDataset.Params()
        byo = ByoDataset.Params(
            name="bionli",
            task=BioNLIDataset.task,
            files=preset.files or DEFAULT_FILES,
            format=preset.format,
            fields=preset.fields,
            labels=BIONLI_LABELS,
            label_map=preset.label_map,
        )
        super().__init__(byo, data_dir=data_dir)
        self._custom_files = preset.files is not None

    @property
    def data_dir(self) -> Path:
        # Given paths behave like byo's; the default layout lives under the BioRAB data root.
        return super().data_dir if self._custom_files else biorab_data_dir(self._data_dir)

    def missing_hint(self) -> str:
        if self._custom_files:
            return super().missing_hint()
        return (
            f"BioNLI is not shipped with BioRAB; put train.jsonl, dev.jsonl and test.jsonl (JSON Lines "
            f"with 'premise', 'hypothesis' and 'label' in {', '.join(BIONLI_LABELS)}) under "
            f"{biorab_data_dir(self._data_dir) / 'bionli'}, or pass params.files"
        )
