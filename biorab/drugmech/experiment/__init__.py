"""DrugMech as an experiment source of `biorab run`: the ``drugmech:`` config section (`spec`), its cells
and rows (`cell_slices`), their scoring from disk (`cell_metrics`), config checks (`config_checks`) and
the `source.DrugMechSource` that the runner finds in `biorab.common.registry.EXPERIMENTS`. Imports nothing."""
