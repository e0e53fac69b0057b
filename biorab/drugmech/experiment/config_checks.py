"""Check the ``drugmech:`` section of an experiment config before any work starts (keys named, with the file).

Loads every query file (cheap: JSON), so an unknown name or a malformed file fails at validation, and
checks that the data the prompts need is there: DrugMechDB for the closed world and the factual modes that
describe diseases, PrimeKG for factual negatives outside ``NAMED_DISEASE``.
"""

from __future__ import annotations

from pathlib import Path

from biorab.common.errors import BioRABError, ConfigError
from biorab.experiment import ExperimentConfig


def check_drugmech(
    config: ExperimentConfig, *, path: str | Path | None = None, check_data: bool = True
) -> None:
    """Refuse what the DrugMech cells cannot run; with `check_data`, load the query files and check data.

    Raises:
        ConfigError: naming the dotted key (e.g. ``drugmech.query_files.1``) and the file.
    """
    spec = config.drugmech
    if spec is None:
        return
    if not check_data:
        return
    from biorab.drugmech.experiment.cell_slices import load_query_entry
    from biorab.drugmech.prompts.render import NAMED, needs_drugmechdb
    from biorab.drugmech.queries.query_files import KNOWN_MOA

    needs_moas = False
    for i, entry in enumerate(spec.query_files):
        try:
            qfile = load_query_entry(entry, spec.release_dir).qfile
        except BioRABError as e:
            raise ConfigError(f"cannot load query file {entry!r}: {e}", key=f"drugmech.query_files.{i}",
                              path=path) from e
        factual = qfile.query_type == KNOWN_MOA
        modes = spec.factual_modes(qfile.is_negative)
        settings = [("open", m) for m in modes] if factual else [(w, NAMED) for w in spec.worlds]
        needs_moas |= any(needs_drugmechdb(qfile.query_type, world=w, mode=m) for w, m in settings)
        if factual and qfile.is_negative and spec.primekg is None and any(m != NAMED for m in modes):
            raise ConfigError(f"{qfile.name}: factual negatives outside NAMED_DISEASE are described from "
                              "PrimeKG; set drugmech.primekg to kg.csv, or negative_modes: [NAMED_DISEASE]",
                              key="drugmech.primekg", path=path)
    if spec.primekg is not None and not Path(spec.primekg).expanduser().is_file():
        raise ConfigError(f"PrimeKG file {spec.primekg!r} not found", key="drugmech.primekg", path=path)
    if needs_moas:
        _check_drugmechdb(spec.drugmechdb_dir, path)


def _check_drugmechdb(override: str | None, path: str | Path | None) -> None:
    from biorab.common.paths import drugmechdb_dir

    where = Path(override).expanduser() if override else drugmechdb_dir()
    found = where.is_file() or (where / "indication_paths.yaml").is_file()
    if not found:
        raise ConfigError(f"DrugMechDB (indication_paths.yaml) not found at {where}; the closed world and "
                          "the factual disease descriptions need it",
                          key="drugmech.drugmechdb_dir", path=path)
