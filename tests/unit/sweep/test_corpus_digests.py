"""The planner's corpus digests: equal to the built corpus's, read back from disk without building, and
rebuilt when a file of any dataset the corpus was built from changes (the diverse pool's too)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import biorab.corpora
from biorab.corpora import build_corpus
from biorab.experiment import RetrievalSpec
from biorab.sweep.prompts import CorpusDigests

# (testbed, rate, dataset): diverse(ade_corpus_v2) reads medmcqa's training split, the others do not
DATASETS = ["ade", "chemprot", "git", "pharmkg", "hetionet", "ade_corpus_v2", "semclass", "medmcqa"]
SPECS = [("diverse", None, "ade_corpus_v2"), ("counterfactual", 0.2, "ade"), ("labeled", None, "semclass")]


@pytest.fixture
def data(tmp_path: Path, data_dir: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(data_dir, copy)
    return copy


def count_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every corpus the digest cache builds (it imports `build_corpus` from `biorab.corpora`)."""
    built: list[str] = []
    real = biorab.corpora.build_corpus

    def counting(kind: str, dataset: str, **kwargs: Any) -> Any:
        built.append(f"{kind}:{dataset}")
        return real(kind, dataset, **kwargs)

    monkeypatch.setattr(biorab.corpora, "build_corpus", counting)
    return built


def digests(cache: CorpusDigests, data: Path) -> list[str]:
    return [cache.get(RetrievalSpec(testbed=kind, rate=rate), ds, 0, str(data)) for kind, rate, ds in SPECS]


def built_digests(data: Path) -> list[str]:
    return [build_corpus(kind, ds, rate=rate, seed=0, data_dir=data)[0].digest for kind, rate, ds in SPECS]


def test_digests_are_the_corpora_digests_and_are_reused_from_disk(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = built_digests(data)
    built = count_builds(monkeypatch)
    first = CorpusDigests(tmp_path / "digests.json")
    assert digests(first, data) == expected and built
    first.save()
    built.clear()
    again = CorpusDigests(tmp_path / "digests.json")
    assert digests(again, data) == expected and built == []  # nothing built: all read back


def test_a_changed_pool_file_rebuilds_the_diverse_corpus_only(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = built_digests(data)
    first = CorpusDigests(tmp_path / "digests.json")
    digests(first, data)
    first.save()
    train = data / "medmcqa" / "MedMCQA_train_4000.json"  # JSON lines
    lines = train.read_text(encoding="utf-8").splitlines(keepends=True)
    train.write_text("".join(lines[:-1]), encoding="utf-8")  # one training item fewer
    after = built_digests(data)
    assert after[0] != before[0] and after[1:] == before[1:]
    built = count_builds(monkeypatch)
    assert digests(CorpusDigests(tmp_path / "digests.json"), data) == after
    # only the diverse digest is remade: the diverse corpus built once by its owner, `build_corpus`
    assert built == ["diverse:ade_corpus_v2"]


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_testbed_digest_equals_the_built_corpus(dataset: str, data_dir: Path, tmp_path: Path) -> None:
    # diverse is digested from the labeled corpora, negative_awareness reuses counterfactual 100%'s digest
    cache = CorpusDigests(tmp_path / "digests.json")
    for kind, rate in [
        ("negative_awareness", None),
        ("labeled", None),
        ("unlabeled", None),
        ("diverse", None),
        ("counterfactual", 0.2),
        ("counterfactual", 1.0),
        ("negative_awareness", None),
    ]:
        got = cache.get(RetrievalSpec(testbed=kind, rate=rate), dataset, 3, str(data_dir))
        assert got == build_corpus(kind, dataset, rate=rate, seed=3, data_dir=data_dir)[0].digest, kind


@pytest.mark.parametrize("stored", ['{"some-key": "an old flat digest"}', '{"format": 2, "entr'])
def test_an_old_or_torn_file_is_rebuilt(
    stored: str, data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "digests.json"
    path.write_text(stored, encoding="utf-8")
    expected = built_digests(data)
    built = count_builds(monkeypatch)
    cache = CorpusDigests(path)
    assert digests(cache, data) == expected and built
    cache.save()
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == CorpusDigests.FORMAT
