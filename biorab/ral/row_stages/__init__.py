"""The steps on batches of rows, the executors' side of the RAL: the stages (`stages`, `retrieval_stage`,
`probe_stage`), a run's pipeline on rows (`row_pipeline.RowPipeline`) and the rows finished from the cache
alone (`cached_rows`). Built on `biorab.ral.parts` and `biorab.ral.specs`."""
