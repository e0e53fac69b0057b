"""``robust``: answers recovered from realistic model output (small-model continuations, chatty models)."""

from __future__ import annotations

import pytest

from biorab.common.labels import (
    ADE_CORPUS_V2_LABELS,
    ADE_RELATIONS,
    BIONLI_LABELS,
    GIT_RELATIONS,
    HETIONET_LABELS,
    MEDMCQA_LABELS,
    PHARMKG_LABELS,
    SEMCLASS_LABELS,
)
from biorab.tasks import inference_prompt, parse


def triples(text: str, relations: tuple[str, ...] | None = ADE_RELATIONS) -> str | None:
    return parse("triple_extraction", text, labels=relations).label


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # SmolLM2-135M continuations (docs/notes/llm_notes.md): the answer, then a hallucinated next example.
        (" Levodopa | dopamine | Parkinson disease\n\nExample 6: context: x response: a|effect|b",
         "Levodopa|dopamine|Parkinson disease"),
        (" Aspirin|effect|rash Excample: context: Ibuprofen ... response: ibuprofen|effect|ulcer",
         "Aspirin|effect|rash"),
        ("Here are the triples:\n\n1. Aspirin|effect|rash\n2. **Ibuprofen** | Effect | ulcer\n\nNote: x",
         "Aspirin|effect|rash\nIbuprofen|effect|ulcer"),
        ("```\nAspirin|effect|rash\n```", "Aspirin|effect|rash"),
        ("| head | relation | tail |\n|---|---|---|\n| Aspirin | effect | rash |", "Aspirin|effect|rash"),
        ("Aspirin|effect|rash; ibuprofen|dosage|200 mg", "Aspirin|effect|rash\nibuprofen|dosage|200 mg"),
        ("context: Aspirin caused a rash. response: Aspirin|effect|rash", "Aspirin|effect|rash"),
        ("Response: Aspirin  |  effect |  skin   rash.", "Aspirin|effect|skin rash"),
        # The paper's error table writes triples as tuples.
        ("(tamoxifen, effect, retinal changes.)", "tamoxifen|effect|retinal changes"),
        ("{olanzapine, dosage, 20-mg daily}", "olanzapine|dosage|20-mg daily"),
        ("a|effect|b|dosage|c", "a|effect|b\nb|dosage|c"),
        ("Aspirin|effect|rash\nAspirin|effect|rash", "Aspirin|effect|rash"),
        ("Triple-negative breast cancer|effect|rash", "Triple-negative breast cancer|effect|rash"),
        ("head entity|relation|tail entity", None),
        ("The sentence does not contain a triple.", None),
        ("", None),
    ],
)
def test_robust_triples(text: str, label: str | None) -> None:
    assert triples(text) == label


def test_relations_are_spelled_as_in_the_relation_set() -> None:
    assert triples("tonin|administered to|rats", GIT_RELATIONS) == "tonin|ADMINISTERED_TO|rats"
    assert triples("x|Interacts-With|y", GIT_RELATIONS) == "x|INTERACTS_WITH|y"
    assert triples("x|binds|y", GIT_RELATIONS) == "x|binds|y"  # kept: a wrong relation is still a triple
    assert triples("(a, effect, b)", None) is None  # tuples need the relation set to be read safely


def test_echoed_prompt_is_skipped() -> None:
    full = inference_prompt("please extract ... Excample: context: S.response: x|effect|y", "Aspirin rash.")
    assert triples(full + "Aspirin|effect|rash\n\n### Explanation: x|effect|z") == "Aspirin|effect|rash"


@pytest.mark.parametrize(
    ("text", "labels", "label"),
    [
        (" participates\n\nExample: Context: What is the relationship between A and B ? Response: binds",
         HETIONET_LABELS, "participates"),
        ("The relationship is **upregulates**.", HETIONET_LABELS, "upregulates"),
        ("regulates", HETIONET_LABELS, "regulates"),
        ("Response: Disease-Gene", PHARMKG_LABELS, "Disease-Gene"),
        ("disease gene", PHARMKG_LABELS, "Disease-Gene"),
        ("The relationship between ethanol and GABRA1 is Chemical-Gene.", PHARMKG_LABELS, "Chemical-Gene"),
        ("('covaries', 'upregulates', 'regulates', 'treats')", HETIONET_LABELS, None),
        ("I cannot tell.", HETIONET_LABELS, None),
    ],
)
def test_robust_link_prediction(text: str, labels: tuple[str, ...], label: str | None) -> None:
    assert parse("link_prediction", text, labels=labels).label == label


