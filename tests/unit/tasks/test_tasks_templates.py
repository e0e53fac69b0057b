"""Templates: wording, variants, unlabeled hits, label sets, constraints, targets and errors."""

from __future__ import annotations

import re
from dataclasses import FrozenInstanceError, replace

import pytest

from biorab.common.errors import DataError, UnknownNameError
from biorab.common.labels import ADE_RELATIONS, GIT_RELATIONS, HETIONET_LABELS
from biorab.common.records import Example, Hit
from biorab.common.registry import TASKS, dataset_task
from biorab.tasks import (
    COMMON_VARIANTS,
    get_task,
    get_template,
    inference_prompt,
    render,
    render_training,
    template_datasets,
    template_variants,
)

ADE_EXAMPLE = Example("ade/test/5", "triple_extraction", "ade", "test", "Aspirin caused a rash.",
                      "Aspirin|effect|rash", {"sentence": "Aspirin caused a rash."})


def _hit(key: str, value: str | None, rank: int = 0) -> Hit:
    return Hit(doc_id=f"d{rank}", score=1.0 - rank / 10, rank=rank, key=key, value=value)


def _instruction(prompt_text: str) -> str:
    return prompt_text.split("### Instruction: \n", 1)[1].split("\n\n### Input: \n", 1)[0]


#: The task of each dataset with its own templates (pinned here; the loaders and templates must agree).
DATASET_TASKS = {
    "ade": "triple_extraction", "chemprot": "triple_extraction", "git": "triple_extraction",
    "pharmkg": "link_prediction", "hetionet": "link_prediction", "ade_corpus_v2": "classification",
    "semclass": "classification", "medmcqa": "qa", "bionli": "nli",
}  # fmt: skip


def test_tasks_registry_has_the_papers_five_tasks() -> None:
    # the paper's five; a bring-your-own task adds its own line
    assert {"triple_extraction", "link_prediction", "classification", "qa", "nli"} <= set(TASKS.names())
    assert get_task("qa").name == "qa"
    with pytest.raises(UnknownNameError, match="did you mean|Did you mean"):
        get_task("clasification")


def test_every_dataset_has_the_common_variants() -> None:
    assert set(template_datasets()) == {*DATASET_TASKS}
    for dataset, task in DATASET_TASKS.items():
        assert dataset_task(dataset) == task  # the loader declares the same task
        assert set(COMMON_VARIANTS) <= set(template_variants(dataset))
        for variant in template_variants(dataset):
            template = get_template(dataset, variant=variant)
            assert (template.dataset, template.task, template.variant) == (dataset, task, variant)


def test_template_is_frozen() -> None:
    template = get_template("ade")
    with pytest.raises(FrozenInstanceError):
        template.instruction = "x"  # type: ignore[misc]


def test_unlabeled_hits_use_the_retrieved_sentence_form() -> None:
    # 2_get_test_instruction.py: instruction_ade.txt + " retrieved sentence: " + " ".join("context: " + text)
    prompt = render(get_template("ade"), ADE_EXAMPLE, [_hit("A.", None), _hit("B.", None, 1)])
    assert _instruction(prompt.text) == (
        "Please extract the triplet from this sentence, the triplet is [head entity, relation, tail entity], "
        "the element relation denotes the relationship between head entity and tail entity, I will provide "
        "you the definition of the triplet you need to extract, the sentence from where your extract the "
        "triplets (head entity, relation, tail_entity) and the output format with examples. the relation "
        "must in my predefined relation set: ('effect', 'dosage'). response Format: head "
        "entity|relation|tail entity. The following retrieved sentence may be helpful or not. retrieved "
        "sentence: context: A. context: B."
    )


def test_git_unlabeled_instruction_has_no_space_before_the_sentence() -> None:
    prompt = render(get_template("git"), ADE_EXAMPLE, [_hit("A.", None)])
    assert "tail entity.The following retrieved sentence may be helpful or not. retrieved sentence: " \
        "context: A." in prompt.text


def test_bm25_triple_variant_joins_like_6_bm25() -> None:
    hits = [_hit("S1.", "a|effect|b"), _hit("S2.", "c|dosage|d", 1)]
    instruction = _instruction(render(get_template("ade", variant="bm25"), ADE_EXAMPLE, hits).text)
    assert instruction.endswith(
        "tail entity. Example: context: S1.response: a|effect|b Excample: context: S2.response: c|dosage|d"
    )
    legacy = _instruction(render(get_template("ade", variant="legacy"), ADE_EXAMPLE, hits).text)
    assert legacy.endswith("tail entity. Example: context: S1.. response: a|effect|bExample: context: S2.. "
                           "response: c|dosage|d")


