"""The fake backend's ``copy_top`` mode reads the top retrieved example's label back from the prompt, for
every template of the catalog that writes examples (the attribution tests' copying model)."""

from __future__ import annotations

import pytest

from biorab.common.records import Example, Hit
from biorab.generation.base import SamplingParams
from biorab.generation.fake import FakeBackend
from biorab.tasks.template import render
from biorab.tasks.template_catalog import get_template, template_datasets, template_variants

FIELDS = {"sentence": "s", "head": "h", "tail": "t", "relation": "r", "question": "q",
          "options": {"A": "a", "B": "b", "C": "c", "D": "d"}, "premise": "p", "hypothesis": "y"}


def _cases() -> list[tuple[str, str]]:
    return [(d, v) for d in template_datasets() for v in template_variants(d)
            if get_template(d, variant=v).max_examples != 0]


def _values(template_labels: tuple[str, ...], task: str) -> tuple[str, str]:
    if task == "triple_extraction":
        relation = template_labels[0] if template_labels else "effect"
        return f"aspirin|{relation}|rash\nibuprofen|{relation}|ulcer", f"x|{relation}|y"
    return template_labels[-1], template_labels[0]


@pytest.mark.parametrize(("dataset", "variant"), _cases())
def test_copy_top_answers_the_top_hit_label(dataset: str, variant: str) -> None:
    template = get_template(dataset, variant=variant)
    if template.task != "triple_extraction" and not template.labels:
        pytest.skip("an open label set without examples to copy")
    top, second = _values(template.labels, template.task)
    example = Example("d/test/0", template.task, dataset, "test", "The query sentence.", top, dict(FIELDS))
    hits = [Hit("d/train/1", 2.0, 0, "A retrieved sentence.", top, dataset),
            Hit("d/train/2", 1.0, 1, "Another retrieved sentence.", second, dataset)]
    prompt = render(template, example, hits)
    backend = FakeBackend(FakeBackend.Params(mode="copy_top"))
    (gen,) = backend.generate([prompt], SamplingParams(max_tokens=64))
    assert gen.text == top


def test_copy_top_without_labeled_examples_falls_back() -> None:
    template = get_template("ade_corpus_v2", variant="default")
    example = Example("d/test/0", "classification", "ade_corpus_v2", "test", "Query.", "1")
    prompt = render(template, example, [Hit("d/train/1", 1.0, 0, "Retrieved.", None, "ade_corpus_v2")])
    backend = FakeBackend(FakeBackend.Params(mode="copy_top", answer="none"))
    assert backend.generate([prompt], SamplingParams(max_tokens=8))[0].text == "none"
