"""Retrieval benchmark, measured side by side in one run on the staged ADE and MedMCQA training corpora with
their test inputs as queries:

1. bm25s vs rank_bm25 (the original BioRAB library): index and query time and their ratios (index, query,
   and index + all queries, the last judged against the target >= 50x), on identical token lists.
   rank_bm25 answers a query subset; its per-query time is extrapolated.
2. Top-1 agreement of the two, tie-aware, with the original's setup (whitespace tokens, BM25Okapi) against
   biorab's default (Lucene BM25, stopwords) and with both aligned (same tokens, Robertson BM25 in bm25s,
   whose idf differs from BM25Okapi's only for terms in more than half of the documents).
3. Exact dense top-k: biorab's faiss `IndexFlatIP` retriever vs brute-force numpy top-k on MiniLM embeddings.
4. Peak memory: tracemalloc peak of each index build, and the process's peak RSS.

Times are CPU seconds of this process (`time.process_time`), the fastest of 3 runs for the quick steps:
wall-clock ratios on a shared machine swing with other users' load.

Run: ``.venv/bin/python bench/retrieval.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@dataclass(frozen=True)
class Sizes:
    rank_bm25_queries: int
    dense_docs: int
    dense_queries: int


FULL = Sizes(rank_bm25_queries=300, dense_docs=1000, dense_queries=200)
QUICK = Sizes(rank_bm25_queries=60, dense_docs=200, dense_queries=40)


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """`fn()` and the CPU seconds it used (all threads of this process). CPU time, unlike wall time, does
    not count the time other users' processes hold the cores of a shared machine."""
    start = time.process_time()
    result = fn()
    return result, time.process_time() - start


def best_of(fn: Callable[[], Any], repeats: int = 3) -> float:
    """The fastest of `repeats` runs: the machine is shared, and the minimum is the least disturbed."""
    return min(timed(fn)[1] for _ in range(repeats))


def traced_peak_mib(fn: Callable[[], Any]) -> float:
    """Peak Python-visible allocation (numpy included) while `fn` runs, in MiB (a separate, untimed pass)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def load(dataset: str) -> tuple[list[str], list[str]]:
    from biorab.datasets import load_dataset

    return [e.text for e in load_dataset(dataset, "train")], [e.text for e in load_dataset(dataset, "test")]


def bm25_speed(docs: list[str], queries: list[str], sizes: Sizes) -> dict[str, float]:
    import bm25s
    from rank_bm25 import BM25Okapi

    doc_tokens = bm25s.tokenize(docs, return_ids=False, show_progress=False)
    query_tokens = bm25s.tokenize(queries, return_ids=False, show_progress=False)
    fast = bm25s.BM25()
    fast_index = best_of(lambda: fast.index(doc_tokens, show_progress=False))
    slow_index = best_of(lambda: BM25Okapi(doc_tokens))
    slow = BM25Okapi(doc_tokens)
    fast_query = best_of(lambda: fast.retrieve(query_tokens, k=1, show_progress=False, n_threads=1))
    subset = query_tokens[: sizes.rank_bm25_queries]
    slow_subset = best_of(lambda: [slow.get_scores(q) for q in subset], repeats=1)
    slow_query = slow_subset / len(subset) * len(queries)
    return {
        "bm25s_index_s": fast_index,
        "rank_bm25_index_s": slow_index,
        "bm25s_query_s": fast_query,
        "rank_bm25_query_s": slow_query,
        "rank_bm25_measured": len(subset),
        "bm25s_index_mib": traced_peak_mib(lambda: bm25s.BM25().index(doc_tokens, show_progress=False)),
        "rank_bm25_index_mib": traced_peak_mib(lambda: BM25Okapi(doc_tokens)),
    }


def biorab_bm25_query_time(docs: list[str], queries: list[str], tmp: str) -> tuple[float, float]:
    """Index and query time of biorab's BM25Retriever (tokenizing included, tie-exact top-1)."""
    from biorab.common.records import CorpusItem
    from biorab.retrieval import build_retriever

    items = [CorpusItem(f"d{i}", text, None, "bench", "bench") for i, text in enumerate(docs)]
    retriever = build_retriever("bm25", {"persist": False}, cache_root=tmp)
    index_s = best_of(lambda: retriever.index(items))
    query_s = best_of(lambda: retriever.search({f"q{i}": q for i, q in enumerate(queries)}, 1))
    return index_s, query_s


