"""A loader for a user-supplied PrimeKG ``kg.csv`` (spec §1.3): drug–disease relations and disease neighbours.

PrimeKG itself cannot be staged here; users who have it (Harvard Dataverse doi:10.7910/DVN/IXA7BM) pass its
path. The file has 12 columns: ``relation, display_relation, x_index, x_id, x_type, x_name, x_source,
y_index, y_id, y_type, y_name, y_source``. A node id is ``f"{source}:{id}"`` (``DrugBank:DB00203``,
``MONDO:20989``). Every edge appears in both directions; the disease -> drug direction of the three
drug–disease relations is renamed ``rev-<relation>``. Only what the benchmark reads is kept in memory: the
drug and disease nodes, the drug–disease relations, and each disease's phenotype, exposure and gene/protein
neighbours (the full file has ~8 million rows).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from biorab.common.errors import DataError

COLUMNS: tuple[str, ...] = (
    "relation", "display_relation", "x_index", "x_id", "x_type", "x_name", "x_source",
    "y_index", "y_id", "y_type", "y_name", "y_source",
)
DRUG_DISEASE_RELATIONS: tuple[str, ...] = ("indication", "contraindication", "off-label use")
NEIGHBOUR_TYPES = frozenset({"effect/phenotype", "exposure", "gene/protein"})
DRUG_TYPE, DISEASE_TYPE = "drug", "disease"


@dataclass
class PrimeKG:
    """The drug–disease part of PrimeKG.

    Attributes:
        drugs: drug node id -> name, in first-seen order.
        diseases: disease node id -> name, in first-seen order.
        relations: (drug id, disease id) -> the drug–disease relations between them.
        neighbours: disease id -> ``(node type, name)`` of its phenotype/exposure/gene neighbours, in file
            order, ``rev-*`` edges excluded.
    """

    drugs: dict[str, str] = field(default_factory=dict)
    diseases: dict[str, str] = field(default_factory=dict)
    relations: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    neighbours: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))

    def drug_disease_relations(self, drug: str, disease: str) -> set[str]:
        """The relations (``indication``, ``contraindication``, ``off-label use``) from drug to disease."""
        return set(self.relations.get((drug, disease), ()))

    def has_indication(self, drug: str, disease: str) -> bool:
        return "indication" in self.relations.get((drug, disease), ())

    def pairs_with(self, relation: str) -> list[tuple[str, str]]:
        """(drug, disease) pairs linked by `relation`, in file order."""
        return [pair for pair, rels in self.relations.items() if relation in rels]

    def disease_neighbours(self, disease_id: str, /) -> list[tuple[str, str]]:
        """``(PrimeKG node type, name)`` of a disease's phenotype, exposure and gene/protein neighbours."""
        return list(self.neighbours.get(disease_id, ()))


def _check_header(header: Sequence[str] | None, path: Path) -> None:
    if header is None:
        raise DataError("empty file; expected PrimeKG's 12-column kg.csv header", path=path, line=1)
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise DataError(f"not a PrimeKG kg.csv: missing columns {', '.join(missing)} "
                        f"(expected {', '.join(COLUMNS)})", path=path, line=1, field=missing[0])


def _node(row: dict[str, str], side: str, path: Path, line: int) -> tuple[str, str, str]:
    for col in (f"{side}_id", f"{side}_type", f"{side}_name", f"{side}_source"):
        if not row.get(col):
            raise DataError("empty value", path=path, line=line, field=col)
    return f"{row[side + '_source']}:{row[side + '_id']}", row[f"{side}_type"], row[f"{side}_name"]


def _add_row(kg: PrimeKG, row: dict[str, str], path: Path, line: int) -> None:
    relation = row.get("relation") or ""
    if not relation:
        raise DataError("empty value", path=path, line=line, field="relation")
    x_id, x_type, x_name = _node(row, "x", path, line)
    y_id, y_type, y_name = _node(row, "y", path, line)
    for node_id, node_type, name in ((x_id, x_type, x_name), (y_id, y_type, y_name)):
        if node_type == DRUG_TYPE:
            kg.drugs.setdefault(node_id, name)
        elif node_type == DISEASE_TYPE:
            kg.diseases.setdefault(node_id, name)
    if relation in DRUG_DISEASE_RELATIONS:
        if x_type == DRUG_TYPE and y_type == DISEASE_TYPE:
            kg.relations[(x_id, y_id)].add(relation)
        # the disease -> drug row is the same edge read backwards ("rev-<relation>"): nothing to add
    elif x_type == DISEASE_TYPE and y_type in NEIGHBOUR_TYPES:
        kg.neighbours[x_id].append((y_type, y_name))


def load_primekg(path: str | Path) -> PrimeKG:
    """Read a PrimeKG ``kg.csv`` (spec §1.3).

    Raises:
        DataError: the file is missing, lacks one of the 12 columns, or a row has an empty id, type, name
            or source; the message names the file, the line and the column.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError("PrimeKG kg.csv not found", path=path)
    kg = PrimeKG()
    try:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            _check_header(reader.fieldnames, path)
            for row in reader:
                if None in row or any(v is None for v in row.values()):
                    raise DataError(f"expected {len(reader.fieldnames or [])} columns", path=path,
                                    line=reader.line_num)
                _add_row(kg, row, path, reader.line_num)
    except UnicodeDecodeError as e:
        raise DataError(f"not UTF-8: {e}", path=path) from e
    except csv.Error as e:
        raise DataError(f"malformed CSV: {e}", path=path) from e
    kg.relations = dict(kg.relations)
    kg.neighbours = dict(kg.neighbours)
    return kg
