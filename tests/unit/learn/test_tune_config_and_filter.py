"""Tune job configs (the shipped jobs validate; mistakes name the file and key) and the retrieval hit
filter seam (cache keys unchanged without a filter, the filter's choice applied and keyed when set)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from biorab.common.errors import ConfigError
from biorab.common.records import Hit
from biorab.ral.parts.retriever import CachedRetriever, Selection
from training.config import load_tune_config, trial_params

JOBS = Path(__file__).resolve().parents[3] / "jobs"


@pytest.mark.parametrize("name", ["tune_encoder", "tune_peft", "tune_encoder_gpu", "tune_peft_gpu"])
def test_shipped_tune_jobs_validate(name: str) -> None:
    cfg = load_tune_config(JOBS / f"{name}.yaml")
    assert cfg.name.replace("-", "_").startswith(name.replace("_gpu", ""))
    if name == "tune_peft_gpu":  # the original's QLoRA recipe
        p = cfg.peft
        assert (p.lora.r, p.lora.alpha, p.lora.dropout, p.lr, p.quantize) == (64, 32, 0.1, 2e-4, "nf4")


def test_config_mistakes_name_file_and_key(tmp_path: Path) -> None:
    data = yaml.safe_load((JOBS / "tune_peft.yaml").read_text())
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**data, "peft": {**data["peft"], "lora_rank": 8}}))
    with pytest.raises(ConfigError, match=r"bad\.yaml, key 'peft\.lora_rank': unknown key"):
        load_tune_config(bad)
    bad.write_text(yaml.safe_dump({**data, "search": {"lora.rank": {"grid": [4, 8]}}}))
    with pytest.raises(ConfigError, match="no parameter 'lora.rank'"):
        load_tune_config(bad)


def test_trial_params_apply_dotted_overrides() -> None:
    cfg = load_tune_config(JOBS / "tune_peft.yaml")
    params = trial_params(cfg, {"lr": 0.5, "lora.r": 4})
    assert params["lr"] == 0.5 and params["lora"]["r"] == 4 and params["lora"]["alpha"] == 16


class _Index:
    fingerprint = "bm25:x"

    def search(self, queries: dict[str, str], k: int) -> dict[str, list[Hit]]:
        return {q: [Hit(f"d{i}", 10.0 - i, i, f"key {i}", "1") for i in range(k)] for q in queries}


class _KeepOdd:
    fingerprint = "keep-odd"

    def apply(self, query: str, hits: list[Hit]) -> list[Hit]:
        return [h for h in hits if int(h.doc_id[1:]) % 2 == 1]


def test_hit_filter_is_applied_and_keyed_only_when_set() -> None:
    from biorab.caches import hits_key

    selection = Selection(k=4, keep_ties=False)
    plain = CachedRetriever(_Index(), "c", selection)
    filtered = CachedRetriever(_Index(), "c", selection, hit_filter=_KeepOdd())
    assert plain.key("q") == hits_key(retriever="bm25:x", corpus="c", query="q", k=4, keep_ties=False,
                                      tie_pool=8, dedupe=True)  # fmt: skip
    assert filtered.key("q") != plain.key("q")
    assert [h.doc_id for h in plain.search({"a": "q"})["a"].hits] == ["d0", "d1", "d2", "d3"]
    assert [h.doc_id for h in filtered.search({"a": "q"})["a"].hits] == ["d1", "d3"]


def test_retrieval_filter_leaves_existing_fingerprints_unchanged() -> None:
    from biorab.experiment import RetrievalSpec

    spec = RetrievalSpec(testbed="labeled", retriever="bm25")
    assert "filter" not in spec.fingerprint_json()
    with_filter = RetrievalSpec(testbed="labeled", retriever="bm25", filter={"encoder": "models:/e@best"})
    assert with_filter.fingerprint_json()["filter"] == {"encoder": "models:/e@best", "threshold": None}


def test_backend_adapter_accepts_models_uris_under_either_name() -> None:
    from biorab.generation.hf.backend import TransformersBackend

    params = TransformersBackend.Params.model_validate({"adapter": "models:/biorab-ral-adapter@best"})
    assert params.adapter_path == "models:/biorab-ral-adapter@best"
    assert "adapter" not in TransformersBackend.Params().model_dump()  # digests keep the field's own name