def top1_agreement(docs: list[str], queries: list[str], n: int, aligned: bool) -> float:
    """Share of queries whose rank_bm25 top-1 document also has bm25s's top score (ties agree)."""
    import bm25s
    from rank_bm25 import BM25Okapi

    queries = queries[:n]
    if aligned:
        doc_tokens = bm25s.tokenize(docs, return_ids=False, show_progress=False)
        query_tokens = bm25s.tokenize(queries, return_ids=False, show_progress=False)
        fast = bm25s.BM25(method="robertson")
        fast_query_tokens = query_tokens
    else:  # the original: whitespace tokens, no lowercasing; biorab's default on the other side
        doc_tokens = [d.split(" ") for d in docs]
        query_tokens = [q.split(" ") for q in queries]
        fast = bm25s.BM25()
        fast_query_tokens = bm25s.tokenize(queries, return_ids=False, show_progress=False)
        doc_fast = bm25s.tokenize(docs, return_ids=False, show_progress=False)
    fast.index(doc_tokens if aligned else doc_fast, show_progress=False)
    slow = BM25Okapi(doc_tokens)
    agree = 0
    for fast_tokens, slow_tokens in zip(fast_query_tokens, query_tokens, strict=True):
        ids = fast.get_tokens_ids(list(fast_tokens))
        fast_scores = fast.get_scores_from_ids(ids) if ids else np.zeros(len(docs))
        best = int(np.argmax(slow.get_scores(slow_tokens)))
        agree += bool(np.isclose(fast_scores[best], fast_scores.max(), rtol=1e-5, atol=1e-6))
    return agree / len(queries)


def okapi_agreement(docs: list[str], queries: list[str], tmp: str) -> dict[str, float]:
    """rank_bm25 `BM25Okapi` vs biorab's rank_bm25-compatible `bm25` (``method: okapi``) on every query,
    both fed the retriever's own tokens; bm25s's ``robertson`` (idf clipped at 0) alongside.

    ``ties``: rank_bm25's top-1 document has the best biorab score (equal within 1e-9 relative);
    ``same_id``: the same document (both break ties by corpus position); ``max_diff``: the largest
    |score difference| over all (query, document) pairs, okapi vs rank_bm25.
    """
    from rank_bm25 import BM25Okapi

    from biorab.common.records import CorpusItem
    from biorab.retrieval import build_retriever

    items = [CorpusItem(f"d{i}", text, None, "bench", "bench") for i, text in enumerate(docs)]
    ours = {}
    for method in ("okapi", "robertson"):
        params = {"method": method, "dedupe": False, "persist": False}
        ours[method] = build_retriever("bm25", params, cache_root=tmp)
        ours[method].index(items)
    okapi = ours["okapi"]
    slow = BM25Okapi(okapi.tokenize(docs))
    counts = {"okapi_ties": 0, "okapi_same_id": 0, "robertson_ties": 0}
    max_diff = 0.0
    for query, tokens in zip(queries, okapi.tokenize(queries), strict=True):
        reference = slow.get_scores(tokens)
        best = int(np.argmax(reference))
        for method, retriever in ours.items():
            scores = retriever.scores(query)
            tied = bool(np.isclose(scores[best], scores.max(), rtol=1e-9, atol=1e-12))
            counts[f"{method}_ties"] += tied
            if method == "okapi":
                counts["okapi_same_id"] += int(np.argmax(scores)) == best
                max_diff = max(max_diff, float(np.max(np.abs(scores - reference))))
    return {**{k: v / len(queries) for k, v in counts.items()}, "max_diff": max_diff, "n": len(queries)}


def dense_exactness(docs: list[str], queries: list[str], k: int, tmp: str) -> dict[str, float]:
    """biorab's exact dense top-k (faiss IndexFlatIP) vs numpy brute force on the same MiniLM embeddings."""
    from biorab.common.records import CorpusItem
    from biorab.retrieval import build_retriever

    items = [CorpusItem(f"d{i}", text, None, "bench", "bench") for i, text in enumerate(docs)]
    retriever: Any = build_retriever("dense", {"dedupe": False, "persist": False}, cache_root=tmp)
    _, index_s = timed(lambda: retriever.index(items))
    hits, query_s = timed(lambda: retriever.search({f"q{i}": q for i, q in enumerate(queries)}, k))
    query_encoder = retriever.encoders[0]
    scores = query_encoder.encode(queries) @ retriever.embed_corpus(docs).T  # the cached document vectors
    same_ids = same_up_to_ties = 0
    max_diff = 0.0
    for i, row in enumerate(scores):
        order = np.lexsort((np.arange(row.size), -row))[:k]
        got = hits[f"q{i}"]
        got_scores = np.array([h.score for h in got])
        max_diff = max(max_diff, float(np.max(np.abs(got_scores - row[order]))))
        identical = [h.doc_id for h in got] == [f"d{j}" for j in order]
        same_ids += identical
        # Equal texts (ADE has duplicate sentences) and float near-ties may swap places between the two
        # summation orders; the top-k is still exact when each rank's score agrees.
        same_up_to_ties += identical or bool(np.allclose(got_scores, row[order], rtol=0, atol=1e-5))
    return {
        "exact_topk_share": same_ids / len(queries),
        "tie_aware_share": same_up_to_ties / len(queries),
        "max_score_diff": max_diff,
        "encode_index_s": index_s,
        "query_s": query_s,
    }


