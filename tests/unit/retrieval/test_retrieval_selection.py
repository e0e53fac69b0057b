"""The selection rule (`biorab.retrieval.selection`): one set of fields shared by run configs and sweep
profiles, one function applying it, and hit cache keys, retriever fingerprints and cell ids unchanged for
existing configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.common.records import CorpusItem, Hit
from biorab.experiment import ExperimentConfig, RetrievalSpec
from biorab.ral import CachedRetriever
from biorab.retrieval import build_retriever
from biorab.retrieval.selection import Selection, search_selected, select_hits
from biorab.sweep.config import RetrieverProfile

# Retrieval entries as written in configs: smoke.yaml's, table1_classification_bm25.yaml's, one with retriever
# params and a tie pool, one without ties.
SPECS = [
    {"testbed": "labeled", "retriever": "bm25", "k": 1, "keep_ties": True, "template": "bm25"},
    {
        "testbed": "labeled",
        "retriever": "bm25",
        "k": 3,
        "keep_ties": False,
        "dedupe": False,
        "template": "bm25",
    },
    {
        "testbed": "counterfactual",
        "rate": 0.2,
        "retriever": "bm25",
        "params": {"k1": 1.2, "method": "okapi"},
        "k": 5,
        "tie_pool": 4,
    },
    {
        "testbed": "labeled",
        "retriever": "bm25",
        "params": {"fields": "key_value"},
        "k": 2,
        "keep_ties": False,
    },
]
# Computed on main (92c98f6) before the selection fields had one owner: (retriever fingerprint, index
# fingerprint, hit key of "aspirin reduces fever" over corpus digest "c0ffee", cell id of ade/test).
PINNED = [
    (
        "09b824d2ff580201f714a574cc7326e53f1fc2e75986b8ca46c55ea792c2e55a",
        "cd414bf450b8d94bc84d0351c9fef0f7a04f4319bfa5cc3a2028d253672b64ee",
        "e49e1a49f7ab9a4b6448dace1dffdcad0a49af10dafd6a80066bb119d4426915",
        "ade-test__labeled-bm25-k1__bm25__3132609529",
    ),
    (
        "ce3e6ab1c17d4fd86d3d9317137ceee4180834d48e698ed508dfda93c104ded5",
        "cd414bf450b8d94bc84d0351c9fef0f7a04f4319bfa5cc3a2028d253672b64ee",
        "040047053d7724c5e475d5af426eb16943887b390a079c849edf3b5c68a8103e",
        "ade-test__labeled-bm25-k3-dups__bm25__d6576e59da",
    ),
    (
        "4dd48d054f6a0063f1a37c4cb901ee446ad6e77e451394083577bb7f21550c12",
        "f68566f60c1aaf56ff9ebd302328bc3dd27ebd2011a271e127759e3b09cbccbe",
        "659a8d4852b13b4b6c65d5c61ca618a7a2e8798b4ef1889eae0634959881570d",
        "ade-test__counterfactual-0.2-bm25-k5__b47b3c5f9c",
    ),
    (
        "c23223d1dc8133a81a83a1cca4cd546070241c28c070ba76f94a49ecc89bf1fd",
        "beeac89cbd6f403b689356a51a647e64ab41de450841430ea1b879273f3aa4d1",
        "d33af10fa716f95f2136a5ee056a42ce2f214ae39a797b4e03292e3eae7f8c21",
        "ade-test__labeled-bm25-k2__f3653c6889",
    ),
]


@pytest.mark.parametrize(("raw", "pinned"), list(zip(SPECS, PINNED, strict=True)))
def test_keys_of_existing_configs_are_unchanged(raw: dict[str, object], pinned: tuple[str, ...]) -> None:
    spec = RetrievalSpec.model_validate(raw)
    retriever = build_retriever(spec.retriever, spec.selection.index_params(spec.params))
    config = ExperimentConfig.model_validate(
        {
            "name": "pin",
            "datasets": [{"name": "ade", "limit": 4}],
            "retrieval": [raw],
            "backend": {"name": "fake"},
        }
    )
    key = CachedRetriever(retriever, "c0ffee", spec.selection).key("aspirin reduces fever")
    assert (retriever.fingerprint, retriever.index_fingerprint, key, config.cells()[0].cell_id) == pinned


def test_one_set_of_fields() -> None:
    # The run config's entry and the sweep's profile are selections; their fields keep their YAML order.
    assert list(RetrievalSpec.model_fields) == [
        "testbed",
        "rate",
        "retriever",
        "params",
        "k",
        "keep_ties",
        "tie_pool",
        "dedupe",
        "exclude_test_duplicates",
        "template",
        "awareness_probe",
        "probe_any_testbed",
        "filter",
        "method",
        "order",  # the evidence order (issue 43): a RAL setting, not a retriever's, so not in the profile
    ]
    assert list(RetrieverProfile.model_fields) == [
        "retriever",
        "params",
        "k",
        "keep_ties",
        "tie_pool",
        "dedupe",
        "exclude_test_duplicates",
        "template",
    ]
    spec = RetrievalSpec(testbed="labeled", k=3, keep_ties=False, dedupe=False)
    assert spec.selection == Selection(k=3, keep_ties=False, tie_pool=8, dedupe=False)
    assert type(spec.selection) is Selection and spec.selection.depth == 3
    assert Selection(k=2, tie_pool=5).depth == 7
    profile = RetrieverProfile(retriever="bm25", k=3, keep_ties=False, dedupe=False)
    assert profile.selection == spec.selection


def test_select_hits_keeps_ties_and_drops_duplicates() -> None:
    hits = [
        Hit("a", 3.0, 0, "k1", "v"),
        Hit("b", 3.0, 1, "k1", "v"),
        Hit("c", 3.0, 2, "k2", "v"),
        Hit("d", 1.0, 3, "k3", "v"),
    ]
    assert [h.doc_id for h in select_hits(hits, Selection(k=1))] == ["a", "c"]
    assert [h.doc_id for h in select_hits(hits, Selection(k=1, keep_ties=False))] == ["a"]
    assert [h.doc_id for h in select_hits(hits, Selection(k=4))] == ["a", "c", "d"]
    assert [h.doc_id for h in select_hits(hits, Selection(k=1, dedupe=False))] == ["a", "b", "c"]
    assert select_hits([], Selection(k=2)) == []


def test_search_selected_searches_depth_deep(tmp_path: Path) -> None:
    # Five items score the same for "fever"; d1 repeats d0's (key, value). k=1 with ties keeps the tied
    # items within the pool, de-duplicated by the retriever searched with the selection's switch.
    keys = ["aspirin fever", "aspirin fever", "ibuprofen fever", "paracetamol fever", "heat fever", "pain"]
    items = [CorpusItem(f"d{i}", key, "1", "toy", "qa") for i, key in enumerate(keys)]
    queries = {"q": "fever"}

    def selected(selection: Selection) -> list[str]:
        retriever = build_retriever("bm25", selection.index_params({}), cache_root=tmp_path)
        retriever.index(items)
        return [h.doc_id for h in search_selected(retriever, queries, selection)["q"]]

    everything = selected(Selection(k=1, dedupe=False))
    assert len(everything) == 5 and set(everything) == {"d0", "d1", "d2", "d3", "d4"}
    deduped = selected(Selection(k=1))
    assert len(deduped) == 4 and "d1" not in deduped and "d0" in deduped
    assert selected(Selection(k=1, tie_pool=1)) == deduped[:2]
    assert selected(Selection(k=1, keep_ties=False)) == deduped[:1]
