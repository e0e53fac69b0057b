"""Training on the RAL core: retrieval-augmented instruction sets, awareness triplets, the triplet-loss
encoder and PEFT (LoRA / QLoRA) instruction tuning.

Importing this package loads no torch, peft or mlflow: the trainers import them inside their functions.
The Ray layer (`training/`) plugs into the one seam every trainer takes, ``report(metrics, checkpoint)``.
"""

from __future__ import annotations

from biorab.learn.config import EncoderTrainParams, PeftTrainParams, TrainingSource
from biorab.learn.instruction_set import InstructionSet, build_instruction_set, exclude_self
from biorab.learn.progress_hook import Report, null_report
from biorab.learn.records import InstructionRecord, Triplet, records_digest
from biorab.learn.triplets import TripletSet, build_triplets, item_text

__all__ = [
    "EncoderTrainParams",
    "InstructionRecord",
    "InstructionSet",
    "PeftTrainParams",
    "Report",
    "TrainingSource",
    "Triplet",
    "TripletSet",
    "build_instruction_set",
    "build_triplets",
    "exclude_self",
    "item_text",
    "null_report",
    "records_digest",
]