def run_dataset(name: str, sizes: Sizes, tmp: str) -> None:
    docs, queries = load(name)
    print(f"\n== {name}: {len(docs)} training items (corpus), {len(queries)} test inputs (queries)")
    speed = bm25_speed(docs, queries, sizes)
    index_s, query_s = biorab_bm25_query_time(docs, queries, tmp)
    slow_index, slow_query = speed["rank_bm25_index_s"], speed["rank_bm25_query_s"]
    print(
        f"rank_bm25 BM25Okapi     index {slow_index:7.3f} s | {len(queries)} queries {slow_query:7.2f} s "
        f"(extrapolated from {speed['rank_bm25_measured']})"
    )
    combined = {}
    for label, fast_index, fast_query in (
        ("bm25s BM25.retrieve    ", speed["bm25s_index_s"], speed["bm25s_query_s"]),
        ("biorab bm25 (on bm25s) ", index_s, query_s),
    ):
        combined[label.strip()] = (slow_index + slow_query) / (fast_index + fast_query)
        print(
            f"{label} index {fast_index:7.3f} s | {len(queries)} queries {fast_query:7.3f} s | ratios "
            f"(rank_bm25 / this): index {slow_index / fast_index:.2f}x, "
            f"query {slow_query / fast_query:.0f}x, index+queries {combined[label.strip()]:.0f}x"
        )
    ratio = combined["biorab bm25 (on bm25s)"]
    verdict = "met" if ratio >= 50 else "NOT met"
    print(f"target >= 50x on index+queries time (biorab bm25 vs rank_bm25): {ratio:.0f}x, {verdict}")
    print(
        "  (biorab times include tokenizing; bm25s/rank_bm25 get pre-tokenized input. bm25s scores at index"
    )
    print("  time, so its index is slower than rank_bm25's; BM25.retrieve spends most of its query time in a")
    print("  full-length argpartition; biorab ranks only the documents sharing a term with the query)")
    print(
        f"index peak memory (tracemalloc) bm25s {speed['bm25s_index_mib']:.1f} MiB | "
        f"rank_bm25 {speed['rank_bm25_index_mib']:.1f} MiB"
    )
    n = sizes.rank_bm25_queries
    print(
        f"top-1 agreement on {n} queries: original setup (whitespace tokens) vs biorab default "
        f"{top1_agreement(docs, queries, n, aligned=False):.3f}"
    )
    print_okapi_agreement(docs, queries, tmp)
    dense = dense_exactness(docs[: sizes.dense_docs], queries[: sizes.dense_queries], 10, tmp)
    print(
        f"dense MiniLM, {sizes.dense_docs} docs x {sizes.dense_queries} queries, k=10: faiss top-k == "
        f"numpy top-k: identical ids {dense['exact_topk_share']:.3f}, equal scores at every rank "
        f"{dense['tie_aware_share']:.3f} of queries, max |score diff| {dense['max_score_diff']:.1e} "
        f"(encode+index {dense['encode_index_s']:.1f} s, query {dense['query_s']:.2f} s)"
    )


def print_okapi_agreement(docs: list[str], queries: list[str], tmp: str) -> None:
    agreement = okapi_agreement(docs, queries, tmp)
    verdict = "met" if agreement["okapi_ties"] >= 0.99 else "NOT met"
    print(
        f"rank_bm25-compatible mode (bm25 method=okapi) vs rank_bm25 BM25Okapi, same tokens, all "
        f"{agreement['n']} queries: top-1 agreement ties counted {agreement['okapi_ties']:.4f} "
        f"(target >= 0.99: {verdict}), same id {agreement['okapi_same_id']:.4f}, max |score diff| "
        f"{agreement['max_diff']:.1e} | bm25s robertson (idf clipped at 0) {agreement['robertson_ties']:.4f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller query subsets and dense sizes")
    parser.add_argument("--datasets", default="ade,medmcqa", help="comma-separated staged datasets")
    parser.add_argument("--agreement-only", action="store_true", help="only the rank_bm25 agreement lines")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    import tempfile

    with tempfile.TemporaryDirectory(prefix="biorab-bench-") as tmp:
        for name in args.datasets.split(","):
            if args.agreement_only:
                print(f"\n== {name.strip()}")
                print_okapi_agreement(*load(name.strip()), tmp)
            else:
                run_dataset(name.strip(), sizes, tmp)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(f"\nprocess peak RSS {peak_kib / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
