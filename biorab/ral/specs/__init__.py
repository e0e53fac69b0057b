"""The RAL's floor: what a setting, a row and an answer are (`retrieval_spec`, `rows`, `stage_plan`,
`answer`, `probe`, `evidence_order`) and the one stage order (`pipeline.STAGES`, `Pipeline`). Imports
nothing else of `biorab.ral`."""
