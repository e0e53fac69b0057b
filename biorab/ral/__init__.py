"""The RAL core: retrieve → render → generate → parse → awareness probe, on records.

Runs (`biorab.runner`), Ray Data (`pipelines/`), Serve (`serve/`) and training (`biorab.learn`) all answer
through it, assembled by `biorab.ral.assembly` (the one place a retrieval entry becomes a retriever and a
RAL). See docs/architecture.md.
"""

from __future__ import annotations

from biorab.ral.answer import Answer, GenerationResult, ProbeResult, RetrievedHits
from biorab.ral.assembly import (
    IndexMemo,
    RALParts,
    Stores,
    assemble,
    assemble_retriever,
    assemble_template,
    build_ral,
    dataset_labels,
)
from biorab.ral.core import RAL, AnswerOptions, ask_probes, parse_generation, render_prompt
from biorab.ral.generator import CachedGenerator
from biorab.ral.plugins import CorpusHook, HitFilter
from biorab.ral.probe import PROBE_ID_SUFFIX, parse_judgement, probe_prompt, probe_prompt_id, probe_sampling
from biorab.ral.retriever import CachedRetriever, Selection, build_testbed_retriever

__all__ = [
    "PROBE_ID_SUFFIX",
    "RAL",
    "Answer",
    "AnswerOptions",
    "CorpusHook",
    "HitFilter",
    "IndexMemo",
    "RALParts",
    "Stores",
    "assemble",
    "assemble_retriever",
    "assemble_template",
    "CachedGenerator",
    "CachedRetriever",
    "GenerationResult",
    "ProbeResult",
    "RetrievedHits",
    "Selection",
    "ask_probes",
    "build_ral",
    "dataset_labels",
    "build_testbed_retriever",
    "parse_generation",
    "parse_judgement",
    "probe_prompt",
    "probe_prompt_id",
    "probe_sampling",
    "render_prompt",
]
