"""The records training consumes: one instruction-tuning text, one awareness triplet."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class InstructionRecord:
    """One retrieval-augmented fine-tuning text, split where the loss starts.

    Attributes:
        example_id: the training instance.
        prompt: the training wrapper with instruction, retrieved examples and input (no loss on it).
        target: the gold response (the loss is taken on these tokens only).
        hit_ids: the corpus items rendered into the prompt (never the instance itself).
    """

    example_id: str
    prompt: str
    target: str
    hit_ids: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return self.prompt + self.target


@dataclass(frozen=True)
class Triplet:
    """Anchor x, a positive instance (helps answer x) and a negative one (does not), as texts.

    Attributes:
        example_id: the instance x comes from.
        negative_kind: ``random`` (a random corpus item) or ``corrupted`` (the counterfactual ledger
            marks it).
    """

    example_id: str
    anchor: str
    positive: str
    negative: str
    negative_kind: str = "random"


def records_digest(records: Sequence[Any]) -> str:
    """sha256 of the records' canonical JSON (logged with a trained model as its data digest)."""
    digest = hashlib.sha256()
    for record in records:
        row = json.dumps(asdict(record), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest.update(row.encode("utf-8") + b"\n")
    return digest.hexdigest()
