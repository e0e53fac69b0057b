"""The one direction of imports between the project's layers, checked with `ast` (no module is imported).

``biorab`` (the library) < ``pipelines`` (Ray Data) < ``serve`` / ``training``. A module may import its own
layer and the layers below it. ``biorab`` never imports ``ray`` or ``mlflow`` at module level (they load
lazily inside the functions that need them), and never imports an outer layer anywhere except inside the
functions of the CLI commands (``biorab/cli``): the edge that chooses the executor.

Inside the library, `ALLOWED_INSIDE` and `FORBIDDEN_INSIDE` say which library packages a package (or a
module) may import, anywhere in it; and no two modules of the four layers import each other, directly or
through others (`import_cycles` over `import_graph`, lazy imports included).
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
# The config module names no experiment kind's or trainer's types: the blocks those own (``drugmech:``, a
# retrieval entry's ``filter:``) are models registered in `biorab.registry.CONFIG_SECTIONS`.
ALLOWED_INSIDE = {
    "biorab.ral": ("ral", "tasks", "parsing", "retrieval", "generation", "corpora", "caches", "records",
                   "errors", "registry", "labels", "params"),
    "biorab.generation": ("generation", "records", "errors", "params", "paths", "registry", "build",
                          "model_refs"),
    "biorab.experiment": ("experiment", "config_sections", "generation", "params", "retrieval", "registry",
                          "errors"),
}
# Tracking logs what the runner and the sweeps produce; the use case that runs them again to log a run
# (`biorab track`) is the CLI's (`biorab.cli.replay_tracking`).
FORBIDDEN_INSIDE = {"biorab.tracking": ("runner", "sweep")}


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
    """Why `module`, imported by the library module at `path`, breaks `ALLOWED_INSIDE` or `FORBIDDEN_INSIDE`
    (``None``: fine)."""
    package = ".".join(Path(path).with_suffix("").parts[:2])
    parts = module.split(".")
    if parts[0] != "biorab" or len(parts) < 2:
        return None
    allowed = ALLOWED_INSIDE.get(package)
    if allowed is not None and parts[1] not in allowed:
        return f"{package} may import only biorab.{{{', '.join(allowed)}}}"
    if parts[1] in FORBIDDEN_INSIDE.get(package, ()):
        return f"{package} must not import biorab.{{{', '.join(FORBIDDEN_INSIDE[package])}}}"
    return None


def check_tree(repo: Path) -> list[Violation]:
    """Every violation in every module of every layer present under `repo`."""
    found = []
    for layer in OUTER:
        for file in sorted((repo / layer).rglob("*.py")) if (repo / layer).is_dir() else []:
            rel = file.relative_to(repo).as_posix()
            found += check_source(file.read_text(encoding="utf-8"), layer=layer, path=rel)
    return found


# --- cycles ---------------------------------------------------------------------------------------------
# Module granularity over all four layers (``biorab``, ``pipelines``, ``serve``, ``training``). An import
# of ``a.b.c`` (``import a.b.c``, ``from a.b import c`` where ``c`` is a module, ``from a.b.c import name``)
# is an edge to the module ``a.b.c``; ``from a.b import name`` of a name that is no module is an edge to the
# package ``a.b`` (its ``__init__``). The packages Python runs on the way (``a``, ``a.b``) are no edges: a
# package importing its own submodules is how a package is built. Imports under ``if TYPE_CHECKING:`` never
# run and are no edges; every other import is one, inside functions too.


def module_name(path: str) -> str:
    """``biorab/ral/core.py`` -> ``biorab.ral.core``; ``biorab/ral/__init__.py`` -> ``biorab.ral``."""
    parts = Path(path).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _edges(source: str, module: str, known: set[str]) -> dict[str, int]:
    tree = ast.parse(source, filename=module)
    typing_only = _is_type_checking(tree)
    edges: dict[str, int] = {}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                     for a in node.names]
        for name in names:
            target = _known_prefix(name, known)
            if target is not None and target != module:
                edges.setdefault(target, node.lineno)
    return edges


def _known_prefix(name: str, known: set[str]) -> str | None:
    parts = name.split(".")
    while parts and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts) if parts else None


def graph_of(sources: dict[str, str]) -> dict[str, dict[str, int]]:
    """The import graph of modules given as ``{module name: source}``: module -> {imported module: line}."""
    known = set(sources)
    return {module: _edges(source, module, known) for module, source in sources.items()}


def import_graph(repo: Path) -> dict[str, dict[str, int]]:
    """The import graph of every module of every layer present under `repo`."""
    sources = {}
    for layer in OUTER:
        for file in sorted((repo / layer).rglob("*.py")) if (repo / layer).is_dir() else []:
            sources[module_name(file.relative_to(repo).as_posix())] = file.read_text(encoding="utf-8")
    return graph_of(sources)


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative), each sorted,
    in the order of their first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def describe_cycle(graph: dict[str, dict[str, int]], group: list[str]) -> str:
    """The edges inside one group, ``a:12 -> b`` each (the importing module, the line, the imported)."""
    members = set(group)
    return "; ".join(f"{a}:{line} -> {b}" for a in group for b, line in sorted(graph[a].items())
                     if b in members)
