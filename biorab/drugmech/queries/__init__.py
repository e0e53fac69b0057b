"""The query files of the release (and of ``biorab drugmech generate``): `query_files` (typed records, the
one resolver of a query-file name). Imports nothing."""
