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

from biorab.ral.parts.assembly import (
    IndexMemo,
    RALParts,
    Stores,
    assemble,
    assemble_cells,
    build_ral,
    dataset_labels,
)
from biorab.ral.parts.core import RAL, AnswerOptions
from biorab.ral.parts.generator import CachedGenerator, run_generator
from biorab.ral.parts.method_corpora import MethodCorpora
from biorab.ral.parts.plugins import CorpusHook, HitFilter
from biorab.ral.parts.retriever import CachedRetriever, Selection, build_testbed_retriever
from biorab.ral.parts.steps import NO_HITS, ask_probes, generate, parse_generation, render_prompt, retrieve
from biorab.ral.parts.testbeds import testbed_corpus
from biorab.ral.row_stages.cached_rows import finish_cached, known_miss
from biorab.ral.row_stages.row_pipeline import RowPipeline
from biorab.ral.specs.answer import Answer, GenerationResult, ProbeResult, RetrievedHits
from biorab.ral.specs.pipeline import STAGES, Pipeline
from biorab.ral.specs.probe import (
    PROBE_ID_SUFFIX,
    parse_judgement,
    probe_prompt,
    probe_prompt_id,
    probe_sampling,
)
from biorab.ral.specs.retrieval_spec import RetrievalSpec

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
