"""Where a backend's name may be compared: inside `biorab/generation/` only (issue 42 item 3), checked with
`ast` (no module is imported).

Everywhere else a decision about a backend asks what it can do (`biorab.generation.capabilities`: its
`Capabilities`, `takes_param`, `check_engine`) or a method of the backend or its params. A comparison is an
``==``, ``!=``, ``in`` or ``not in`` with a registered backend's name as a string literal on either side, or
in a tuple, list or set literal there (``backend in ("transformers", "vllm")``). A name used as a value (a
default, the backend a rehearsal picks) is not a comparison.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: The code checked: the library and the outer layers.
LAYERS = ("biorab", "pipelines", "serve", "training")
#: The one package that may compare backend names: it owns them.
OWNER = "biorab/generation/"


@dataclass(frozen=True)
class NameComparison:
    path: str
    line: int
    name: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: compares backend name {self.name!r}"


def backend_names() -> frozenset[str]:
    """The registered backends' names (the registry, with the built-in backends registered)."""
    import biorab.generation  # noqa: F401  (registers the built-in backends)
    from biorab.common.registry import BACKENDS

    return frozenset(BACKENDS.names())


def comparisons(source: str, names: Iterable[str], *, path: str = "<source>") -> list[NameComparison]:
    """The comparisons of one of `names` in `source`."""
    wanted = frozenset(names)
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        if not all(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
            continue
        for operand in (node.left, *node.comparators):
            for name in _literal_names(operand):
                if name in wanted:
                    found.append(NameComparison(path, node.lineno, name))
    return found


def _literal_names(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def python_files(root: Path = REPO) -> list[Path]:
    """The checked layers' modules, outside `OWNER`."""
    return [p for layer in LAYERS if (root / layer).is_dir() for p in sorted((root / layer).rglob("*.py"))
            if not p.relative_to(root).as_posix().startswith(OWNER)]


def check_tree(root: Path = REPO) -> list[NameComparison]:
    names = backend_names()
    out = []
    for path in python_files(root):
        out += comparisons(path.read_text("utf-8"), names, path=path.relative_to(root).as_posix())
    return out
