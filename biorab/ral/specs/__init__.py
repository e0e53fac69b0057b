"""The RAL's floor: what a setting, a row, a cell and an answer are (`retrieval_spec`, `rows`,
`stage_plan`, `cell_records`, `answer`, `probe`, `evidence_order`) and the one stage order
(`pipeline.STAGES`, `Pipeline`). Imports nothing else of `biorab.ral`."""
