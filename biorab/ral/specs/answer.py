"""The records the RAL core returns: what one instance's retrieval, generation, probe and answer produced."""

from __future__ import annotations

from dataclasses import dataclass

from biorab.common.records import Generation, Hit, Prediction, Prompt


@dataclass(frozen=True)
class RetrievedHits:
    """One query's selected hits (best first) and whether they came from the hit cache."""

    hits: tuple[Hit, ...]
    cached: bool = False


@dataclass(frozen=True)
class GenerationResult:
    """One prompt's generation, its content key in the generation cache, and whether it came from there."""

    generation: Generation
    key: str
    cached: bool = False


@dataclass(frozen=True)
class ProbeResult:
    """The negative-awareness probe about an instance's top retrieved example.

    ``judgement`` is one of `biorab.tasks.AWARENESS_LABELS` (``"False"``: the model says the example is
    negative), or ``None`` when the answer was unparsable or the generation failed."""

    prompt: Prompt
    result: GenerationResult
    judgement: str | None


@dataclass(frozen=True)
class Answer:
    """Everything the RAL did for one instance, in the order it did it."""

    example_id: str
    retrieved: RetrievedHits
    prompt: Prompt
    result: GenerationResult
    prediction: Prediction
    probe: ProbeResult | None = None

    @property
    def hits(self) -> tuple[Hit, ...]:
        return self.retrieved.hits

    @property
    def generation(self) -> Generation:
        return self.result.generation
