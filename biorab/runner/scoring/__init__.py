"""Scoring a run from the rows on disk: each cell's metrics and ``summary.json`` (`cell_metrics`), the
metrics some cells add (`extra_metrics`) and the markdown ``report.md`` (`run_report`)."""