def test_negative_awareness_variant_uses_the_na_instruction() -> None:
    prompt = render(get_template("ade", variant="negative_awareness"), ADE_EXAMPLE,
                    [_hit("S1.", "a|dosage|b")])
    assert _instruction(prompt.text) == (
        "You are an excellent linguist. Please extract the triplet from this sentence, the triplet is [head "
        "entity, relation, tail entity], the element relation denotes the relationship between head entity "
        "and tail entity, I will provide you the definition of the triplet you need to extract, the sentence "
        "from where your extract the triplets (head entity, relation, tail_entity) and the output format. "
        "the relation must in my predefined relation set: ('effect', 'dosage'). response Format: head "
        "entity|relation|tail entity. And the retrieved example may constitutes noise information or not. "
        "Example: context: S1.response: a|dosage|b"
    )
    # The input sentence stays in the prompt (the original replaced it by the retrieved sentence).
    assert prompt.text.endswith("### Input: \nAspirin caused a rash.\n\n### Response: \n")
    hetionet = get_template("hetionet", variant="negative_awareness").base_instruction()
    assert hetionet.endswith(
        "'participates') And the retrieved example may constitutes noise information or not."
    )


def test_noexample_ignores_hits_and_max_examples_truncates() -> None:
    prompt = render(get_template("hetionet", variant="noexample"), _link_example(), [_hit("Q", "binds")])
    assert _instruction(prompt.text) == get_template("hetionet").base_instruction()
    assert "Context: Q" not in prompt.text
    one = replace(get_template("hetionet", variant="bm25"), max_examples=1)
    shown = _instruction(render(one, _link_example(), [_hit("Q1", "binds"), _hit("Q2", "treats", 1)]).text)
    assert shown.endswith("'participates') Example: Context: Q1 Response: binds")


def _link_example() -> Example:
    return Example("hetionet/test/0", "link_prediction", "hetionet", "test",
                   "What is the relationship between EBI3 and lymphocyte activation ?", "participates",
                   {"head": "EBI3", "tail": "lymphocyte activation"})


def test_medmcqa_prompt_pinned() -> None:
    example = Example("medmcqa/test/0", "qa", "medmcqa", "test", "ignored", "(C)",
                      {"question": "Which vitamin is supplied from only animal source:",
                       "options": {"A": "Vitamin C", "B": "Vitamin B7", "C": "Vitamin B12",
                                   "D": "Vitamin D"}})
    hit = _hit("Question: Chronic urethral obstruction\n Choices: (A) Hyperplasia; (B) Hyperophy; "
               "(C) Atrophy; (D) Dyplasia", "(C)")
    prompt = render(get_template("medmcqa"), example, [hit])
    assert prompt.text == inference_prompt(
        "TASK: Given the medical context, example and the single-choice question, please choose the correct "
        "answer index with the following options: (A), (B), (C), (D).\nExample: Question: Chronic urethral "
        "obstruction\n Choices: (A) Hyperplasia; (B) Hyperophy; (C) Atrophy; (D) Dyplasia\nResponse: (C)\n",
        "Question: Which vitamin is supplied from only animal source:\nAnswers: (A) Vitamin C; (B) Vitamin "
        "B7; (C) Vitamin B12; (D) Vitamin D\n",
    )
    assert prompt.constraint is not None and prompt.constraint.choices == ("(A)", "(B)", "(C)", "(D)")
    assert prompt.stop == ("\n\n", "\n###")


def test_label_override_rewrites_the_label_tuple() -> None:
    template = get_template("hetionet", labels=("binds", "treats"))
    assert template.base_instruction().endswith("this relation  must be in ('binds', 'treats')")
    assert get_template("hetionet").labels == HETIONET_LABELS


def test_generic_templates_for_bring_your_own_data() -> None:
    sdoh = get_template("sdoh", task="classification", labels=["housing", "employment"])
    example = Example("sdoh/test/0", "classification", "sdoh", "test", "Lives in a shelter.", "housing")
    prompt = render(sdoh, example, [_hit("Works nights.", "employment")])
    assert _instruction(prompt.text) == (
        "You are an excellent medical expert. The task is to predict the label of the given text, the label "
        "must be in ('housing', 'employment'). Example: Context: Works nights. Response: employment"
    )
    assert prompt.constraint is not None and prompt.constraint.choices == ("housing", "employment")
    open_triples = get_template("triple_extraction")
    assert "predefined relation set" not in open_triples.base_instruction()
    assert open_triples.constraint() is not None
    with pytest.raises(UnknownNameError, match="pass task="):
        get_template("my_private_set")


def test_bionli_renders_premise_and_hypothesis() -> None:
    example = Example("bionli/test/0", "nli", "bionli", "test", "P.\nH.", "entailment",
                      {"premise": "Aspirin inhibits COX.", "hypothesis": "Aspirin affects COX."})
    prompt = render(get_template("bionli"), example, [])
    assert prompt.text.endswith(
        "### Input: \nPremise: Aspirin inhibits COX.\nHypothesis: Aspirin affects COX.\n\n### Response: \n")
    assert "('entailment', 'contradiction')" in prompt.text


