"""A small synthetic stand-in for SuLab/DrugMechDB-agentic's ``kb/paths`` folder, and the
``indication_paths.yaml`` the staging rule makes of it (written out by hand, not computed).

It exercises every rule of `biorab.fetching.drugmechdb_paths`: the index order differs from the name
order; graph keys come out in the fixed order whatever their order in the file; a missing ``drug_mesh``
and a missing ``drugbank`` come back as null; another graph key follows the six; a top-level key before
``directed`` keeps its place; non-ASCII text stays unescaped, a long URL is not wrapped, and a name that
YAML would read as a boolean (``NO``, nitric oxide) stays quoted.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

LONG_URL = "https://example.org/" + "mechanism-of-action/" * 6 + "end"

# kb/paths/_index.yaml: B before A on purpose (the real index is sorted by id; the rule is "index order").
INDEX = """\
- id: DB0002_MESH_D2_1
  file: DB0002_MESH_D2_1.yaml
  drug: beta
- id: DB0001_MESH_D1_1
  file: DB0001_MESH_D1_1.yaml
  drug: alpha
- id: DB0003_MESH_D3_1
  file: DB0003_MESH_D3_1.yaml
  drug: gamma
"""

FILES: dict[str, str] = {
    "_index.yaml": INDEX,
    "DB0001_MESH_D1_1.yaml": f"""\
directed: true
graph:
  _id: DB0001_MESH_D1_1
  disease: Cold
  disease_mesh: MESH:D1
  drug: alpha
  drug_mesh: MESH:C1
  version: 2
links:
  - key: treats
    source: MESH:C1
    target: MESH:D1
multigraph: true
nodes:
  - alt_names: [a1, a2]
    id: MESH:C1
    label: Drug
    name: alpha
  - id: MESH:D1
    label: Disease
    name: Cold
references:
  - {LONG_URL}
""",
    "DB0002_MESH_D2_1.yaml": """\
comment: Ångström-scale note, café
directed: true
graph:
  drugbank: DB:DB0002
  _id: DB0002_MESH_D2_1
  drug: beta
  disease: Flu
  disease_mesh: MESH:D2
links:
  - key: increases abundance of
    source: DB:DB0002
    target: MESH:D009569
  - key: causes
    source: MESH:D009569
    target: MESH:D2
multigraph: true
nodes:
  - id: DB:DB0002
    label: Drug
    name: beta
  - id: MESH:D009569
    label: ChemicalSubstance
    name: 'NO'
  - id: MESH:D2
    label: Disease
    name: Flu
""",
    "DB0003_MESH_D3_1.yaml": """\
directed: true
graph:
  _id: DB0003_MESH_D3_1
  disease: Pain
  disease_mesh: MESH:D3
  drug: gamma
  drug_mesh: MESH:C3
  drugbank: DB:DB0003
links:
  - key: decreases activity of
    source: MESH:C3
    target: UniProt:P3
  - key: positively correlated with
    source: UniProt:P3
    target: MESH:D3
multigraph: true
nodes:
  - id: MESH:C3
    label: Drug
    name: gamma
  - id: UniProt:P3
    label: Protein
    name: P three
  - id: MESH:D3
    label: Disease
    name: Pain
""",
}

EXPECTED = f"""\
- comment: Ångström-scale note, café
  directed: true
  graph:
    _id: DB0002_MESH_D2_1
    disease: Flu
    disease_mesh: MESH:D2
    drug: beta
    drug_mesh: null
    drugbank: DB:DB0002
  links:
  - key: increases abundance of
    source: DB:DB0002
    target: MESH:D009569
  - key: causes
    source: MESH:D009569
    target: MESH:D2
  multigraph: true
  nodes:
  - id: DB:DB0002
    label: Drug
    name: beta
  - id: MESH:D009569
    label: ChemicalSubstance
    name: 'NO'
  - id: MESH:D2
    label: Disease
    name: Flu
- directed: true
  graph:
    _id: DB0001_MESH_D1_1
    disease: Cold
    disease_mesh: MESH:D1
    drug: alpha
    drug_mesh: MESH:C1
    drugbank: null
    version: 2
  links:
  - key: treats
    source: MESH:C1
    target: MESH:D1
  multigraph: true
  nodes:
  - alt_names:
    - a1
    - a2
    id: MESH:C1
    label: Drug
    name: alpha
  - id: MESH:D1
    label: Disease
    name: Cold
  references:
  - {LONG_URL}
- directed: true
  graph:
    _id: DB0003_MESH_D3_1
    disease: Pain
    disease_mesh: MESH:D3
    drug: gamma
    drug_mesh: MESH:C3
    drugbank: DB:DB0003
  links:
  - key: decreases activity of
    source: MESH:C3
    target: UniProt:P3
  - key: positively correlated with
    source: UniProt:P3
    target: MESH:D3
  multigraph: true
  nodes:
  - id: MESH:C3
    label: Drug
    name: gamma
  - id: UniProt:P3
    label: Protein
    name: P three
  - id: MESH:D3
    label: Disease
    name: Pain
""".encode()


def write_tree(folder: Path) -> Path:
    """The four files under `folder` (created); returns `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in FILES.items():
        (folder / name).write_bytes(text.encode("utf-8"))
    return folder


def write_sha256_list(path: Path) -> Path:
    """The gzipped ``sha256sum`` list of `FILES` (``_index.yaml`` first, then the index order)."""
    names = ["_index.yaml", "DB0002_MESH_D2_1.yaml", "DB0001_MESH_D1_1.yaml", "DB0003_MESH_D3_1.yaml"]
    lines = "".join(f"{hashlib.sha256(FILES[n].encode()).hexdigest()}  {n}\n" for n in names)
    path.write_bytes(gzip.compress(lines.encode("utf-8"), mtime=0))
    return path
