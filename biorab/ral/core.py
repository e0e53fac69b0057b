"""The RAL core: one retrieval-augmented answer, on records, with no cells, rows, stores or Ray.

    example ─▶ retrieve (optional) ─▶ render ─▶ generate ─▶ parse ─▶ awareness probe (optional) ─▶ Answer

The runner's stages, the Ray Data UDFs, the Serve app and the training-set builders all call these same
steps, so an answer served, an answer evaluated and a training prompt cannot disagree. Caching is a
property of the `CachedRetriever` and `CachedGenerator` it is given, not of the core.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from biorab.generation.base import SamplingParams
from biorab.ral.answer import Answer, GenerationResult, ProbeResult, RetrievedHits
from biorab.ral.generator import CachedGenerator
from biorab.ral.probe import parse_judgement, probe_prompt, probe_sampling
from biorab.ral.retriever import CachedRetriever
from biorab.records import Example, Generation, Hit, Prediction, Prompt

NO_HITS = RetrievedHits(())


@dataclass(frozen=True)
class AnswerOptions:
    """What one call may ask of a RAL besides its own settings (Serve's per-request fields).

    Attributes:
        k: retrieved examples per prompt (``None``: the retriever's selection).
        labels: the label space of this call, for the template and the parser (``None``: the RAL's).
        sampling: decoding parameters of this call (``None``: the RAL's).
    """

    k: int | None = None
    labels: tuple[str, ...] | None = None
    sampling: SamplingParams | None = None


def render_prompt(template: Any, example: Example, hits: Sequence[Hit]) -> Prompt:
    """The prompt of `example` with its retrieved `hits` (best first), rendered by `biorab.tasks.render`."""
    from biorab.tasks import render

    return render(template, example, hits)


def parse_generation(task: str, generation: Generation, *, mode: str,
                     labels: Sequence[str] | None) -> Prediction:
    """The prediction of one generation: a failed generation is a failed prediction; label log-probs, when
    the backend gave them and the parser found no scores, become the prediction's scores."""
    from biorab.parsing import parse

    if generation.error is not None:
        return Prediction(label=None, raw="", ok=False)
    pred = parse(task, generation.text, mode=mode, labels=labels)
    if pred.scores is None and generation.label_logprobs:
        pred = dataclasses.replace(pred, scores=dict(generation.label_logprobs))
    return pred


class RAL:
    """A retrieval-augmented LLM for one task and template.

    Args:
        template: the prompt template (`biorab.tasks.get_template`); its task is the RAL's task.
        generator: the backend behind its generation cache.
        sampling: decoding parameters of the task generation.
        retriever: where retrieved examples come from (``None``: zero-shot prompts).
        parser: ``robust`` or ``strict_original``.
        labels: the closed label set the parser canonicalises to (relations for triples).
        probe: also ask the negative-awareness probe about the top retrieved example.
    """

    def __init__(
        self,
        *,
        template: Any,
        generator: CachedGenerator,
        sampling: SamplingParams,
        retriever: CachedRetriever | None = None,
        parser: str = "robust",
        labels: Sequence[str] | None = None,
        probe: bool = False,
    ) -> None:
        self.template = template
        self.task: str = template.task
        self.generator = generator
        self.sampling = sampling
        self.retriever = retriever
        self.parser = parser
        self.labels = tuple(labels) if labels is not None else None
        self.probes = probe and retriever is not None

    def retrieve(self, examples: Sequence[Example], k: int | None = None) -> list[RetrievedHits]:
        if self.retriever is None:
            return [NO_HITS for _ in examples]
        queries = {ex.id: ex.text for ex in examples}
        found = self.retriever.search(queries) if k is None else self.retriever.search(queries, k)
        return [found[ex.id] for ex in examples]

    def render(self, example: Example, hits: Sequence[Hit], template: Any = None) -> Prompt:
        return render_prompt(template or self.template, example, hits)

    def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams | None = None
                 ) -> list[GenerationResult]:
        return self.generator.generate(prompts, sampling or self.sampling)

    def parse(self, generation: Generation, labels: Sequence[str] | None = None) -> Prediction:
        return parse_generation(self.task, generation, mode=self.parser,
                                labels=self.labels if labels is None else tuple(labels))

    def probe(
        self, examples: Sequence[Example], retrieved: Sequence[RetrievedHits],
        sampling: SamplingParams | None = None,
    ) -> list[ProbeResult | None]:
        """The awareness probe per instance (``None``: the RAL does not probe, or nothing was retrieved)."""
        return ask_probes(self.generator, examples, [r.hits for r in retrieved],
                          sampling=sampling or self.sampling, parser=self.parser, enabled=self.probes)

    def answer(self, examples: Sequence[Example], options: AnswerOptions | None = None) -> list[Answer]:
        """Answer a batch: one `Answer` per example, in order (`options`: this call's k, label space or
        sampling instead of the RAL's)."""
        opts = options or AnswerOptions()
        template = self.template if opts.labels is None else dataclasses.replace(
            self.template, labels=tuple(opts.labels))
        sampling = opts.sampling or self.sampling
        retrieved = self.retrieve(examples, opts.k)
        prompts = [self.render(ex, r.hits, template) for ex, r in zip(examples, retrieved, strict=True)]
        results = self.generate(prompts, sampling)
        probes = self.probe(examples, retrieved, sampling)
        return [Answer(ex.id, r, p, g, self.parse(g.generation, opts.labels), pr)
                for ex, r, p, g, pr in zip(examples, retrieved, prompts, results, probes, strict=True)]

    def answer_one(self, example: Example, options: AnswerOptions | None = None) -> Answer:
        return self.answer([example], options)[0]

    def close(self) -> None:
        self.generator.close()


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
    results = iter(generator.generate(asked, probe_sampling(sampling)))
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