@pytest.mark.parametrize(
    ("text", "labels", "label"),
    [
        (" 1\n\nExample: Context: The sentence x has label 0", ADE_CORPUS_V2_LABELS, "1"),
        ("Yes, the text describes an ADE.", ADE_CORPUS_V2_LABELS, "1"),
        ("False", ADE_CORPUS_V2_LABELS, "0"),
        ("The label should be 0.", ADE_CORPUS_V2_LABELS, "0"),
        ("**1**", ADE_CORPUS_V2_LABELS, "1"),
        ("True", SEMCLASS_LABELS, "y"),
        ("No", SEMCLASS_LABELS, "n"),
        ("is labeled as n", SEMCLASS_LABELS, "n"),
        ("Y", SEMCLASS_LABELS, "y"),
        ("Entailment.", BIONLI_LABELS, "entailment"),
        ("The hypothesis contradicts the premise.", BIONLI_LABELS, "contradiction"),
        ("I am not sure", ADE_CORPUS_V2_LABELS, None),
    ],
)
def test_robust_classification_and_nli(text: str, labels: tuple[str, ...], label: str | None) -> None:
    task = "nli" if labels == BIONLI_LABELS else "classification"
    assert parse(task, text, labels=labels).label == label


def test_multiclass_labels_get_no_synonyms() -> None:
    labels = ("positive", "negative", "no relation")
    assert parse("classification", "No relation.", labels=labels).label == "no relation"
    assert parse("classification", "yes", labels=labels).label is None


OPTIONS = {"A": "Hyperplasia", "B": "Hyperophy", "C": "Atrophy", "D": "Dyplasia"}


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("(C)", "(C)"),
        (" (C) Atrophy\n\nQuestion: Which vitamin ...\nAnswers: (A) x; (B) y", "(C)"),
        ("C", "(C)"),
        ("C. Atrophy", "(C)"),
        ("The answer is C.", "(C)"),
        ("Answer: B", "(B)"),
        ("**Option D**", "(D)"),
        ("Atrophy", "(C)"),  # option text instead of the letter
        ("A patient with this obstruction develops atrophy.", "(C)"),
        ("The correct answer is (A) Hyperplasia.", "(A)"),
        ("Answers: (A) Hyperplasia; (B) Hyperophy; (C) Atrophy; (D) Dyplasia", None),  # an echo
        ("E", None),
        ("I do not know", None),
        # Lower-case letters are answers too (casing); prose starting with "a" is not.
        ("Answer: c", "(C)"),
        ("answer: (b)", "(B)"),
        ("(d) Dyplasia", "(D)"),
        ("c", "(C)"),
        ("a) Hyperplasia", "(A)"),
        ("a lot depends on the patient", None),
    ],
)
def test_robust_qa(text: str, label: str | None) -> None:
    assert parse("qa", text, labels=MEDMCQA_LABELS, options=OPTIONS).label == label


def test_qa_option_keys_may_be_parenthesised_and_default_letters_reach_e() -> None:
    assert parse("qa", "atrophy", labels=MEDMCQA_LABELS, options={"(C)": "Atrophy"}).label == "(C)"
    assert parse("qa", "E) none of the above").label == "(E)"


def test_without_labels_the_first_answer_is_returned() -> None:
    assert parse("link_prediction", "**Binds** the receptor").label == "Binds"
    assert parse("classification", "  Housing instability.\nMore text").label == "Housing instability"


# Verbatim SmolLM2-135M-Instruct continuations of our rendered prompts (transformers backend, greedy, the
# ("\n\n", "\n###") stops), captured once; generated text is never asserted across backends, only parsed.
SMOLLM2_OUTPUTS = [
    ("ade_corpus_v2", "\nNo, the text does not describe an ADE. The label should be 0.", "0", None),
    ("ade_corpus_v2", "\nThe label should be 1, as the ADE is not mentioned in the text.", "1", None),
    ("ade_corpus_v2", "1", "1", "1"),
    ("medmcqa", " Question: Which of the following is not a type of cell that is found in the human body?\n"
     "Answers: (A) Cellular differentiation", None, "(A)"),
    ("medmcqa", "\nThe answer is (D)", "(D)", "(D)"),
    ("semclass", "\nThe answer is: y", "y", None),
    ("semclass", "\nThe relationship between tauroursodeoxycholic acid and taurineshould be labeled as "
     "INTERACTS_WITH is.", None, None),
    ("hetionet", "\nThe relationship between UGP2 and CDK2AP1 is that UGP2 is a protein that regulates the "
     "expression of CDK2", "regulates", None),
    ("hetionet", "\nThe relationship between EBI3 and lymphocyte activation is regulated by BACE2.",
     None, None),
    ("hetionet", "\nThe answer is:", None, None),
    ("pharmkg", "\nThe disease-gene is linked to the gene IL1R.", "Disease-Gene", None),
    ("ade", "\nThe results of the study suggest that the use of valproate and carnitine may have a positive "
     "effect on the liver in children", None, None),
]


@pytest.mark.parametrize(("dataset", "text", "robust", "strict"), SMOLLM2_OUTPUTS)
def test_small_model_outputs(dataset: str, text: str, robust: str | None, strict: str | None) -> None:
    from biorab.tasks import get_template

    template = get_template(dataset)
    assert template.parse(text).label == robust
    assert template.parse(text, mode="strict_original").label == strict
