"""Retrieval-setting options `awareness_probe` and `dedupe`: defaults, validation errors naming the key and
the file, stable fingerprints and cache keys for existing configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.caches import hits_key
from biorab.common.config_loading import load_config
from biorab.common.errors import ConfigError
from biorab.experiment import ExperimentConfig, RetrievalSpec
from biorab.generation.base import SamplingParams
from biorab.ral import parse_judgement, probe_sampling
from biorab.retrieval.selection import Selection, select_hits
from biorab.tasks import AWARENESS_MAX_TOKENS


def write(tmp_path: Path, retrieval: str, extra: str = "") -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(f"name: opts\ndatasets: [{{name: ade}}]\nretrieval:\n{retrieval}\n{extra}", "utf-8")
    return path


def test_probe_default_per_testbed() -> None:
    assert RetrievalSpec(testbed="negative_awareness").probes is True
    assert RetrievalSpec(testbed="labeled").probes is False
    assert RetrievalSpec(testbed="none").probes is False
    assert RetrievalSpec(testbed="labeled", awareness_probe=True, probe_any_testbed=True).probes is True
    assert RetrievalSpec(testbed="counterfactual", rate=1.0, awareness_probe=True).probes is True
    assert RetrievalSpec(testbed="negative_awareness", awareness_probe=False).probes is False


@pytest.mark.parametrize("entry", ["{testbed: labeled, awareness_probe: true}",
                                   "{testbed: counterfactual, rate: 0.8, awareness_probe: true}",
                                   "{testbed: diverse, awareness_probe: true}"])
def test_probe_where_its_rates_are_undefined_is_refused(tmp_path: Path, entry: str) -> None:
    # The rates count "wrong answer, example judged negative": every probed example must be counterfactual.
    path = write(tmp_path, f"  - {entry}")
    with pytest.raises(ConfigError, match=r"retrieval\.0.*awareness_probe: the negative-awareness rates are "
                       r"defined on a fully counterfactual corpus.*probe_any_testbed: true") as e:
        load_config(ExperimentConfig, path)
    assert str(path) in str(e.value)
    allowed = write(tmp_path, f"  - {entry[:-1]}, probe_any_testbed: true}}")
    spec = load_config(ExperimentConfig, allowed).retrieval[0]
    assert spec.probes is True
    # The permission changes no row: the cell id is that of the same setting without it.
    assert "probe_any_testbed" not in spec.fingerprint_json()


def test_probe_without_hits_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "  - {testbed: none, awareness_probe: true}")
    with pytest.raises(ConfigError, match=r"retrieval\.0.*awareness_probe needs retrieved examples") as e:
        load_config(ExperimentConfig, path)
    assert str(path) in str(e.value)


def test_probe_with_the_vllm_processor_is_refused(tmp_path: Path) -> None:
    from biorab.runner.checks.validate import load_experiment

    engine = "resources: {llm_engine: vllm_processor}\nbackend: {name: vllm, params: {model: m}}\n"
    path = write(tmp_path, "  - {testbed: negative_awareness}", engine)
    with pytest.raises(ConfigError, match=r"llm_engine vllm_processor cannot run the awareness probe") as e:
        load_experiment(path, check_data=False)
    assert e.value.key == "retrieval.0.awareness_probe"
    ok = write(tmp_path, "  - {testbed: negative_awareness, awareness_probe: false}", engine)
    assert load_experiment(ok, check_data=False).resources.llm_engine == "vllm_processor"


def test_dedupe_has_one_switch(tmp_path: Path) -> None:
    # `params.dedupe` is the old spelling of the entry's `dedupe`: read as it, with a warning; the retriever's
    # switch is then set from the selection (one copy).
    old = write(tmp_path, "  - {testbed: labeled, params: {k1: 1.2, dedupe: false}}")
    with pytest.warns(FutureWarning, match="params.dedupe is deprecated"):
        spec = load_config(ExperimentConfig, old).retrieval[0]
    assert (spec.dedupe, spec.params) == (False, {"k1": 1.2})
    assert spec.retriever_params == {"k1": 1.2, "dedupe": False}
    path = write(tmp_path, "  - {testbed: labeled, dedupe: false, params: {dedupe: true}}")
    with pytest.raises(ConfigError, match=r"retrieval\.0.*contradicts dedupe=False"):
        load_config(ExperimentConfig, path)
    with pytest.raises(ConfigError, match=r"retrieval\.0.*params\.keep_ties: ties are a selection setting"):
        load_config(ExperimentConfig, write(tmp_path, "  - {testbed: labeled, params: {keep_ties: true}}"))
    with pytest.raises(ConfigError, match=r"retrieval\.0\.dedupe"):
        load_config(ExperimentConfig, write(tmp_path, "  - {testbed: labeled, dedupe: sometimes}"))


def test_retriever_params_carry_dedupe_only_when_off() -> None:
    assert RetrievalSpec(testbed="labeled", params={"k1": 1.2}).retriever_params == {"k1": 1.2}
    spec = RetrievalSpec(testbed="labeled", dedupe=False, params={"k1": 1.2})
    assert spec.retriever_params == {"k1": 1.2, "dedupe": False}


def test_fingerprints_of_existing_configs_do_not_change() -> None:
    # Cell ids computed with the code before these options existed: defaults must keep them (resume).
    # Those configs sampled unguided (`constrained: false`, the default then); guided decoding is the
    # default now and writes other rows, so only configs that keep it off keep their ids.
    unguided = {"name": "fp", "datasets": [{"name": "ade"}], "sampling": {"constrained": False}}
    cfg = ExperimentConfig.model_validate({**unguided, "retrieval": [
        {"testbed": "none"}, {"testbed": "labeled", "retriever": "bm25", "k": 3}]})
    assert [c.cell_id for c in cfg.cells()] == [
        "ade-test__none__7b16955b49", "ade-test__labeled-bm25-k3__20d40e27be"]
    guided = ExperimentConfig.model_validate({**unguided, "sampling": {}, "retrieval": [{"testbed": "none"}]})
    assert guided.cells()[0].cell_id == "ade-test__none__bd52b344d0"
    explicit = ExperimentConfig.model_validate({**unguided, "retrieval": [
        {"testbed": "labeled", "retriever": "bm25", "k": 3, "dedupe": True, "awareness_probe": False}]})
    assert explicit.cells()[0].cell_id == "ade-test__labeled-bm25-k3__20d40e27be"
    # A probing or duplicate-keeping setting writes other rows: its cell id changes (it was f9fd6ca686).
    na = ExperimentConfig.model_validate({**unguided, "retrieval": [{"testbed": "negative_awareness"}]})
    assert na.cells()[0].cell_id == "ade-test__negative_awareness-bm25-k1__ff7a6e8492"
    dups = ExperimentConfig.model_validate({**unguided, "retrieval": [
        {"testbed": "labeled", "retriever": "bm25", "k": 3, "dedupe": False}]})
    assert dups.cells()[0].label == "ade-test__labeled-bm25-k3-dups"
    assert not dups.cells()[0].cell_id.endswith("20d40e27be")


def test_exclude_test_duplicates_changes_ids_and_keys_only_when_on() -> None:
    unguided = {"name": "fp", "datasets": [{"name": "ade"}], "sampling": {"constrained": False}}
    entry = {"testbed": "labeled", "retriever": "bm25", "k": 3}
    off = ExperimentConfig.model_validate(
        {**unguided, "retrieval": [{**entry, "exclude_test_duplicates": False}]})
    assert off.cells()[0].cell_id == "ade-test__labeled-bm25-k3__20d40e27be"  # as pinned above
    on = ExperimentConfig.model_validate(
        {**unguided, "retrieval": [{**entry, "exclude_test_duplicates": True}]})
    assert on.cells()[0].label == "ade-test__labeled-bm25-k3-notestdups"
    assert not on.cells()[0].cell_id.endswith("20d40e27be")
    args = {"retriever": "r", "corpus": "c", "query": "q", "k": 3, "keep_ties": False, "tie_pool": 8}
    assert hits_key(**args) == hits_key(**args, exclude_test_duplicates=False)
    assert hits_key(**args) != hits_key(**args, exclude_test_duplicates=True)
    assert Selection(k=3).key_fields() == Selection(k=3, exclude_test_duplicates=False).key_fields()
    assert Selection(k=3, exclude_test_duplicates=True).key_fields()["exclude_test_duplicates"] is True


def test_hits_key_changes_only_without_dedupe() -> None:
    args = {"retriever": "r", "corpus": "c", "query": "q", "k": 3, "keep_ties": False, "tie_pool": 8}
    assert hits_key(**args) == hits_key(**args, dedupe=True)
    assert hits_key(**args) != hits_key(**args, dedupe=False)


def test_select_hits_dedupe_switch() -> None:
    from biorab.common.records import Hit

    hits = [Hit("a", 3.0, 0, "s", "1"), Hit("b", 2.0, 1, "s", "1"), Hit("c", 1.0, 2, "t", "0")]
    assert [h.doc_id for h in select_hits(hits, Selection(k=3, keep_ties=False))] == ["a", "c"]
    keep = Selection(k=3, keep_ties=False, dedupe=False)
    assert [h.doc_id for h in select_hits(hits, keep)] == ["a", "b", "c"]


def test_probe_sampling_and_judgement_parsing() -> None:
    sampling = probe_sampling(SamplingParams(max_tokens=64, stop=("\n",), seed=3))
    assert sampling.max_tokens == AWARENESS_MAX_TOKENS and sampling.seed == 3 and sampling.stop == ("\n",)
    assert parse_judgement("False", "robust") == "False"
    assert parse_judgement("True-The retrieved example is not a negative example", "robust") == "True"
    assert parse_judgement("True-The retrieved example is not a negative example", "strict_original") is None
    assert parse_judgement("maybe", "robust") is None
