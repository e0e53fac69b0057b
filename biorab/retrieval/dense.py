"""Dense retrieval: an encoder (see `encoders`) + faiss inner-product search.

``index_type: flat`` (default) is exact (`IndexFlatIP`); ``hnsw`` is approximate and only pays off on
corpora far larger than the paper's (see docs/notes/retrieval_libraries.md). Corpus embeddings are cached
under ``cache_dir()/embeddings/<encoder digest>/<texts digest>.npy``, and the faiss index is persisted like
every index (see `base`).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from biorab.common.paths import cache_dir
from biorab.retrieval.base import IndexedRetriever, RetrieverParams, digest_texts
from biorab.retrieval.encoders import EncoderSpec, HFEncoder, Pooling, minilm_path, preset
from biorab.retrieval.ranking import order_candidates

INDEX_FILE = "index.faiss"


class DenseParams(RetrieverParams):
    """Dense retriever params; unset fields take the encoder preset's value.

    Attributes:
        encoder: preset ``minilm`` (default, runs offline), ``contriever`` or ``medcpt``.
        model: one local folder or hub id for both queries and documents.
        query_model, doc_model: separate models (asymmetric encoders such as MedCPT).
        pooling: ``mean`` or ``cls``; normalize: L2-normalise (inner product = cosine).
        max_length: token limit for both sides.
        index_type: ``flat`` (exact) or ``hnsw`` with `hnsw_m`, `ef_construction`, `ef_search`.
        cache_embeddings: reuse corpus embeddings across runs.
        stand_in_for: the encoder preset this one stands in for in a rehearsal (``--rehearse``: MiniLM for
            an encoder that cannot load here); it keeps the cells of two stood-in encoders apart and
            changes no hit (left out of every retriever fingerprint).
    """

    encoder: Literal["minilm", "contriever", "medcpt"] = "minilm"
    model: str | None = None
    query_model: str | None = None
    doc_model: str | None = None
    pooling: Literal["mean", "cls"] | None = None
    normalize: bool | None = None
    max_length: int | None = None
    index_type: Literal["flat", "hnsw"] = "flat"
    hnsw_m: int = 32
    ef_construction: int = 100
    ef_search: int = 128
    batch_size: int = 64
    device: str = "cpu"
    cache_embeddings: bool = True
    stand_in_for: str | None = None


def encoder_specs(params: DenseParams) -> tuple[EncoderSpec, EncoderSpec]:
    """The (query, document) specs: the preset's, with the params' overrides applied."""
    sides = []
    for role in ("query", "doc"):
        default = _preset_side(params, role)
        pooling: Pooling = params.pooling or default.pooling
        normalize = default.normalize if params.normalize is None else params.normalize
        sides.append(EncoderSpec(default.model, pooling, normalize, params.max_length or default.max_length))
    return sides[0], sides[1]


def _preset_side(params: DenseParams, role: str) -> EncoderSpec:
    override = (params.query_model if role == "query" else params.doc_model) or params.model
    if params.encoder == "minilm":  # resolve the packaged folder only when no model is given
        return EncoderSpec(override or minilm_path(), "mean", True, 256)
    spec: EncoderSpec = getattr(preset(params.encoder), role)
    return replace(spec, model=override) if override else spec


#: Encoders loaded in this process, by (spec, device, batch size): a sweep's retrievers over 60 corpora
#: loaded MiniLM and hashed its weights (the digest in every fingerprint) once per retriever: 30 of the
#: 211 s of the paper grid's rehearsal at --limit 2. An encoder is only read after loading, so one copy is
#: shared; a handful of specs per process.
_ENCODERS: dict[tuple[EncoderSpec, str, int], HFEncoder] = {}


def shared_encoder(spec: EncoderSpec, device: str, batch_size: int) -> HFEncoder:
    """The process's `HFEncoder` for `spec` (loaded on first use)."""
    key = (spec, device, batch_size)
    if key not in _ENCODERS:
        _ENCODERS[key] = HFEncoder(spec, device=device, batch_size=batch_size)
    return _ENCODERS[key]


class DenseRetriever(IndexedRetriever):
    """Encoder + faiss exact (or HNSW) inner-product retrieval."""

    name = "dense"
    Params = DenseParams

    @classmethod
    def encoder_params(cls, encoder: str | None, model: str | None) -> dict[str, Any] | None:
        """The encoder preset (``minilm`` when none is given) and the model folder or hub id, if given."""
        return {"encoder": encoder or "minilm", **({"model": model} if model else {})}

    def __init__(self, params: DenseParams | None = None, **context: Any) -> None:
        super().__init__(params, **context)
        self.params: DenseParams
        self._encoders: tuple[HFEncoder, HFEncoder] | None = None
        self._index: Any = None
        self._query_vectors: dict[str, np.ndarray] = {}

    @property
    def encoders(self) -> tuple[HFEncoder, HFEncoder]:
        """The (query, document) encoders, loaded on first use (one shared model when symmetric)."""
        if self._encoders is None:
            query_spec, doc_spec = encoder_specs(self.params)
            device, batch_size = self.params.device, self.params.batch_size
            query = shared_encoder(query_spec, device, batch_size)
            same = doc_spec == query_spec
            doc = query if same else shared_encoder(doc_spec, device, batch_size)
            self._encoders = (query, doc)
        return self._encoders

    def _fingerprint_extra(self) -> dict[str, Any]:
        query, doc = self.encoders
        return {"query_encoder": query.digest, "doc_encoder": doc.digest}

    # faiss loads inside the methods that use it, so `DenseParams` and the registry stay light.
    def _build(self, texts: list[str]) -> None:
        import faiss

        vectors = self.embed_corpus(texts)
        index: Any
        if self.params.index_type == "hnsw":
            index = faiss.IndexHNSWFlat(vectors.shape[1], self.params.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = self.params.ef_construction
        else:
            index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors)
        self._index = index

    def _save(self, folder: Path) -> None:
        import faiss

        faiss.write_index(self._index, str(folder / INDEX_FILE))

    def _load(self, folder: Path) -> None:
        import faiss

        self._index = faiss.read_index(str(folder / INDEX_FILE))

    def _prepare_queries(self, texts: list[str]) -> None:
        self._query_vectors = self.encoders[0].encode_queries(texts)

    def _candidates(self, queries: list[str], m: int) -> list[tuple[np.ndarray, np.ndarray, bool]]:
        if self.params.index_type == "hnsw":
            self._index.hnsw.efSearch = max(self.params.ef_search, m)
        matrix = np.stack([self._query_vectors[q] for q in queries]).astype(np.float32)
        scores, positions = self._index.search(matrix, m)
        out = []
        for row_scores, row_positions in zip(scores, positions, strict=True):
            valid = row_positions >= 0  # HNSW pads with -1 when it finds fewer than m
            ordered = order_candidates(row_scores[valid].astype(np.float64), row_positions[valid])
            out.append((ordered[0], ordered[1], m >= len(self._items)))
        return out

    def embed_corpus(self, texts: list[str]) -> np.ndarray:
        """Document embeddings of `texts` (one row each), read from the embedding cache when present."""
        encoder = self.encoders[1]
        if not self.params.cache_embeddings:
            return encoder.encode(texts)
        root = Path(self._cache_root) if self._cache_root is not None else cache_dir()
        path = root / "embeddings" / encoder.digest / f"{digest_texts(texts)}.npy"
        if path.is_file():
            return np.load(path)
        vectors = encoder.encode(texts)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npy.tmp")
        with os.fdopen(handle, "wb") as stream:
            np.save(stream, vectors)
        os.replace(tmp, path)
        return vectors
