"""`exclude_test_duplicates`: the query's own text never comes back, and the retriever is searched deeper so
that k other hits remain."""

from __future__ import annotations

from collections.abc import Mapping

from biorab.common.records import Hit
from biorab.retrieval.selection import Selection, search_selected


class Ranked:
    """A retriever over a fixed ranking (best first) that records the depths it was asked for."""

    def __init__(self, keys: list[str]) -> None:
        self.hits = [Hit(f"d{i}", 10.0 - i, i, key, "1") for i, key in enumerate(keys)]
        self.depths: list[int] = []

    def search(self, queries: Mapping[str, str], k: int) -> dict[str, list[Hit]]:
        self.depths.append(k)
        return {qid: self.hits[:k] for qid in queries}


def test_own_text_copies_are_dropped_and_k_others_kept() -> None:
    # Three copies of the query (case and spacing differ) rank first; k=2 needs two others.
    copies = ["Aspirin caused rash.", "aspirin  caused RASH.", " Aspirin caused rash."]
    retriever = Ranked([*copies, "a", "b", "c"])
    selection = Selection(k=2, keep_ties=False, exclude_test_duplicates=True)
    found = search_selected(retriever, {"q": "aspirin caused rash."}, selection)
    assert [h.key for h in found["q"]] == ["a", "b"]
    assert retriever.depths == [2, 4, 8]  # doubled until two non-copies were among the candidates


def test_a_query_without_copies_is_searched_once_and_off_keeps_them() -> None:
    retriever = Ranked(["x", "Aspirin caused rash.", "y"])
    on = Selection(k=2, keep_ties=False, exclude_test_duplicates=True)
    found = search_selected(retriever, {"q": "other"}, on)
    assert [h.key for h in found["q"]] == ["x", "Aspirin caused rash."]
    assert retriever.depths == [2]
    off = Selection(k=2, keep_ties=False)
    found = search_selected(retriever, {"q": "aspirin caused rash."}, off)
    assert [h.key for h in found["q"]] == ["x", "Aspirin caused rash."]


def test_an_exhausted_retriever_returns_what_is_left() -> None:
    retriever = Ranked(["q", "a"])
    on = Selection(k=2, keep_ties=False, exclude_test_duplicates=True)
    found = search_selected(retriever, {"q": "Q"}, on)
    assert [h.key for h in found["q"]] == ["a"]
    assert retriever.depths == [2, 4]
