"""The row store and resume: append-only Parquet shards per cell (`shards`), the content key that decides
which rows on disk still count (`instance_key`), and one run per output directory (`run_lock`)."""
