"""The eight staged loaders against the data README: row counts, label distributions, duplicates and the
first examples' fields (values pinned by hand from the source files)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from biorab.common.errors import ConfigError
from biorab.common.records import Example
from biorab.datasets import STAGED_DATASETS, dataset_splits, load_dataset
from biorab.datasets.medmcqa import qa_text
from biorab.datasets.stats import count_duplicates, label_counts

pytestmark = pytest.mark.full_data  # pinned on the full staged data (../shared/data)


@cache
def _load(data_dir: Path, name: str, split: str) -> tuple[Example, ...]:
    return tuple(load_dataset(name, split, data_dir=data_dir))


# (dataset, split) -> (rows, label counts, duplicates), from the data README (pharmkg train duplicates
# and the GIT/SemClass/medmcqa label mixes were counted from the files with jq-style one-liners).
EXPECTED = {
    ("ade", "train"): (4970, {"effect": 4779, "dosage": 191}, 108),
    ("ade", "test"): (2130, {"effect": 2042, "dosage": 88}, 13),
    ("chemprot", "train"): (
        4111,
        {"DOWNREGULATOR": 2236, "ACTIVATOR": 764, "PRODUCT-OF": 712, "ANTAGONIST": 229, "AGONIST": 170},
        92,
    ),
    ("chemprot", "dev"): (
        2411,
        {"DOWNREGULATOR": 1093, "ACTIVATOR": 548, "PRODUCT-OF": 455, "ANTAGONIST": 199, "AGONIST": 116},
        37,
    ),
    ("chemprot", "test"): (
        3438,
        {"DOWNREGULATOR": 1646, "ACTIVATOR": 664, "PRODUCT-OF": 640, "ANTAGONIST": 293, "AGONIST": 195},
        66,
    ),
    ("git", "train"): (3734, None, 0),
    ("git", "dev"): (492, None, 0),
    ("git", "test"): (930, None, 465),
    ("pharmkg", "train"): (
        4000,
        {"Interactions": 2210, "Disease-Gene": 1047, "Disease-Chemical": 657, "Chemical-Gene": 86},
        9,
    ),
    ("pharmkg", "dev"): (
        500,
        {"Interactions": 266, "Disease-Gene": 135, "Disease-Chemical": 73, "Chemical-Gene": 26},
        0,
    ),
    ("pharmkg", "test"): (
        500,
        {"Interactions": 290, "Disease-Gene": 112, "Disease-Chemical": 62, "Chemical-Gene": 36},
        0,
    ),
    ("hetionet", "train"): (
        4000,
        {
            "participates": 1407,
            "expresses": 988,
            "regulates": 446,
            "interacts": 282,
            "causes": 254,
            "downregulates": 244,
            "upregulates": 210,
            "covaries": 100,
            "binds": 24,
            "associates": 20,
            "resembles": 11,
            "localizes": 7,
            "presents": 4,
            "treats": 2,
            "includes": 1,
        },
        0,
    ),
    ("hetionet", "test"): (500, None, 0),
    ("ade_corpus_v2", "train"): (4000, {"0": 2870, "1": 1130}, 143),
    ("ade_corpus_v2", "dev"): (500, {"0": 373, "1": 127}, 5),
    ("ade_corpus_v2", "test"): (500, {"0": 357, "1": 143}, 3),
    ("semclass", "train"): (2400, {"y": 1284, "n": 1116}, 13),
    ("semclass", "test"): (600, {"y": 321, "n": 279}, 0),
    ("medmcqa", "train"): (4000, {"(A)": 1183, "(C)": 999, "(B)": 992, "(D)": 826}, 0),
    ("medmcqa", "test"): (4183, {"(A)": 1348, "(B)": 1085, "(C)": 925, "(D)": 825}, 0),
}


def test_splits_are_the_sources_splits() -> None:
    assert {name: dataset_splits(name) for name in STAGED_DATASETS} == {
        "ade": ("train", "test"),
        "chemprot": ("train", "dev", "test"),
        "git": ("train", "dev", "test"),
        "pharmkg": ("train", "dev", "test"),
        "hetionet": ("train", "test"),
        "ade_corpus_v2": ("train", "dev", "test"),
        "semclass": ("train", "test"),
        "medmcqa": ("train", "test"),
    }
    assert set(EXPECTED) == {(n, s) for n in STAGED_DATASETS for s in dataset_splits(n)}


@pytest.mark.parametrize(("name", "split"), sorted(EXPECTED))
def test_rows_labels_and_duplicates(data_dir: Path, name: str, split: str) -> None:
    rows, labels, duplicates = EXPECTED[(name, split)]
    examples = _load(data_dir, name, split)
    assert len(examples) == rows
    if labels is not None:
        assert label_counts(examples) == labels
    assert count_duplicates(examples) == duplicates
    assert [e.id for e in examples[:2]] == [f"{name}/{split}/0", f"{name}/{split}/1"]
    assert examples[-1].id == f"{name}/{split}/{rows - 1}"
    assert {e.dataset for e in examples} == {name} and {e.split for e in examples} == {split}


@pytest.mark.parametrize(("name", "split"), sorted(EXPECTED))
def test_text_never_is_the_label(data_dir: Path, name: str, split: str) -> None:
    # The text is the retrieval key; the gold label must not be appended to it (triples: the triple).
    for example in _load(data_dir, name, split):
        assert example.label and example.text
        if example.task == "triple_extraction":
            assert example.label not in example.text


def test_git_and_hetionet_label_mixes(data_dir: Path) -> None:
    git = label_counts(_load(data_dir, "git", "test"))
    assert len(git) == 22 and git["INTERACTS_WITH"] == 194 and git["SYMPTOM_OF"] == 6
    assert sum(label_counts(_load(data_dir, "git", "train")).values()) == 3734
    het = label_counts(_load(data_dir, "hetionet", "test"))
    assert het == {
        "participates": 175,
        "expresses": 134,
        "regulates": 61,
        "downregulates": 41,
        "upregulates": 29,
        "causes": 27,
        "interacts": 16,
        "covaries": 9,
        "associates": 3,
        "binds": 3,
        "includes": 1,
        "localizes": 1,
    }


def test_first_triple_examples(data_dir: Path) -> None:
    ade = _load(data_dir, "ade", "test")[0]
    assert (ade.task, ade.text, ade.label, ade.source_line) == (
        "triple_extraction",
        "Hepatotoxic effects in a child receiving valproate and carnitine.",
        "carnitine|effect|Hepatotoxic effects",
        1,
    )
    assert ade.fields == {"sentence": ade.text}
    chem = _load(data_dir, "chemprot", "train")[0]
    # The padding spaces around entity mentions are kept byte for byte.
    assert chem.fields["sentence"].startswith(" Tomudex  treatment resulted in the decrease in p27(kip1)")
    assert "increase in  cyclin E  and cdk2" in chem.text
    assert chem.label == "Tomudex|ACTIVATOR|cyclin E"
    last = _load(data_dir, "chemprot", "train")[-1]
    assert (last.label, last.source_line) == ("5-HT|PRODUCT-OF|serotonin autoreceptor", 4111)
    git = _load(data_dir, "git", "train")[0]
    assert git.label == "tonin|ADMINISTERED_TO|rats"
    assert git.text.startswith("when 500 microliter of  tonin  was administered intravenously to  rats ,")


def test_triple_text_equals_the_authors_retrieval_corpus(data_dir: Path) -> None:
    # The authors' uniform {"text","label"} training files are the same rows: our keys are theirs.
    for name, file in (
        ("chemprot", "chemprot/triplet_extraction_chemprot_train.json"),
        ("git", "git/triplet_extraction_git_train.json"),
    ):
        theirs = [json.loads(line) for line in (data_dir / file).open(encoding="utf-8")]
        ours = _load(data_dir, name, "train")
        assert [(e.text, e.label) for e in ours] == [(r["text"], r["label"]) for r in theirs]


def test_first_link_prediction_examples(data_dir: Path) -> None:
    pharm = _load(data_dir, "pharmkg", "train")[0]
    assert (pharm.task, pharm.text, pharm.label) == (
        "link_prediction",
        "what is the relationship between fosl1 and fosl2 ?",
        "Interactions",
    )
    assert pharm.fields == {"head": "fosl1", "tail": "fosl2"}
    het = _load(data_dir, "hetionet", "test")[0]
    assert het.text == "What is the relationship between EBI3 and lymphocyte activation ?"
    assert (het.label, het.fields) == ("participates", {"head": "EBI3", "tail": "lymphocyte activation"})
    # The reconstruction's PharmKG relation code determines the label, so it is not an input field.
    assert "pharmkg_relation" not in _load(data_dir, "pharmkg", "test")[0].fields


@pytest.mark.parametrize(("name", "split", "index", "head", "tail"), [
    ("pharmkg", "train", 461, "citalopram", "head and neck neoplasms"),
    ("pharmkg", "train", 2630, "head and neck neoplasms", "isyna1"),
    ("pharmkg", "dev", 129, "naltrexone",
     "major depressive disorder and accelerated response to antidepressant drug treatment"),
    ("hetionet", "train", 966, "LYN", "regulation of ERK1 and ERK2 cascade"),
])  # fmt: skip
def test_entity_names_containing_and(
    data_dir: Path, name: str, split: str, index: int, head: str, tail: str
) -> None:
    example = _load(data_dir, name, split)[index]
    assert (example.fields["head"], example.fields["tail"]) == (head, tail)


def test_first_classification_examples(data_dir: Path) -> None:
    ade = _load(data_dir, "ade_corpus_v2", "test")[0]
    assert (ade.task, ade.text, ade.label, ade.fields) == (
        "classification",
        "Taxane-induced glaucoma.",
        "1",
        {"sentence": "Taxane-induced glaucoma."},
    )
    assert _load(data_dir, "ade_corpus_v2", "dev")[0].text == (
        "One patient was treated with disothiazide for premenstrual edema."
    )
    sem = _load(data_dir, "semclass", "test")[0]
    sentence = "[Action of methemoglobin on cytochrome oxidases inhibited by cyanides]."
    assert sem.text == f"if the triple cyanides|INHIBITS|cytochrome oxidases is belong to sentence {sentence}"
    assert (sem.label, sem.fields) == (
        "y",
        {
            "sentence": sentence,
            "head": "cyanides",
            "relation": "INHIBITS",
            "tail": "cytochrome oxidases",
            "source_id": "P5999",
        },
    )


def test_semclass_text_is_the_authors_key(data_dir: Path) -> None:
    theirs = [json.loads(line) for line in (data_dir / "semclass/classification_semmed_train.json").open()]
    assert [e.text for e in _load(data_dir, "semclass", "train")] == [r["text"] for r in theirs]
    ours = [e.label == "y" for e in _load(data_dir, "semclass", "train")]
    assert ours == [r["label"] == "True" for r in theirs]


def test_ade_corpus_v2_text_is_the_authors_key(data_dir: Path) -> None:
    file = data_dir / "ade_corpus_v2/classification_ade_corpus_v2_train.json"
    theirs = [json.loads(line) for line in file.open(encoding="utf-8")]
    ours = _load(data_dir, "ade_corpus_v2", "train")
    assert [(e.text, e.label == "1") for e in ours] == [(r["text"], r["label"] == "True") for r in theirs]


def test_first_medmcqa_examples(data_dir: Path) -> None:
    test = _load(data_dir, "medmcqa", "test")[0]
    assert (test.task, test.label, test.source_line) == ("qa", "(A)", 1)
    assert test.fields["question"] == "Which of the following is not true for myelinated nerve fibers:"
    assert test.fields["options"] == {
        "A": "Impulse through myelinated fibers is slower than non-myelinated fibers",
        "B": "Membrane currents are generated at nodes of Ranvier",
        "C": "Saltatory conduction of impulses is seen",
        "D": "Local anesthesia is effective only when the nerve is not covered by myelin sheath",
    }
    assert test.fields["subject"] == "Physiology"
    assert test.fields["source_id"] == "45258d3d-b974-44dd-a161-c3fccbdadd88"
    assert test.text.startswith(
        "Question: Which of the following is not true for myelinated nerve fibers:\n "
        "Choices: (A) Impulse through myelinated fibers"
    )
    assert "exp" not in test.fields  # the explanation states the answer
    train = _load(data_dir, "medmcqa", "train")[0]
    assert train.fields["question"] == (
        "Chronic urethral obstruction due to benign prismatic hyperplasia can lead to the following "
        "change in kidney parenchyma"
    )
    assert train.fields["options"] == {"A": "Hyperplasia", "B": "Hyperophy", "C": "Atrophy", "D": "Dyplasia"}
    assert (train.label, train.fields["subject"]) == ("(C)", None)


def test_medmcqa_train_options_round_trip(data_dir: Path) -> None:
    # Parsing the authors' text back into question/options loses nothing: re-rendering gives the text.
    assert all(
        qa_text(e.fields["question"], e.fields["options"]) == e.text
        for e in _load(data_dir, "medmcqa", "train")
    )


def test_unknown_split_names_the_available_ones(data_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r"'ade' has no split 'dev'.*available: train, test"):
        load_dataset("ade", "dev", data_dir=data_dir)


def test_records_round_trip(data_dir: Path) -> None:
    example = _load(data_dir, "medmcqa", "test")[0]
    assert Example.from_row(example.to_row()) == example
