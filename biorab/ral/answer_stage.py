"""The answer stage: render → generate → awareness probe → parse on a batch of rows that carry their hits.

One composition of the batch stages for every executor that runs them in one process: the in-process
executor (`biorab.runner.execution.local`), the cache-only pass on the Ray driver
(`biorab.runner.execution.cached_rows`) and the Ray LLM actor (`pipelines.stages.GenerationActor`), which
renders and parses beside the model instead of in separate tasks (docs/pipeline.md, issue 20 round 6:
the first render task waited for a new worker process while both prestarted workers held the actors).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biorab.ral.assembly import RALParts
from biorab.ral.probe_stage import ProbeStage
from biorab.ral.stage_plan import StagePlan
from biorab.ral.stages import GenerationStage, ParseStage, RenderStage


class AnswerStage:
    """Fills the prompt, ``gen_*``, ``probe_*`` (rows of probing cells) and ``pred_*`` columns.

    The probe reads the instance and its example only, so it runs right after the task generation, on
    the same generator; the parse comes last. The caller owns `generate` (and its backend)."""

    def __init__(self, plans: Mapping[str, StagePlan], parts: Mapping[str, RALParts],
                 generate: GenerationStage) -> None:
        self.render = RenderStage(plans, parts)
        self.generate = generate
        self.probe = ProbeStage(plans, generate)
        self.parse = ParseStage(plans)

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self.parse(self.probe(self.generate(self.render(rows))))
