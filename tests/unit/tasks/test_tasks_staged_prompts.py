"""Every prompt of the staged original prompt files is reproduced byte for byte.

The instance comes from our loader (`biorab.datasets.load_dataset`); the retrieved example is read from
the staged instruction, looked up in the training data (so it is a real corpus item, with our loader's
key form) and rendered by our template. The expected text is the original's inference wrapper around the
staged (instruction, context) pair.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from biorab.common.records import Example, Hit
from biorab.datasets import load_dataset
from biorab.tasks import get_template, inference_prompt, render


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _hit(example: Example, rank: int = 0) -> Hit:
    return Hit(doc_id=example.id, score=1.0, rank=rank, key=example.text, value=example.label,
               dataset=example.dataset)


def _assert_all_equal(rows: list[dict[str, str]], rendered: list[str]) -> None:
    assert len(rendered) == len(rows)
    wrong = [i for i, (row, text) in enumerate(zip(rows, rendered, strict=True))
             if text != inference_prompt(row["instruction"], row["context"])]
    assert wrong == [], f"{len(wrong)} prompts differ, first at row {wrong[:1]}"


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
@pytest.mark.parametrize("dataset", ["ade", "git"])
def test_triple_containers_reproduced(data_dir: Path, dataset: str) -> None:
    rows = _rows(data_dir / dataset / "test_instruction_container.json")
    train = {(e.text, e.label): e for e in load_dataset(dataset, "train", data_dir=data_dir)}
    tests = load_dataset(dataset, "test", data_dir=data_dir)
    template = get_template(dataset)
    rendered = []
    for row, example in zip(rows, tests, strict=True):
        # " Excample: " before the first example, " Excample:" between tied examples (10 ADE rows).
        shown = row["instruction"].split(" Excample: ", 1)[1].split(" Excample:")
        hits = []
        for rank, item in enumerate(shown):
            key, value = item.removeprefix("context: ").rsplit("response: ", 1)
            hits.append(_hit(train[(key, value)], rank))
        rendered.append(render(template, example, hits).text)
    _assert_all_equal(rows, rendered)
    assert sum(row["instruction"].count("Excample") == 2 for row in rows) == (10 if dataset == "ade" else 0)


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
@pytest.mark.parametrize(
    ("variant", "intro"),
    [("bm25", " Example: "), ("random", " Example: "), ("contriever", " Examples: "),
     ("instructor", " Examples: "), ("default", " Examples: "), ("noexample", None)],
)
def test_hetionet_prompt_files_reproduced(data_dir: Path, variant: str, intro: str | None) -> None:
    name = "contriever" if variant == "default" else variant
    rows = _rows(data_dir / "hetionet" / "prompts" / f"hetionet5k_lp_test_instruction_{name}.json")
    train = {(e.text, e.label): e for e in load_dataset("hetionet", "train", data_dir=data_dir)}
    tests = {e.text: e for e in load_dataset("hetionet", "test", data_dir=data_dir)}
    rendered = []
    for row in rows:
        instruction = row["instruction"]
        # The relation order came from a Python set and differs per file: pass it as the label set.
        start = instruction.index("must be in (") + len("must be in ")
        labels = ast.literal_eval(instruction[start : instruction.index(")", start) + 1])
        hits = []
        if intro is not None:
            key, value = instruction.split(intro, 1)[1].removeprefix("Context: ").rsplit(" Response: ", 1)
            hits = [_hit(train[(key, value)])]
        template = get_template("hetionet", variant=variant, labels=labels)
        rendered.append(render(template, tests[row["context"]], hits).text)
    _assert_all_equal(rows, rendered)


def _ade_full_train(data_dir: Path) -> dict[tuple[str, str], Hit]:
    # The original classification prompts retrieved from the 18,812-row full train split.
    rows = _rows(data_dir / "ade_corpus_v2" / "full_split" / "ade_corpus_v2_train.json")
    return {(r["text"], str(r["label"])): Hit(f"full/{i}", 1.0, 0, r["text"], str(r["label"]))
            for i, r in enumerate(rows)}


def _ade_examples(data_dir: Path) -> list[Example]:
    # The prompt files cover rows 0-999 of the full test split = our test (0-499) then dev (500-999).
    return load_dataset("ade_corpus_v2", "test", data_dir=data_dir) + load_dataset(
        "ade_corpus_v2", "dev", data_dir=data_dir
    )


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_ade_corpus_v2_bm25_three_examples_reproduced(data_dir: Path) -> None:
    rows = _rows(data_dir / "ade_corpus_v2" / "prompts" / "ade_corpus_v2_test_bm25.jsonl")
    full = _ade_full_train(data_dir)
    template = get_template("ade_corpus_v2", variant="bm25")
    assert template.k == 3
    rendered = []
    for row, example in zip(rows, _ade_examples(data_dir), strict=True):
        shown = row["instruction"].split("otherwise 0.Example: ", 1)[1].split("\nExample: ")
        keys = [item.removeprefix("Context: The sentence ").rsplit(" has label ", 1) for item in shown]
        rendered.append(render(template, example, [full[(k, v)] for k, v in keys]).text)
    _assert_all_equal(rows, rendered)


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_ade_corpus_v2_contriever_reproduced(data_dir: Path) -> None:
    rows = _rows(data_dir / "ade_corpus_v2" / "prompts" / "contriever_ade_test_instruction_container.json")
    full = _ade_full_train(data_dir)
    template = get_template("ade_corpus_v2")
    suffix = " Is the adverse drug event mentioned in the text? response: "
    rendered = []
    for row, example in zip(rows, _ade_examples(data_dir), strict=True):
        shown = row["instruction"].split("otherwise 0. Example: ", 1)[1]
        key, value = shown.removeprefix("context: ").rsplit(suffix, 1)
        rendered.append(render(template, example, [full[(key, value)]]).text)
    _assert_all_equal(rows, rendered)


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_semclass_bm25_reproduced_from_uniform_keys(data_dir: Path) -> None:
    rows = _rows(data_dir / "semclass" / "prompts" / "sentence_triple_test_bm25.jsonl")
    train = load_dataset("semclass", "train", data_dir=data_dir)
    # Our keys are "if the triple h|r|t is belong to sentence s"; the template rewrites them.
    by_prompt_form = {
        (f"in sentence {e.fields['sentence']} the relationship between {e.fields['head']} and "
         f"{e.fields['tail']} has relation {e.fields['relation']}", e.label): e
        for e in train
    }
    assert train[0].text.startswith("if the triple ")
    template = get_template("semclass")
    rendered = []
    for row, example in zip(rows, load_dataset("semclass", "test", data_dir=data_dir), strict=True):
        shown = row["instruction"].split("otherwise 'n'.Example: ", 1)[1].split("\nExample: ")
        keys = [item.removeprefix("Context: ").rsplit(" is labeled as ", 1) for item in shown]
        hits = [_hit(by_prompt_form[(k, v)], rank) for rank, (k, v) in enumerate(keys)]
        rendered.append(render(template, example, hits).text)
    _assert_all_equal(rows, rendered)


def test_first_ade_prompt_pinned(data_dir: Path) -> None:
    example = load_dataset("ade", "test", data_dir=data_dir)[0]
    hit = Hit("ade/train/x", 1.0, 0, "Hepatotoxic effects in a child receiving valproate and carnitine.",
              "valproate|effect|Hepatotoxic effects")
    text = render(get_template("ade"), example, [hit]).text
    assert text.endswith(
        "response Format: head entity|relation|tail entity. Excample: context: Hepatotoxic effects in a "
        "child receiving valproate and carnitine.response: valproate|effect|Hepatotoxic effects\n\n"
        "### Input: \n"
        "Hepatotoxic effects in a child receiving valproate and carnitine.\n\n### Response: \n"
    )
    assert text.startswith(
        "Below is an instruction that describes a task, paired with an input that provides further "
        "context.\n\n### Instruction: \nplease extract the triplet from this sentence, the triplet is [head "
    )
