"""The negative-awareness probe as the RAL core asks it: the prompt, its token budget, and its judgement."""

from __future__ import annotations

import dataclasses

from biorab.common.records import Example, Hit, Prompt
from biorab.generation.base import SamplingParams

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


def probe_prompt(example: Example, hits: tuple[Hit, ...] | list[Hit]) -> Prompt | None:
    """The probe about the top retrieved example (``None`` when nothing was retrieved: no probe)."""
    from biorab.tasks import render_awareness_probe

    if not hits:
        return None
    prompt = render_awareness_probe(example, hits[0])
    return dataclasses.replace(prompt, example_id=probe_prompt_id(example.id))


def parse_judgement(text: str, mode: str) -> str | None:
    """The probe answer as one of `AWARENESS_LABELS` (``None`` when unparsable), with the run's parser
    mode: ``robust`` accepts ``"True-The retrieved example ..."`` and ``" false."``; ``strict_original``
    only an exact first line (the original's `11_metric_na_rate.py` rule).
    """
    from biorab.tasks import AWARENESS_LABELS, parse

    pred = parse("classification", text, mode=mode, labels=AWARENESS_LABELS)
    return pred.label if pred.ok and pred.label in AWARENESS_LABELS else None
