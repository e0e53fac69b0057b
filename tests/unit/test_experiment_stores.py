"""Content-keyed stores, cache keys, append-only shards, hit selection and MLflow param flattening."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

from biorab.caches import ContentStore, GenerationStore, HitStore, generation_key, hits_key
from biorab.common.records import Example, Generation, Hit, OutputConstraint, Prompt
from biorab.generation.base import SamplingParams
from biorab.ral.specs.rows import example_row
from biorab.runner.store.shards import done_ids, latest_rows, read_all_rows, shard_files, write_shards
from biorab.tracking.flatten import flatten


def test_generation_key_covers_prompt_stop_constraint_and_sampling() -> None:
    p = Prompt("x/test/0", "Q: a?", stop=("\n",), constraint=OutputConstraint(choices=("1", "0")))
    base = generation_key("m1", p, SamplingParams())
    assert base == generation_key("m1", Prompt("other/id", "Q: a?", ("\n",), p.constraint), SamplingParams())
    variants = [
        generation_key("m2", p, SamplingParams()),
        generation_key("m1", Prompt("x", "Q: b?", ("\n",), p.constraint), SamplingParams()),
        generation_key("m1", Prompt("x", "Q: a?", (), p.constraint), SamplingParams()),
        generation_key("m1", Prompt("x", "Q: a?", ("\n",), None), SamplingParams()),
        generation_key("m1", p, SamplingParams(seed=1)),
        generation_key("m1", p, SamplingParams(max_tokens=8)),
    ]
    assert len({base, *variants}) == 7


def test_hits_key_depends_on_every_part() -> None:
    args = {"retriever": "r", "corpus": "c", "query": "q", "k": 1, "keep_ties": True, "tie_pool": 8}
    keys = {hits_key(**args)} | {hits_key(**{**args, name: value}) for name, value in
                                 [("retriever", "r2"), ("corpus", "c2"), ("query", "q2"), ("k", 2),
                                  ("keep_ties", False), ("tie_pool", 4)]}
    assert len(keys) == 7
    # without ties the pool size is irrelevant
    assert hits_key(**{**args, "keep_ties": False}) == hits_key(**{**args, "keep_ties": False, "tie_pool": 0})


def test_generation_store_refuses_errors(tmp_path: Path) -> None:
    store = GenerationStore(tmp_path / "g.sqlite")
    store.put_many({"a": Generation("1", 3, 1, "stop", {"1": -0.1}), "b": Generation("", error="boom")})
    got = store.get_many(["a", "b", "c"])
    assert list(got) == ["a"]
    assert got["a"] == Generation("1", 3, 1, "stop", {"1": -0.1})


def test_hit_store_round_trip(tmp_path: Path) -> None:
    store = HitStore(tmp_path / "h.sqlite")
    hits = [Hit("d1", 2.5, 0, "key", "val", "ade")]
    store.put_many({"k": hits})
    assert store.get_many(["k"]) == {"k": hits}


def _writer(path: str, start: int) -> None:
    store = ContentStore(path)
    for i in range(start, start + 200):
        store.put_many({f"k{i % 300}": f"v{i % 300}"})


def test_content_store_is_safe_across_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sqlite")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, start)) for start in (0, 100)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    store = ContentStore(path)
    assert len(store) == 300  # overlapping keys written once, none lost
    assert store.get_many(["k0", "k299"]) == {"k0": "v0", "k299": "v299"}


def _row(i: int, error: str | None, t: float) -> dict[str, object]:
    row = example_row("cell", i, Example(f"ds/test/{i}", "qa", "ds", "test", "q", "(A)"))
    row.update(gen_text="(A)" if error is None else "", gen_error=error, written_at=t, attempt="a")
    return row


def test_shards_are_atomic_idempotent_and_successful_rows_win(tmp_path: Path) -> None:
    rows = [_row(0, None, 1.0), _row(1, "BackendError: 503", 1.0)]
    first = write_shards(rows, tmp_path, "att1")
    again = write_shards(rows, tmp_path, "att1")  # a retried write task rewrites the same file
    assert first == again and len(shard_files(tmp_path / "cell")) == 1
    assert done_ids(tmp_path / "cell") == {"ds/test/0"}
    write_shards([_row(1, None, 2.0)], tmp_path, "att2")
    assert len(read_all_rows(tmp_path / "cell")) == 3  # the failed attempt stays as history
    best = latest_rows(read_all_rows(tmp_path / "cell"))
    assert {k: v["gen_error"] for k, v in best.items()} == {"ds/test/0": None, "ds/test/1": None}
    assert not list((tmp_path / "cell").glob(".tmp-*"))


def test_flatten_config() -> None:
    flat = flatten({"name": "x", "datasets": [{"name": "ade", "limit": None}], "backend": {"params": {}}})
    assert flat == {"name": "x", "datasets.0.name": "ade", "datasets.0.limit": "None", "backend.params": "{}"}
    assert len(flatten({"v": "x" * 7000})["v"]) == 6000


def test_generation_keys_of_existing_configs_are_unchanged() -> None:
    """Keys pinned from the code before guided decoding: caches of unchanged behaviour stay valid."""
    from biorab.common.records import OutputConstraint

    choices = Prompt("x", "Q: a?", ("\n",), OutputConstraint(choices=("y", "n")))
    regex = Prompt("x", "Q: a?", ("\n",), OutputConstraint(regex="[a-z]+"))
    free = Prompt("x", "Q: a?", ("\n",))
    old_default = SamplingParams(constrained=False)
    assert generation_key("m1", choices, old_default) == (
        "6f3d564e2e2a8f7076417c1fb3ad3f0da25fe577177b64b31c94c49c1e8a4699")
    assert generation_key("m1", regex, old_default) == (
        "c2484e8acc767281dfa12df02b958364347bdaed68f6f7fbd95bbdba038afb65")
    assert generation_key("m1", choices, SamplingParams(constrained=True)) == (  # argmax label, as before
        "98f5392520f8780320a79d1ad885d909f0f13ae9283be5a404235aebd538b0ed")
    # no constraint: guided decoding on by default changes nothing, so neither does the key
    assert generation_key("m1", free, SamplingParams()) == (
        "d90052102b98891688422b373c2b0d028fec9698d6302dcfc2766b1708bb5682")
    # a regex is now enforced by the transformers backend: its constrained key must change
    assert generation_key("m1", regex, SamplingParams(constrained=True)) != (
        "4b80e006579d28fd2d1b47e989422a97f1f85a795479ba469a56baea200ad762")
