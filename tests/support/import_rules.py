"""The one direction of imports between the project's layers, checked with `ast` (no module is imported).

``biorab`` (the library) < ``pipelines`` (Ray Data) < ``serve`` / ``training``. A module may import its own
layer and the layers below it. ``biorab`` never imports ``ray`` or ``mlflow`` at module level (they load
lazily inside the functions that need them), and never imports an outer layer anywhere except inside the
functions of the CLI commands (``biorab/cli``): the edge that chooses the executor.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

OUTER = {"biorab": ("pipelines", "serve", "training"), "pipelines": ("serve", "training"),
         "serve": ("training",), "training": ("serve",)}
HEAVY_AT_MODULE_LEVEL = {"biorab": ("ray", "mlflow")}
EDGE = "biorab/cli/"
# Inside the library, anywhere in a module (lazy imports included): the packages a package may import.
# The RAL core imports what it is made of; the plug-ins that fill it (hit filters from `learn`, corpus
# methods from `methods`) register by name in `biorab.registry`.
# Generation knows nothing of training (adapter checks and model references are its own or neutral).
ALLOWED_INSIDE = {
    "biorab.ral": ("ral", "tasks", "parsing", "retrieval", "generation", "corpora", "caches", "records",
                   "errors", "registry", "labels", "params"),
    "biorab.generation": ("generation", "records", "errors", "params", "paths", "registry", "build",
                          "model_refs"),
}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    module: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: imports {self.module} ({self.why})"


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    return []


def _top_level(tree: ast.Module) -> set[int]:
    """Ids of the import nodes executed on import: module body, also inside if/try (not functions)."""
    ids: set[int] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            ids.add(id(node))
        elif isinstance(node, ast.If | ast.Try | ast.With | ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))
    return ids


def _is_type_checking(tree: ast.Module) -> set[int]:
    """Ids of imports under ``if TYPE_CHECKING:`` (never executed)."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            ids |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)}
    return ids


def check_source(source: str, *, layer: str, path: str) -> list[Violation]:
    """The violations of one module of `layer` (`path` relative to the repo, for messages and the edge)."""
    tree = ast.parse(source, filename=path)
    top, typing_only = _top_level(tree), _is_type_checking(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        for module in _imported(node):
            root = module.split(".")[0]
            at_top = id(node) in top
            if root in OUTER.get(layer, ()) and (at_top or not path.startswith(EDGE)):
                found.append(Violation(path, node.lineno, module, f"{layer} must not import {root}"))
            elif root in HEAVY_AT_MODULE_LEVEL.get(layer, ()) and at_top:
                found.append(Violation(path, node.lineno, module, f"{root} only inside functions"))
            elif (why := _inside_violation(path, module)) is not None:
                found.append(Violation(path, node.lineno, module, why))
    return sorted(found, key=lambda v: v.line)


def _inside_violation(path: str, module: str) -> str | None:
    """Why `module`, imported by the library module at `path`, breaks `ALLOWED_INSIDE` (``None``: fine)."""
    package = ".".join(Path(path).with_suffix("").parts[:2])
    allowed = ALLOWED_INSIDE.get(package)
    parts = module.split(".")
    if allowed is None or parts[0] != "biorab" or len(parts) < 2 or parts[1] in allowed:
        return None
    return f"{package} may import only biorab.{{{', '.join(allowed)}}}"


def check_tree(repo: Path) -> list[Violation]:
    """Every violation in every module of every layer present under `repo`."""
    found = []
    for layer in OUTER:
        for file in sorted((repo / layer).rglob("*.py")) if (repo / layer).is_dir() else []:
            rel = file.relative_to(repo).as_posix()
            found += check_source(file.read_text(encoding="utf-8"), layer=layer, path=rel)
    return found
