"""`RAL`: one retrieval-augmented answer, on records, with no cells, rows, stores or Ray.

    example ─▶ retrieve (optional) ─▶ render ─▶ generate ─▶ awareness probe (optional) ─▶ parse ─▶ Answer

`RAL.answer` runs a `biorab.ral.specs.pipeline.Pipeline` of the steps of `biorab.ral.parts.steps` on records,
in the
pipeline's one stage order, as the batch stages on rows do (`biorab.ral.specs.pipeline.RowPipeline`), so an
answer served, an answer evaluated and a training prompt cannot disagree. Caching is a property of the
`CachedRetriever` and `CachedGenerator` it is given, not of the core.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from biorab.common.records import Example, Generation, Hit, Prediction, Prompt
from biorab.generation.base import SamplingParams
from biorab.ral.parts import steps
from biorab.ral.parts.generator import CachedGenerator
from biorab.ral.parts.retriever import CachedRetriever
from biorab.ral.specs.answer import Answer, GenerationResult, ProbeResult, RetrievedHits
from biorab.ral.specs.pipeline import Pipeline
from biorab.tasks.template import Template


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


@dataclass
class _Call:
    """One `RAL.answer` call as it goes through the pipeline: its inputs, then each stage's output."""

    examples: Sequence[Example]
    options: AnswerOptions
    template: Template
    sampling: SamplingParams
    retrieved: list[RetrievedHits] = dataclasses.field(default_factory=list)
    prompts: list[Prompt] = dataclasses.field(default_factory=list)
    results: list[GenerationResult] = dataclasses.field(default_factory=list)
    probes: list[ProbeResult | None] = dataclasses.field(default_factory=list)
    predictions: list[Prediction] = dataclasses.field(default_factory=list)


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
        template: Template,
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
        self.pipeline: Pipeline[_Call] = Pipeline({
            "retrieve": self._retrieve_stage, "render": self._render_stage, "generate": self._generate_stage,
            "probe": self._probe_stage, "parse": self._parse_stage})

    def retrieve(self, examples: Sequence[Example], k: int | None = None) -> list[RetrievedHits]:
        found = steps.retrieve(self.retriever, {ex.id: ex.text for ex in examples}, k)
        return [found[ex.id] for ex in examples]

    def render(self, example: Example, hits: Sequence[Hit], template: Template | None = None) -> Prompt:
        return steps.render_prompt(template or self.template, example, hits)

    def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams | None = None
                 ) -> list[GenerationResult]:
        return steps.generate(self.generator, prompts, sampling or self.sampling)

    def parse(self, generation: Generation, labels: Sequence[str] | None = None) -> Prediction:
        return steps.parse_generation(self.task, generation, mode=self.parser,
                                      labels=self.labels if labels is None else tuple(labels))

    def probe(
        self, examples: Sequence[Example], retrieved: Sequence[RetrievedHits],
        sampling: SamplingParams | None = None,
    ) -> list[ProbeResult | None]:
        """The awareness probe per instance (``None``: the RAL does not probe, or nothing was retrieved)."""
        return steps.ask_probes(self.generator, examples, [r.hits for r in retrieved],
                                sampling=sampling or self.sampling, parser=self.parser, enabled=self.probes)

    def answer(self, examples: Sequence[Example], options: AnswerOptions | None = None) -> list[Answer]:
        """Answer a batch: one `Answer` per example, in order (`options`: this call's k, label space or
        sampling instead of the RAL's)."""
        opts = options or AnswerOptions()
        template = self.template if opts.labels is None else dataclasses.replace(
            self.template, labels=tuple(opts.labels))
        call = self.pipeline(_Call(examples, opts, template, opts.sampling or self.sampling))
        return [Answer(ex.id, r, p, g, pred, pr) for ex, r, p, g, pred, pr in zip(
            examples, call.retrieved, call.prompts, call.results, call.predictions, call.probes, strict=True)]

    # The pipeline's stages on one call: each fills its field of `_Call`.
    def _retrieve_stage(self, call: _Call) -> _Call:
        call.retrieved = self.retrieve(call.examples, call.options.k)
        return call

    def _render_stage(self, call: _Call) -> _Call:
        call.prompts = [self.render(ex, r.hits, call.template)
                        for ex, r in zip(call.examples, call.retrieved, strict=True)]
        return call

    def _generate_stage(self, call: _Call) -> _Call:
        call.results = self.generate(call.prompts, call.sampling)
        return call

    def _probe_stage(self, call: _Call) -> _Call:
        call.probes = self.probe(call.examples, call.retrieved, call.sampling)
        return call

    def _parse_stage(self, call: _Call) -> _Call:
        call.predictions = [self.parse(g.generation, call.options.labels) for g in call.results]
        return call

    def answer_one(self, example: Example, options: AnswerOptions | None = None) -> Answer:
        return self.answer([example], options)[0]

    def close(self) -> None:
        self.generator.close()

