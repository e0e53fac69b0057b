"""Seeded held-out splits (`biorab.datasets.holdout.hold_out`): pinned on the staged Hetionet train split."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

import biorab.datasets.holdout as holdout_module
from biorab.common.errors import ConfigError
from biorab.common.records import Example
from biorab.datasets import load_dataset
from biorab.datasets.holdout import hold_out


def _rows(n: int) -> list[Example]:
    return [Example(f"d/train/{i}", "qa", "d", "train", f"q{i}", "(A)") for i in range(n)]


def test_doctests() -> None:
    assert doctest.testmod(holdout_module).failed == 0


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_pinned_split_of_hetionet_train(data_dir: Path) -> None:
    examples = load_dataset("hetionet", "train", data_dir=data_dir)
    split = hold_out(examples, fraction=0.1, seed=0)
    assert [e.id for e in split.held_out[:3]] == ["hetionet/train/0", "hetionet/train/4", "hetionet/train/6"]
    assert split.record == {
        "source": ["hetionet/train"],
        "method": "random.Random(seed).sample over row indices",
        "seed": 0,
        "fraction": 0.1,
        "n_total": 4000,
        "n_held_out": 400,
        "held_out_ids_sha256": "bea9e53ec1eb4136c4fc28c577ce69e5ff08d3bb520eba917542e98fd0c3a896",
    }
    # A partition, both parts in source order, nothing dropped or duplicated.
    assert len(split.kept) == 3600

    def index(e: Example) -> int:
        return int(e.id.rsplit("/", 1)[1])

    assert sorted([*split.kept, *split.held_out], key=index) == examples
    assert [index(e) for e in split.kept] == sorted(index(e) for e in split.kept)
    # Same seed, same split; another seed, another split.
    assert hold_out(examples, size=400, seed=0).held_out == split.held_out
    assert (
        hold_out(examples, fraction=0.1, seed=1).record["held_out_ids_sha256"]
        != (split.record["held_out_ids_sha256"])
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of 'fraction' and 'size'"),
        ({"fraction": 0.5, "size": 2}, "exactly one of 'fraction' and 'size'"),
        ({"fraction": 1.0}, "between 0 and 1"),
        ({"fraction": 0.01}, "holding out 0 of 10 examples would leave a part empty"),
        ({"size": 10}, "holding out 10 of 10 examples"),
    ],
)
def test_bad_requests_are_config_errors(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        hold_out(_rows(10), **kwargs)  # type: ignore[arg-type]
