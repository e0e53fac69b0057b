"""The five steps of a retrieval-augmented answer, on records: retrieve, render, generate, probe, parse.

    queries ─▶ retrieve ─▶ render ─▶ generate ─▶ probe (optional) ─▶ parse ─▶ predictions

`RAL.answer` (one call: Serve's ingress, `bench/`) and the batch stages on rows
(`biorab.ral.row_stages.stages`,
`retrieval_stage`, `probe_stage`: the in-process executor calls them, the Ray layer wraps them) are both
made of these functions and nothing else, so a served answer and a run's row cannot be computed by two
pieces of code. Caching is the `CachedRetriever`'s and the `CachedGenerator`'s, not a step's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from biorab.common.records import Example, Generation, Hit, Prediction, Prompt
from biorab.generation.base import SamplingParams
from biorab.ral.parts.generator import CachedGenerator
from biorab.ral.parts.retriever import CachedRetriever
from biorab.ral.specs.answer import GenerationResult, ProbeResult, RetrievedHits
from biorab.ral.specs.probe import parse_judgement, probe_prompt, probe_sampling

#: What a query gets without a retriever (zero-shot).
NO_HITS = RetrievedHits(())


def retrieve(retriever: CachedRetriever | None, queries: Mapping[str, str],
             k: int | None = None) -> dict[str, RetrievedHits]:
    """Query id → its selected hits, best first (`k`: another number of hits than the selection's;
    no retriever: no hits)."""
    if retriever is None:
        return {qid: NO_HITS for qid in queries}
    return retriever.search(queries) if k is None else retriever.search(queries, k)


def render_prompt(template: Any, example: Example, hits: Sequence[Hit]) -> Prompt:
    """The prompt of `example` with its retrieved `hits` (best first), rendered by `biorab.tasks.render`."""
    from biorab.tasks import render

    return render(template, example, hits)


def generate(generator: CachedGenerator, prompts: Sequence[Prompt],
             sampling: SamplingParams) -> list[GenerationResult]:
    """One generation per prompt, in order, through the generation cache."""
    return generator.generate(prompts, sampling)


def ask_probes(
    generator: CachedGenerator,
    examples: Sequence[Example],
    hits: Sequence[Sequence[Hit]],
    *,
    sampling: SamplingParams,
    parser: str,
    enabled: bool = True,
) -> list[ProbeResult | None]:
    """Ask the awareness probe about each instance's top hit, in one generation call (no hits: no probe)."""
    prompts = [probe_prompt(ex, list(h)) if enabled else None for ex, h in zip(examples, hits, strict=True)]
    asked = [p for p in prompts if p is not None]
    if not asked:
        return [None for _ in examples]
    results = iter(generate(generator, asked, probe_sampling(sampling)))
    out: list[ProbeResult | None] = []
    for prompt in prompts:
        if prompt is None:
            out.append(None)
            continue
        res = next(results)
        gen = res.generation
        judgement = None if gen.error is not None else parse_judgement(gen.text, parser)
        out.append(ProbeResult(prompt, res, judgement))
    return out


def parse_generation(task: str, generation: Generation, *, mode: str,
                     labels: Sequence[str] | None) -> Prediction:
    """The prediction of one generation: a failed generation is a failed prediction; label log-probs, when
    the backend gave them and the parser found no scores, become the prediction's scores."""
    from biorab.tasks import parse

    if generation.error is not None:
        return Prediction(label=None, raw="", ok=False)
    pred = parse(task, generation.text, mode=mode, labels=labels)
    if pred.scores is None and generation.label_logprobs:
        pred = dataclasses.replace(pred, scores=dict(generation.label_logprobs))
    return pred
