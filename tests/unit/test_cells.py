"""A cell plan is a dataset slice or described by its source's own `info`: each field means one thing, and
summary.json and MLflow ask the plan for its columns."""

from __future__ import annotations

import pytest

from biorab.common.errors import BioRABError
from biorab.drugmech.experiment.spec import DrugMechCellInfo, drugmech_info
from biorab.experiment import ExperimentConfig, RetrievalSpec
from biorab.ral.specs.cell_records import CellPlan
from biorab.tracking.cell_runs import cell_setting

INFO = DrugMechCellInfo("change_pos_dpi_r250", "CHANGE_LINK", "open", None, 1)
SOURCE_PLAN = CellPlan(
    cell_id="dm-x__open__run1__0123456789",
    label="dm-x__open__run1",
    task="drugmech",
    seed=0,
    parser="robust",
    labels=None,
    renders=False,
    parses=False,
    source="drugmech",
    info=INFO,
)
SLICE_PLAN = CellPlan(
    cell_id="ade-test__labeled-bm25-k1__abc",
    label="ade-test__labeled-bm25-k1",
    task="triple_extraction",
    seed=0,
    parser="robust",
    labels=None,
    dataset="ade",
    split="test",
    retrieval=RetrievalSpec(testbed="labeled", k=1, method="none"),
)


def test_a_source_cell_is_described_by_its_info() -> None:
    assert SOURCE_PLAN.columns() == {
        "task": "drugmech",
        "query_file": "change_pos_dpi_r250",
        "query_type": "CHANGE_LINK",
        "world": "open",
        "mode": None,
        "run": 1,
    }
    assert (SOURCE_PLAN.retrieves, SOURCE_PLAN.probes, SOURCE_PLAN.corpus_method) == (False, False, "none")
    with pytest.raises(
        BioRABError,
        match=r"cell dm-x__open__run1__0123456789 \(from drugmech\) is not a "
        "dataset slice",
    ):
        SOURCE_PLAN.dataset_setting()
    assert drugmech_info(SOURCE_PLAN) is INFO
    with pytest.raises(BioRABError, match="is not a DrugMech cell"):
        drugmech_info(SLICE_PLAN)


def test_a_dataset_slice_is_described_by_its_dataset_and_retrieval() -> None:
    assert SLICE_PLAN.columns() == {
        "dataset": "ade",
        "split": "test",
        "task": "triple_extraction",
        "testbed": "labeled",
        "retriever": "bm25",
    }
    assert SLICE_PLAN.dataset_setting() == ("ade", SLICE_PLAN.retrieval)
    assert SLICE_PLAN.retrieves and not SLICE_PLAN.probes


def test_mlflow_setting_of_each_kind() -> None:
    config = ExperimentConfig.model_validate(
        {"name": "x", "datasets": [{"name": "ade"}], "backend": {"name": "fake"}}
    )
    assert cell_setting(config, SOURCE_PLAN) == {
        "model": "fake",
        "backend": "fake",
        "model_id": "",
        "task": "drugmech",
        "seed": "0",
        "parser": "robust",
        "query_file": "change_pos_dpi_r250",
        "query_type": "CHANGE_LINK",
        "world": "open",
        "mode": "",
        "run": "1",
    }
    setting = cell_setting(config, SLICE_PLAN)
    assert {k: setting[k] for k in ("dataset", "split", "testbed", "retriever", "k", "method")} == {
        "dataset": "ade",
        "split": "test",
        "testbed": "labeled",
        "retriever": "bm25",
        "k": "1",
        "method": "none",
    }
