"""The library's floor: the records every layer passes (`records`), errors, paths, the
registries, the config loader and its sections, and the small file utilities. Nothing here imports any other
package of `biorab` (`tests/unit/test_import_direction.py`), so every package may import it."""
