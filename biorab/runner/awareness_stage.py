"""The negative-awareness probe stage (paper Testbed 4): is the retrieved example negative, says the model?

For every row of a cell whose retrieval setting `probes` (see `RetrievalSpec.awareness_probe`), the stage
renders `biorab.tasks.render_awareness_probe(example, top hit)`, generates it with the run's backend through
the same `GenerationStage` (same loaded model, same generation store and cache keys, ``max_tokens`` =
`AWARENESS_MAX_TOKENS`) and parses the True/False judgement with the run's parser mode. The probe reads the
instance and its retrieved example only, never the task output, so it may run before or after the task's
parse stage; the row is written once, with the task and the probe columns filled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biorab.generation.base import SamplingParams
from biorab.records import Generation, Prompt
from biorab.runner.plan import CellPlan
from biorab.runner.rows import row_example, row_hits, set_probe
from biorab.runner.stages import GenerationStage

#: Appended to the instance id in the probe prompt's ``example_id``: backends key per-instance behaviour
#: (FakeBackend's ``map`` answers and ``fail_ids``, logs) by it, and the probe is a second prompt. A slash
#: (not ``#``) because such ids can end up in backend params, which MLflow logs as param names; instance
#: ids end in a row number, so ``<id>/awareness`` is never an instance id.
PROBE_ID_SUFFIX = "/awareness"


def probe_prompt_id(example_id: str) -> str:
    """The ``example_id`` of an instance's probe prompt.

    >>> probe_prompt_id("ade/test/3")
    'ade/test/3/awareness'
    """
    return example_id + PROBE_ID_SUFFIX


def probe_sampling(sampling: SamplingParams) -> SamplingParams:
    """The run's sampling params with the probe's token budget (the original generated 10 new tokens)."""
    from biorab.tasks import AWARENESS_MAX_TOKENS

    return sampling.model_copy(update={"max_tokens": AWARENESS_MAX_TOKENS})


def parse_judgement(text: str, mode: str) -> str | None:
    """The probe answer as one of `AWARENESS_LABELS` (``None`` when unparsable), with the run's parser
    mode: ``robust`` accepts ``"True-The retrieved example ..."`` and ``" false."``; ``strict_original``
    only an exact first line (the original's `11_metric_na_rate.py` rule).
    """
    from biorab.parsing import parse
    from biorab.tasks import AWARENESS_LABELS

    pred = parse("classification", text, mode=mode, labels=AWARENESS_LABELS)
    return pred.label if pred.ok and pred.label in AWARENESS_LABELS else None


class ProbeStage:
    """Fills the ``probe_*`` columns of the rows of probing cells; other rows (also rows of cells missing
    from `plans`: the Ray LLM actor gets the probing cells' plans only) pass through unchanged.

    A row without a retrieved example gets no probe (its probe columns stay null; scoring leaves it out of
    both rates). A failed probe generation sets ``probe_gen_error``: the row is not done, and the next run
    retries it (the task generation then comes from the store).
    """

    def __init__(self, plans: Mapping[str, CellPlan], generate: GenerationStage) -> None:
        self.plans = dict(plans)
        self.generate = generate
        self.sampling = probe_sampling(generate.sampling)

    @property
    def active(self) -> bool:
        """Whether any cell of the run probes (the Ray pipeline skips the stage otherwise)."""
        return any(p.retrieval.probes for p in self.plans.values())

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        asked: list[tuple[dict[str, Any], Prompt]] = []
        for row in rows if self.active else ():
            prompt = self._probe_prompt(row)
            if prompt is not None:
                asked.append((row, prompt))
        if not asked:
            return rows
        results = self.generate.generate_prompts([p for _, p in asked], self.sampling)
        for (row, prompt), (gen, key, cached) in zip(asked, results, strict=True):
            judgement = self._judge(row, gen)
            set_probe(row, prompt, gen, key=key, cached=cached, judgement=judgement)
        return rows

    def _probe_prompt(self, row: dict[str, Any]) -> Prompt | None:
        import dataclasses

        from biorab.tasks import render_awareness_probe

        plan = self.plans.get(row["cell_id"])
        if plan is None or not plan.retrieval.probes:
            return None
        hits = row_hits(row)
        if not hits:
            return None
        prompt = render_awareness_probe(row_example(row), hits[0])
        return dataclasses.replace(prompt, example_id=probe_prompt_id(row["id"]))

    def _judge(self, row: dict[str, Any], gen: Generation) -> str | None:
        if gen.error is not None:
            return None
        return parse_judgement(gen.text, self.plans[row["cell_id"]].parser)
