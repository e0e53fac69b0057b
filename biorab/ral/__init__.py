"""The RAL core: retrieve → render → generate → awareness probe → parse, on records and on rows.

- `pipeline`: `Pipeline` and `STAGES`, the one order of the stages; everything that answers runs one.
- `steps`: the five steps on records; `RAL.answer` (`core`) runs them as a pipeline on one call.
- `stages`, `retrieval_stage`, `probe_stage`: the same steps on batches of rows (`rows`: the one row
  schema); `row_pipeline.RowPipeline` builds them into the pipeline (or a segment of it) where it runs:
  the in-process executor (`biorab.runner.executors.local`), the driver's cache pass (`cached_rows`) and
  the Ray layer's actors (`pipelines/stages.py`).
- `assembly`: the one place a declared setting (a `RetrievalSpec`, `retrieval_spec`) becomes a RAL's
  parts (`assemble`; a run's cells: `assemble_cells`), corpus methods included (`method_corpora`); each
  testbed corpus is built once per process (`testbeds`).

Runs (`biorab.runner`), Ray Data (`pipelines/`), Serve (`serve/`) and training (`biorab.learn`) all answer
through it. See docs/architecture.md.
"""

from __future__ import annotations

from biorab.ral.answer import Answer, GenerationResult, ProbeResult, RetrievedHits
from biorab.ral.assembly import (
    IndexMemo,
    RALParts,
    Stores,
    assemble,
    assemble_cells,
    build_ral,
    dataset_labels,
)
from biorab.ral.cached_rows import finish_cached, known_miss
from biorab.ral.core import RAL, AnswerOptions
from biorab.ral.generator import CachedGenerator, run_generator
from biorab.ral.method_corpora import MethodCorpora
from biorab.ral.pipeline import STAGES, Pipeline
from biorab.ral.plugins import CorpusHook, HitFilter
from biorab.ral.probe import PROBE_ID_SUFFIX, parse_judgement, probe_prompt, probe_prompt_id, probe_sampling
from biorab.ral.retrieval_spec import RetrievalSpec
from biorab.ral.retriever import CachedRetriever, Selection, build_testbed_retriever
from biorab.ral.row_pipeline import RowPipeline
from biorab.ral.steps import NO_HITS, ask_probes, generate, parse_generation, render_prompt, retrieve
from biorab.ral.testbeds import testbed_corpus

__all__ = [
    "NO_HITS",
    "PROBE_ID_SUFFIX",
    "RAL",
    "STAGES",
    "Pipeline",
    "RowPipeline",
    "Answer",
    "AnswerOptions",
    "CorpusHook",
    "HitFilter",
    "IndexMemo",
    "MethodCorpora",
    "RALParts",
    "RetrievalSpec",
    "Stores",
    "assemble",
    "assemble_cells",
    "CachedGenerator",
    "CachedRetriever",
    "GenerationResult",
    "ProbeResult",
    "RetrievedHits",
    "Selection",
    "ask_probes",
    "build_ral",
    "dataset_labels",
    "finish_cached",
    "known_miss",
    "run_generator",
    "generate",
    "build_testbed_retriever",
    "parse_generation",
    "parse_judgement",
    "probe_prompt",
    "probe_prompt_id",
    "probe_sampling",
    "render_prompt",
    "retrieve",
    "testbed_corpus",
]
