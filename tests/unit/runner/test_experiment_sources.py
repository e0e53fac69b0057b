"""The experiment sources are found through the registry, in a fixed order, and list their cells."""

from __future__ import annotations

from biorab.common.registry import EXPERIMENTS
from biorab.experiment import ExperimentConfig
from biorab.runner.plan.experiment_source import CellListing, experiment_sources


def test_the_two_kinds_in_name_order() -> None:
    assert EXPERIMENTS.names() == ["biorab", "drugmech"]
    assert [s.name for s in experiment_sources()] == ["biorab", "drugmech"]


def test_a_source_without_its_section_lists_no_cells() -> None:
    cfg = ExperimentConfig.model_validate({"name": "x", "datasets": [{"name": "ade", "limit": 2}],
                                           "backend": {"name": "fake"}})
    biorab, drugmech = experiment_sources()
    (cell,) = biorab.cells(cfg, load_data=False)
    assert cell == CellListing(cfg.cells()[0].cell_id, 2) and cell.cell_id.startswith("ade-test__none__")
    assert drugmech.cells(cfg, load_data=False) == []


def test_drugmech_cells_cannot_be_listed_without_their_query_files() -> None:
    cfg = ExperimentConfig.model_validate({"name": "x", "drugmech": {"query_files": ["delete_pos_ppi_r250"]},
                                           "backend": {"name": "fake"}})
    assert experiment_sources()[1].cells(cfg, load_data=False) is None
