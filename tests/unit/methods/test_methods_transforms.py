"""Detect-and-Correct and LLM labeling on tiny testbed corpora with scripted fake answers: the transformed
corpus, its ledger, and the method's scores against the true corruption ledger (hand-computed, and checked
against scikit-learn)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sklearn.metrics import f1_score, precision_score, recall_score

from biorab.caches import GenerationStore
from biorab.common.errors import ConfigError, DataError
from biorab.corpora import Corpus, Ledger, build_corpus
from biorab.datasets import load_dataset
from biorab.generation.base import SamplingParams
from biorab.generation.fake import FakeBackend
from biorab.methods import (
    StoredTransform,
    read_transformed,
    score_transform,
    transform_corpus,
    write_transformed,
)
from biorab.methods.corpus_transform import method_prompts
from biorab.ral import CachedGenerator

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data

ADE = "ade_corpus_v2/train/"
# Counterfactual 80% of the first 10 Ade-corpus-v2 training items, seed 0, corrupts items 0-6 and 9 (their
# labels flipped); 7 and 8 keep their gold label "0". The fake reviews them like this:
DETECT_ANSWERS = {
    ADE + "0/detect": "incorrect, the right label is 1",   # corrupted, flagged, fixed
    ADE + "1/detect": "incorrect: 0",                      # corrupted, flagged, fixed
    ADE + "2/detect": "Incorrect. The correct label is 0.",  # corrupted, flagged, fixed
    ADE + "3/detect": "incorrect, the right label is 1",   # corrupted, flagged, fixed
    ADE + "4/detect": "incorrect",                         # corrupted, flagged, no label given: unchanged
    ADE + "5/detect": "correct",                           # corrupted, missed
    ADE + "9/detect": "maybe",                             # corrupted, unreadable: not flagged
    ADE + "7/detect": "incorrect, the right label is 1",   # clean, flagged: a false positive, now wrong
}  # 6 and 8 get the default answer "correct"

SEM = "semclass/train/"
# The first 8 SemClass training items (gold y n n n n n n y), labels removed; the fake labels them:
LABEL_ANSWERS = {
    SEM + "0/label": "y",              # right
    SEM + "1/label": "n",              # right
    SEM + "2/label": "y",              # wrong
    SEM + "3/label": "The label is n",  # right
    SEM + "4/label": "I cannot tell",  # unreadable: stays unlabeled (wrong)
}  # 5, 6 and 7 get the default "n": right, right, wrong


def fake(answers: dict[str, str], default: str) -> FakeBackend:
    return FakeBackend(FakeBackend.Params(mode="map", answers=answers, answer=default))


def corpus_of(data_dir: Path, dataset: str, n: int, kind: str, rate: float | None = None
              ) -> tuple[Corpus, Ledger]:
    train = load_dataset(dataset, "train", data_dir=data_dir)[:n]
    return build_corpus(kind, dataset, rate=rate, seed=0, loader=lambda _name: train)


def detect(data_dir: Path, store: GenerationStore, backend: FakeBackend) -> tuple[Corpus, Ledger, object]:
    source, truth = corpus_of(data_dir, "ade_corpus_v2", 10, "counterfactual", 0.8)
    corpus, ledger = transform_corpus("detect_correct", source, CachedGenerator(backend, store),
                                      SamplingParams(max_tokens=8), batch_size=4)
    return corpus, truth, ledger


def test_detect_correct_corpus_ledger_and_scores(data_dir: Path, tmp_path: Path) -> None:
    store = GenerationStore(tmp_path / "gen.sqlite")
    corpus, truth, ledger = detect(data_dir, store, fake(DETECT_ANSWERS, "correct"))
    assert sorted(e.item_id[len(ADE):] for e in truth.entries) == ["0", "1", "2", "3", "4", "5", "6", "9"]
    assert corpus.kind == "counterfactual+detect_correct"
    assert [i.value for i in corpus.items] == ["1", "0", "0", "1", "0", "0", "0", "1", "0", "1"]
    assert ledger.counts() == {"items": 10, "flagged": 6, "changed": 5, "unreadable": 1}
    assert [e.item_id[len(ADE):] for e in ledger.entries if e.flagged] == ["0", "1", "2", "3", "4", "7"]
    scores = score_transform(truth, ledger, n_boot=200, seed=0)
    # Flagged 6, corrupted 8, both 5: P = 5/6, R = 5/8, F1 = 2*5/(6+8); 4 of the 5 fixed to gold;
    # gold values before 2/10 (items 7, 8), after 5/10 (0-3 fixed, 8 kept; 7 broken).
    assert scores["detection_precision"].value == pytest.approx(5 / 6)
    assert scores["detection_recall"].value == pytest.approx(5 / 8)
    assert scores["detection_f1"].value == pytest.approx(10 / 14)
    assert scores["correction_accuracy"].value == pytest.approx(4 / 5)
    assert scores["corpus_accuracy_before"].value == pytest.approx(0.2)
    assert scores["corpus_accuracy_after"].value == pytest.approx(0.5)
    corrupt = [e.item_id in truth.by_id() for e in ledger.entries]
    flagged = [e.flagged for e in ledger.entries]
    assert scores["detection_precision"].value == pytest.approx(precision_score(corrupt, flagged))
    assert scores["detection_recall"].value == pytest.approx(recall_score(corrupt, flagged))
    assert scores["detection_f1"].value == pytest.approx(f1_score(corrupt, flagged))
    ci = scores["detection_recall"]
    assert ci.ci_low is not None and ci.ci_high is not None and ci.ci_low <= ci.value <= ci.ci_high
    assert (round(ci.ci_low, 4), round(ci.ci_high, 4)) == (0.25, 1.0)


def test_detect_correct_generations_are_cached(data_dir: Path, tmp_path: Path) -> None:
    store = GenerationStore(tmp_path / "gen.sqlite")
    first_corpus, _, first = detect(data_dir, store, fake(DETECT_ANSWERS, "correct"))
    again = fake(DETECT_ANSWERS, "correct")
    corpus, _, ledger = detect(data_dir, store, again)
    assert again.prompts_seen == 0 and ledger.cached == 10 and first.cached == 0
    assert corpus.digest == first_corpus.digest and ledger.to_jsonl() == first.to_jsonl()


def test_llm_label_accuracy_against_removed_labels(data_dir: Path, tmp_path: Path) -> None:
    source, truth = corpus_of(data_dir, "semclass", 8, "unlabeled")
    corpus, ledger = transform_corpus("llm_label", source, CachedGenerator(fake(LABEL_ANSWERS, "n")),
                                      SamplingParams(max_tokens=4))
    assert [i.value for i in corpus.items] == ["y", "n", "y", "n", None, "n", "n", "n"]
    assert ledger.counts() == {"items": 8, "flagged": 7, "changed": 7, "unreadable": 1}
    scores = score_transform(truth, ledger, n_boot=0)
    assert scores["labeling_accuracy"].value == pytest.approx(5 / 8)
    assert scores["labeling_coverage"].value == pytest.approx(7 / 8)
    assert scores["labeling_accuracy"].ci_low is None  # n_boot=0: no interval


def test_prompts_quote_the_paper(data_dir: Path) -> None:
    source, _ = corpus_of(data_dir, "ade_corpus_v2", 2, "counterfactual", 0.5)
    prompt = method_prompts("detect_correct", source)[0]
    assert prompt.example_id == ADE + "0/detect"
    quoted = ("This is a text classification task. Please determine whether the label assigned to the input "
              "sentence is correct. If the label is incorrect, please provide the correct label.")
    assert quoted in prompt.text
    assert prompt.text.endswith(f"label: {source.items[0].value}\n\n### Response: \n")
    unlabeled, _ = corpus_of(data_dir, "ade_corpus_v2", 2, "unlabeled")
    label = method_prompts("llm_label", unlabeled)[0]
    assert ("This is a text classification task aimed at determining whether a given sentence is related to "
            "an Adverse Drug Event (ADE). Please assign a label to each provided sentence to support this "
            "task.") in label.text
    assert label.constraint is not None and label.constraint.choices == ("1", "0")


def test_method_must_fit_the_testbed(data_dir: Path) -> None:
    source, _ = corpus_of(data_dir, "semclass", 4, "unlabeled")
    with pytest.raises(ConfigError, match="detect_correct applies to"):
        transform_corpus("detect_correct", source, CachedGenerator(fake({}, "correct")), SamplingParams())


def test_stored_transform_round_trip_and_guard(data_dir: Path, tmp_path: Path) -> None:
    store = GenerationStore(tmp_path / "g.sqlite")
    corpus, truth, ledger = detect(data_dir, store, fake(DETECT_ANSWERS, "correct"))
    source, _ = corpus_of(data_dir, "ade_corpus_v2", 10, "counterfactual", 0.8)
    folder = write_transformed(tmp_path / "t", corpus, truth, ledger, {"source_digest": source.digest})
    assert sorted(p.name for p in folder.iterdir()) == [
        "corpus.jsonl", "ledger.jsonl", "manifest.json", "transform.json", "transform.jsonl"]
    back, back_truth, back_ledger, info = read_transformed(folder)
    assert back.digest == corpus.digest and back_truth == truth and back_ledger.entries == ledger.entries
    assert info["counts"]["flagged"] == 6
    assert StoredTransform(str(folder))(source, truth).digest == corpus.digest
    other, _ = corpus_of(data_dir, "ade_corpus_v2", 10, "counterfactual", 0.2)
    with pytest.raises(DataError, match="transformed corpus was made from"):
        StoredTransform(str(folder))(other, truth)


def test_detect_correct_on_triples(data_dir: Path) -> None:
    # Counterfactual 50% of the first 6 ADE triples corrupts items 0 and 3 (relation) and 5 (tail).
    source, truth = corpus_of(data_dir, "ade", 6, "counterfactual", 0.5)
    assert [(e.item_id, e.how) for e in truth.entries] == [
        ("ade/train/0", "relation"), ("ade/train/3", "relation"), ("ade/train/5", "tail")]
    answers = {e.item_id + "/detect": f"incorrect: {e.original.upper()}" for e in truth.entries}
    answers["ade/train/5/detect"] = "incorrect"  # flagged without a triple: stays corrupted
    corpus, ledger = transform_corpus("detect_correct", source, CachedGenerator(fake(answers, "correct")),
                                      SamplingParams())
    assert corpus.items[0].value == "OLANZAPINE|effect|AGRANULOCYTOSIS"  # relation canonicalised
    scores = score_transform(truth, ledger, n_boot=0)
    # Case is ignored as the triple scorer ignores it: 2 of the 3 flagged corrupted items are fixed.
    assert scores["detection_precision"].value == 1.0 and scores["detection_recall"].value == 1.0
    assert scores["correction_accuracy"].value == pytest.approx(2 / 3)
    assert scores["corpus_accuracy_after"].value == pytest.approx(5 / 6)


def test_detect_correct_on_the_labeled_testbed(data_dir: Path) -> None:
    source, truth = corpus_of(data_dir, "ade_corpus_v2", 10, "labeled")
    _, ledger = transform_corpus("detect_correct", source, CachedGenerator(fake({}, "incorrect: 1")),
                                 SamplingParams())
    scores = score_transform(truth, ledger, n_boot=0)
    # Nothing is corrupted: every flag is a false positive, recall is undefined; the 5 gold "0" items
    # (items 1, 2, 7, 8, 9) are broken by the "correction" to "1".
    assert scores["detection_precision"].value == 0.0 and scores["detection_recall"].value is None
    assert scores["corpus_accuracy_before"].value == 1.0
    assert scores["corpus_accuracy_after"].value == pytest.approx(0.5)
