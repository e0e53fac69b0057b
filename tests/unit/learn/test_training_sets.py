"""Training sets on the RAL core: prompts rendered like evaluation prompts, no instance retrieves itself,
triplets drawn from the ledger under a pinned seed."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.common.errors import ConfigError, DataError
from biorab.learn import TrainingSource, build_instruction_set, build_triplets, item_text
from biorab.learn.instruction_set import build_testbed, index_corpus, load_examples
from biorab.ral import render_prompt
from biorab.tasks import get_template


def source(data_dir: Path, **kw: object) -> TrainingSource:
    base = {"dataset": "ade_corpus_v2", "limit": 12, "k": 1, "template": "bm25", "data_dir": str(data_dir)}
    return TrainingSource.model_validate({**base, **kw})


def test_training_prompt_is_the_evaluation_prompt(data_dir: Path) -> None:
    built = build_instruction_set(source(data_dir))
    template = get_template("ade_corpus_v2", variant="bm25")
    examples = {ex.id: ex for ex in load_examples(source(data_dir))}
    corpus, _ = build_testbed(source(data_dir))
    items = {item.id: item for item in corpus.items}
    from biorab.common.records import Hit

    for record in built.records:
        ex = examples[record.example_id]
        hits = [Hit(i, 0.0, r, items[i].key, items[i].value) for r, i in enumerate(record.hit_ids)]
        assert record.prompt == render_prompt(template, ex, hits).text
        assert record.target == ex.label and record.text.endswith(ex.label)


@pytest.mark.full_data  # pinned on the full staged data
def test_no_instance_retrieves_itself(data_dir: Path) -> None:
    src = source(data_dir, limit=40, k=2)
    built = build_instruction_set(src)
    texts = {ex.id: ex.text for ex in load_examples(src)}
    corpus, _ = build_testbed(src)
    keys = {item.id: item.key for item in corpus.items}
    assert all(len(r.hit_ids) == 2 for r in built.records)
    for record in built.records:
        assert record.example_id not in record.hit_ids
        assert all(keys[h].strip() != texts[record.example_id].strip() for h in record.hit_ids)
    # Without the exclusion, BM25 over the instance's own training split finds the instance first.
    plain = index_corpus(src, corpus).search({ex_id: texts[ex_id] for ex_id in list(texts)[:10]})
    assert sum(hits.hits[0].doc_id == ex_id for ex_id, hits in plain.items()) >= 9


def test_triplets_use_the_ledger_and_are_seeded(data_dir: Path) -> None:
    src = source(data_dir, limit=30, testbed="counterfactual", rate=0.5, k=2)
    first = build_triplets(src, negatives="both")
    again = build_triplets(src, negatives="both")
    assert first.triplets == again.triplets and len(first.triplets) == 60
    corrupted = first.ledger.by_id()
    items = {item.id: item for item in first.corpus.items}
    corrupted_texts = {item_text("classification", items[i].key, items[i].value) for i in corrupted}
    for t in first.triplets:
        if t.negative_kind == "corrupted":
            assert t.negative in corrupted_texts
        assert t.positive not in corrupted_texts  # positives are x itself or clean retrieved items
    own = [t for t in first.triplets if t.example_id in corrupted and t.negative_kind == "corrupted"]
    assert own and all(t.negative.startswith(f"The label of ({t.anchor})") for t in own)


def test_empty_ledger_and_label_space_mismatch_fail_before_training(data_dir: Path) -> None:
    with pytest.raises(ConfigError, match="counterfactual"):
        build_triplets(source(data_dir), negatives="corrupted")  # labeled testbed: nothing is corrupted
    from biorab.learn.instruction_set import check_label_space

    src = source(data_dir, dataset="semclass")  # y/n labels under the ADE template's 1/0 label set
    with pytest.raises(DataError, match=r"labels \['n', 'y'\] outside the label set"):
        check_label_space(load_examples(src), get_template("ade_corpus_v2"), src)


def test_a_training_set_reads_the_core_spec_and_builds_its_corpus_once(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import biorab.corpora
    from biorab.ral import RetrievalSpec
    from biorab.ral.parts.testbeds import forget_testbeds

    src = source(data_dir, testbed="counterfactual", rate=0.5, retriever_params={"k1": 1.2})
    assert src.retrieval == RetrievalSpec(testbed="counterfactual", rate=0.5, retriever="bm25",
                                          params={"k1": 1.2}, k=1, template="bm25")
    real, built = biorab.corpora.build_corpus, []
    monkeypatch.setattr(biorab.corpora, "build_corpus",
                        lambda *a, **kw: built.append(a) or real(*a, **kw))
    forget_testbeds()
    instruction_set = build_instruction_set(src)
    corpus, _ledger = build_testbed(src)  # the memo's: what the retriever indexed
    assert instruction_set.corpus_digest == corpus.digest
    assert built == [("counterfactual", "ade_corpus_v2")]
