"""A template or parser that does not fit its dataset's task is refused before launch (issue 45 item 2):
a misfit never raises during a run (every answer would be a silent parse failure), so it is found by
`biorab.runner.checks.task_fit` and listed with the grid's other problems by `biorab validate` and
`biorab sweep`, exit 2, nothing started."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from biorab.common import labels as label_sets
from biorab.common.registry import DATASETS, dataset_task
from biorab.runner.checks.task_fit import fit_problems, unread_answers, unread_judgements
from biorab.tasks.template_catalog import template_variants


def test_every_staged_template_and_parser_fits() -> None:
    checked = 0
    for dataset in DATASETS.names():
        if dataset_task(dataset) is None:  # `byo`: its task is a parameter
            continue
        for variant in template_variants(dataset):
            for parser in ("robust", "strict_original"):
                assert fit_problems(dataset, variant, parser, probes=True) == [], (dataset, variant, parser)
                checked += 1
    # 9 datasets with a task: 7 link-prediction variants x 2 (hetionet, pharmkg), 6 triple variants x 3
    # (ade, chemprot, git), 5 common variants x 4 (ade_corpus_v2, semclass, medmcqa, bionli); x 2 parsers
    assert checked == (7 * 2 + 6 * 3 + 5 * 4) * 2


def test_a_parser_that_cannot_read_the_templates_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    # SemClass's template asks for "y" / "n"; rows scored over ("yes", "no"): the strict rule (the first
    # line must equal a label) reads neither, the robust one maps y -> yes and n -> no (its synonyms).
    monkeypatch.setitem(label_sets.LABELS, "semclass", ("yes", "no"))
    assert fit_problems("semclass", "default", "robust") == []
    assert fit_problems("semclass", "default", "strict_original") == [
        "parser 'strict_original' does not read the answers template 'default' asks of dataset 'semclass' "
        "(classification): 'y' -> a parse failure, 'n' -> a parse failure; every such answer would be a "
        "parse failure"]


def test_two_answers_read_as_one_label() -> None:
    # "y" and "yes" both read as "yes": two answers the prompt tells apart would be scored as one
    assert unread_answers("classification", ["yes", "y", "no"], "robust", ("yes", "no")) == [
        ("y", "'yes', as 'yes'")]
    # an open task (triples) needs no label membership: the relation set is no answer set
    assert unread_answers("triple_extraction", ["a|effect|b"], "strict_original", ("effect", "dosage")) == []
    assert unread_answers("triple_extraction", ["a|effect"], "robust", ("effect", "dosage")) == [
        ("a|effect", "a parse failure")]


def test_probe_answers_read_back() -> None:
    assert unread_judgements("robust") == [] and unread_judgements("strict_original") == []


def test_a_template_of_another_task(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(DATASETS.get("hetionet"), "task", "classification")
    assert fit_problems("hetionet", "bm25", "robust") == [
        "template 'bm25' of dataset 'hetionet' is written for task 'link_prediction', but the dataset's "
        "rows are 'classification' instances (parsed and scored as 'classification')"]


@pytest.fixture
def keep_signal_handlers() -> Iterator[None]:
    """`biorab sweep` installs its stop handlers in this process; put pytest's back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_a_sweep_whose_template_and_parser_do_not_fit(tmp_path: Path, data_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str],
                                                      keep_signal_handlers: None) -> None:
    from biorab.cli.main import main

    monkeypatch.setitem(label_sets.LABELS, "semclass", ("yes", "no"))
    monkeypatch.setattr(DATASETS.get("hetionet"), "task", "classification")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf-home"))
    sweep = {"name": "misfit", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
             "parser": "strict_original",
             "models": {"nowhere": {"backend": "vllm", "model": "nobody/no-such-model", "size_b": 1}},
             "matrix": {"models": ["nowhere"], "datasets": ["semclass", "hetionet", "medmcqa"],
                        "retrievers": ["none", "bm25"]},
             "tracking": {"enabled": False}}
    path = tmp_path / "misfit.yaml"
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")
    for command in ("validate", "sweep"):
        monkeypatch.setattr(sys, "argv", ["biorab", command, str(path)])
        with pytest.raises(SystemExit) as stop:
            main()
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        # the model, then per template (noexample for none, bm25): SemClass's parser misfit and Hetionet's
        # template of another task; MedMCQA fits
        assert "5 problem(s) found before launch, nothing was started" in err, err
        assert "models.nowhere: model 'nobody/no-such-model' is no local folder" in err
        for variant in ("noexample", "bm25"):
            assert f"parser 'strict_original' does not read the answers template {variant!r} asks of " \
                   "dataset 'semclass' (classification): 'y' -> a parse failure" in err
            assert f"template {variant!r} of dataset 'hetionet' is written for task 'link_prediction'" in err
        assert "medmcqa" not in err
    assert not (tmp_path / "runs").exists()


def test_a_run_config_whose_parser_does_not_fit(tmp_path: Path, data_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`biorab run` and `biorab validate` of a run config check the same fit (`check_experiment`)."""
    from biorab.common.errors import ConfigError
    from biorab.experiment import ExperimentConfig
    from biorab.runner.checks.validate import check_experiment

    monkeypatch.setitem(label_sets.LABELS, "semclass", ("yes", "no"))
    config = ExperimentConfig.model_validate({
        "name": "r", "data_dir": str(data_dir), "parser": "strict_original", "backend": {"name": "fake"},
        "datasets": [{"name": "medmcqa"}, {"name": "semclass"}],
        "retrieval": [{"testbed": "none"}]})
    with pytest.raises(ConfigError) as refused:
        check_experiment(config, path="r.yaml")
    assert refused.value.key == "retrieval.0.template"
    assert "parser 'strict_original' does not read the answers template 'default' asks of dataset " \
           "'semclass'" in str(refused.value)
    check_experiment(config.model_copy(update={"parser": "robust"}), path="r.yaml")  # robust reads y -> yes
