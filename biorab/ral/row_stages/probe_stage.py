"""The negative-awareness probe stage (paper Testbed 4): is the retrieved example negative, says the model?

For every row of a cell whose retrieval setting `probes` (see `RetrievalSpec.awareness_probe`), the stage
asks the RAL core's probe (`biorab.ral.parts.steps.ask_probes`) with the run's loaded model, generation store
and
cache keys (``max_tokens`` = `AWARENESS_MAX_TOKENS`) and the run's parser mode. The probe reads the
instance and its retrieved example only, never the task output, so it may run before or after the task's
parse stage; the row is written once, with the task and the probe columns filled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biorab.ral.parts.steps import ask_probes
from biorab.ral.row_stages.stages import GenerationStage
from biorab.ral.specs.probe import probe_sampling
from biorab.ral.specs.rows import row_example, row_hits, set_probe
from biorab.ral.specs.stage_plan import StagePlan


class ProbeStage:
    """Fills the ``probe_*`` columns of the rows of probing cells; other rows (also rows of cells missing
    from `plans`) pass through unchanged.

    A row without a retrieved example gets no probe (its probe columns stay null; scoring leaves it out of
    both rates). A failed probe generation sets ``probe_gen_error``: the row is not done, and the next run
    retries it (the task generation then comes from the store).
    """

    def __init__(self, plans: Mapping[str, StagePlan], generate: GenerationStage) -> None:
        self.plans = dict(plans)
        self.generate = generate
        self.sampling = probe_sampling(generate.sampling)

    @property
    def active(self) -> bool:
        """Whether any cell of the run probes (the Ray pipeline skips the stage otherwise)."""
        return any(p.probes for p in self.plans.values())

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not self.active:
            return rows
        by_parser: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            plan = self.plans.get(row["cell_id"])
            if plan is not None and plan.probes:
                by_parser.setdefault(plan.parser, []).append(row)
        for parser, group in by_parser.items():
            probes = ask_probes(self.generate.generator, [row_example(r) for r in group],
                                [row_hits(r) for r in group], sampling=self.generate.sampling, parser=parser)
            for row, probe in zip(group, probes, strict=True):
                if probe is not None:
                    set_probe(row, probe.prompt, probe.result.generation, key=probe.result.key,
                              cached=probe.result.cached, judgement=probe.judgement)
        return rows