def test_unknown_variant_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match="bm25"):
        get_template("ade", variant="bm52")


def test_missing_field_is_a_data_error_naming_it() -> None:
    example = Example("semclass/test/3", "classification", "semclass", "test", "t", "y",
                      {"sentence": "s", "head": "h"}, source_line=4)
    with pytest.raises(DataError, match=r"line 4, field 'tail'.*semclass/test/3"):
        render(get_template("semclass"), example, [])


def test_render_is_pure_and_never_leaks_the_gold_label() -> None:
    template, hits = get_template("ade"), [_hit("Other sentence.", "x|effect|y")]
    first, second = render(template, ADE_EXAMPLE, hits), render(template, ADE_EXAMPLE, hits)
    assert first == second and first.example_id == "ade/test/5"
    assert ADE_EXAMPLE.label not in first.text


def test_triple_constraint_accepts_every_gold_label(data_dir) -> None:  # type: ignore[no-untyped-def]
    from biorab.datasets import load_dataset

    for dataset in ("ade", "git"):
        regex = get_template(dataset).constraint().regex  # type: ignore[union-attr]
        labels = [e.label for e in load_dataset(dataset, "train", data_dir=data_dir)]
        assert all(re.fullmatch(regex, label) for label in labels)
        assert not re.fullmatch(regex, "a|NOT_A_RELATION|b")
    two_lines = get_template("ade").constraint().regex  # type: ignore[union-attr]
    assert re.fullmatch(two_lines, "a|effect|b\nc|dosage|d")


def test_format_target_and_training_text() -> None:
    template = get_template("ade")
    assert template.format_target(ADE_EXAMPLE) == "Aspirin|effect|rash"
    text = render_training(template, ADE_EXAMPLE, [_hit("S.", "a|effect|b")])
    assert text.startswith(
        "Below is an instruction that describes a task, paired with an input that provides further context. "
        "Write a response that appropriately completes the request.\n\n### Instruction:\nplease extract"
    )
    assert text.endswith("### Input: \nAspirin caused a rash.\n\n### Response: \nAspirin|effect|rash")
    bad = Example("ade/train/9", "triple_extraction", "ade", "train", "s", "a|cures|b", source_line=10)
    with pytest.raises(DataError, match=r"line 10, field 'label'.*'a\|cures\|b'"):
        template.format_target(bad)
    wrong_class = Example("ade_corpus_v2/train/1", "classification", "ade_corpus_v2", "train", "s", "True")
    with pytest.raises(DataError, match="not one of 1, 0"):
        get_template("ade_corpus_v2").format_target(wrong_class)


def test_stops_keep_an_answer_that_starts_with_a_newline() -> None:
    from biorab.generation import truncate_at_stop

    for dataset in DATASET_TASKS:
        assert get_template(dataset).stop == ("\n\n", "\n###")
    # SmolLM2 continuations of the original wrapper often start with "\n"; a "\n" stop would leave "".
    template = get_template("medmcqa")
    text, stopped = truncate_at_stop("\nThe answer is (D)\n\n\n### Instruction: \nTASK: ...", template.stop)
    assert (text, stopped) == ("\nThe answer is (D)", True)
    assert template.parse(text).label == "(D)"
    assert get_template("ade").labels == ADE_RELATIONS and get_template("git").labels == GIT_RELATIONS


def test_template_of_another_task_is_a_config_error() -> None:
    from biorab.common.errors import ConfigError

    with pytest.raises(ConfigError, match="template hetionet/default is for task 'link_prediction'"):
        render(get_template("hetionet"), ADE_EXAMPLE, [])


@pytest.mark.parametrize("dataset", sorted(set(DATASET_TASKS) - {"bionli"}))
def test_every_variant_renders_real_examples(data_dir, dataset: str) -> None:  # type: ignore[no-untyped-def]
    from biorab.datasets import load_dataset

    example = load_dataset(dataset, "test", data_dir=data_dir)[0]
    neighbour = load_dataset(dataset, "train", data_dir=data_dir)[1]
    hit = Hit(neighbour.id, 3.5, 0, neighbour.text, neighbour.label, dataset)
    for variant in template_variants(dataset):
        template = get_template(dataset, variant=variant)
        labeled = render(template, example, [hit])
        unlabeled = render(template, example, [replace(hit, value=None)])
        for prompt in (labeled, unlabeled):
            assert prompt.text.endswith("\n\n### Response: \n") and prompt.example_id == example.id
        if variant != "noexample":
            assert labeled.text != unlabeled.text and "retrieved sentence: " in unlabeled.text
        assert template.format_target(neighbour) == neighbour.label
