"""Evidence attribution: why a cell answered what it did, per instance, from the rows on disk.

Each retrieved hit is tagged from the testbed's corruption ledger and the leakage rule (`evidence`); each
answer is compared with its hits and gold (`answers`) and with the cell's no-retrieval twin (`twin`); the
per-cell rates with bootstrap CIs come from those flags (`rates`); `cells` writes
``<cell dir>/attribution.parquet`` and adds the rates to the cell's results at scoring time. No model is
run: a resumed, cached or re-tracked run gets the same attribution.
"""
