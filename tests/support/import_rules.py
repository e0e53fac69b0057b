"""The one direction of imports between the project's layers, checked with `ast` (no module is imported).

``biorab`` (the library) < ``pipelines`` (Ray Data) < ``serve`` / ``training``. A module may import its own
layer and the layers below it, and never imports an outer layer anywhere except inside the functions of the
CLI commands (``biorab/cli``): the edge that chooses the executor.

Every import is resolved to the module it names before a rule looks at it: a relative import
(``from ...learn import x`` in ``biorab/ral/parts/core.py`` is ``biorab.learn.x``) and a package import
(``from biorab import learn`` is ``biorab.learn``) count like the absolute import they stand for.

The heavy stack (`HEAVY_STACK`) keeps out of the module top of the library, so ``import biorab`` and every
library package stay light: ``biorab`` imports ``ray`` and ``mlflow`` only inside functions, and torch,
transformers, faiss, vLLM, peft, sentence-transformers and bm25s only inside functions too, except in the
engine modules (`ENGINES`) built on them (a class that subclasses a torch or bm25s type cannot wait), which
no other module imports at its top. `heavy_on_import` follows the module-top imports from every package of
``biorab`` and ``pipelines`` and names any chain that reaches the heavy stack.

Inside the library, `ALLOWED_INSIDE` and `FORBIDDEN_INSIDE` say which library packages a package (or a
module) may import, anywhere in it, and `FORBIDDEN_NAMES` which names of a module it may not import (the
parsers and the metrics read no task registry: the task type calls them); no two modules of the four layers
import each other, directly or through others (`import_cycles` over `import_graph(..., typing=True)`, lazy
and ``TYPE_CHECKING`` imports included), and no two packages do (`package_graph`, over the imports that
run).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYERS = ("biorab", "pipelines", "serve", "training")
OUTER = {"biorab": ("pipelines", "serve", "training"), "pipelines": ("serve", "training"),
         "serve": ("training",), "training": ("serve",)}
EDGE = "biorab/cli/"
# Imported at a library module's top, each of these costs seconds or pulls a runtime the caller may lack.
HEAVY_STACK = ("ray", "mlflow", "torch", "transformers", "faiss", "vllm", "peft", "sentence_transformers",
               "bm25s")
# The engine modules: built on a heavy library at their top (their classes subclass its types), loaded only
# through a lazy registry entry or from inside a function. Each names the heavy libraries it is built on.
ENGINES = {
    "biorab.generation.hf.backend": ("torch", "transformers"),
    "biorab.generation.hf.cache": ("torch", "transformers"),
    "biorab.generation.hf.guided": ("torch", "transformers"),
    "biorab.generation.hf.label_logprobs": ("torch",),
    "biorab.generation.hf.prefill": ("torch",),
    "biorab.generation.hf.stopping": ("torch", "transformers"),
    "biorab.retrieval.bm25_index": ("bm25s",),
}
# Inside the library, anywhere in a module (lazy imports included): the packages a package may import.
# The RAL core imports what it is made of; the plug-ins that fill it (hit filters from `learn`, corpus
# methods from `methods`) register by name in `biorab.common.registry`. Its input type, `RetrievalSpec`, is
# the
# core's: the config module reads it from the core (its ``filter:`` block a `config_sections` section).
# Generation knows nothing of training (adapter checks and model references are its own or neutral).
# The config module names no experiment kind's or trainer's types: the blocks those own (``drugmech:``, a
# retrieval entry's ``filter:``) are models registered in `biorab.common.registry.CONFIG_SECTIONS`.
ALLOWED_INSIDE = {
    "biorab.ral": ("ral", "tasks", "parsing", "retrieval", "generation", "corpora", "caches",
                   "common.records", "common.errors", "common.registry", "common.labels", "common.params",
                   "common.config_sections"),
    "biorab.generation": ("generation", "common.records", "common.errors", "common.params", "common.paths",
                          "common.registry", "common.build", "common.model_refs"),
    "biorab.experiment": ("experiment", "common.config_sections", "generation", "common.params", "retrieval",
                          "ral", "common.registry", "common.errors"),
}
# Tracking logs what the runner and the sweeps produce; the use case that runs them again to log a run
# (`biorab track`) is the CLI's (`biorab.cli.replay_tracking`). Fetching gets data; what a run needs
# fetched is the runner's question (`biorab.runner.checks.fetch_needs`), asked of fetching, not by it.
FORBIDDEN_INSIDE = {"biorab.tracking": ("runner", "sweep"), "biorab.fetching": ("runner",)}
# Names a package may not import from a module, anywhere (``TYPE_CHECKING`` included). The task type is the
# entry point of parsing and scoring (`TaskType.parse`, `.score`): it hands itself to the parsers and the
# metrics, which never look a task up by name (and import nothing of `biorab.tasks`, `FORBIDDEN_INSIDE`).
FORBIDDEN_NAMES = {"biorab.parsing": {"biorab.common.registry": ("TASKS",)},
                   "biorab.metrics": {"biorab.common.registry": ("TASKS",)}}
FORBIDDEN_INSIDE |= {"biorab.parsing": ("tasks",), "biorab.metrics": ("tasks",)}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    module: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: imports {self.module} ({self.why})"


def module_name(path: str) -> str:
    """``biorab/ral/parts/core.py`` -> ``biorab.ral.parts.core``; ``biorab/ral/__init__.py`` ->
    ``biorab.ral``."""
    parts = Path(path).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources(repo: Path) -> tuple[dict[str, str], set[str]]:
    """Every module of every layer present under `repo` (``{name: source}``), and which are packages."""
    sources: dict[str, str] = {}
    packages: set[str] = set()
    for layer in LAYERS:
        for file in sorted((repo / layer).rglob("*.py")) if (repo / layer).is_dir() else []:
            name = module_name(file.relative_to(repo).as_posix())
            sources[name] = file.read_text(encoding="utf-8")
            if file.name == "__init__.py":
                packages.add(name)
    return sources, packages


@functools.cache
def repo_modules() -> frozenset[str]:
    """The module names of this repository's four layers (what a ``from a import b`` may name as ``a.b``)."""
    return frozenset(_sources(REPO)[0])


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` statement of `module` imports from (relative ones resolved:
    one dot is `module`'s own package, each further dot one package up)."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)] if node.level - 1 < len(package) else []
    if not base:
        raise ValueError(f"{module}:{node.lineno}: relative import beyond the top package")
    return ".".join(base + ([node.module] if node.module else []))


def _imported(node: ast.AST, module: str, is_package: bool, known: frozenset[str] | set[str]) -> list[str]:
    """The modules `node` imports, resolved: ``from a import b`` is ``a.b`` when that is a module of `known`
    (a package import), else ``a`` (a name of the module or package ``a``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = _absolute(node, module, is_package)
    names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    return list(dict.fromkeys(names))


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


def check_source(source: str, *, layer: str, path: str,
                 known: frozenset[str] | set[str] | None = None) -> list[Violation]:
    """The violations of one module of `layer` (`path` relative to the repo, for messages and the edge;
    `known`: the module names a package import may name, by default this repository's)."""
    tree = ast.parse(source, filename=path)
    top, typing_only = _top_level(tree), _is_type_checking(tree)
    this, is_package = module_name(path), path.endswith("__init__.py")
    known = repo_modules() if known is None else known
    found = [Violation(path, node.lineno, f"{base}.{name}", why)
             for node, base, name, why in _forbidden_names(tree, path, this, is_package)]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        for module in _imported(node, this, is_package, known):
            # A type hint is no runtime import (layers, heavy stack), but it is a dependency of meaning:
            # the rules inside the library hold for it too.
            why = (_inside_violation(path, module) if id(node) in typing_only
                   else _violation(layer, path, this, module, at_top=id(node) in top))
            if why is not None:
                found.append(Violation(path, node.lineno, module, why))
    return sorted(found, key=lambda v: v.line)


def _forbidden_names(tree: ast.Module, path: str, this: str, is_package: bool
                     ) -> list[tuple[ast.ImportFrom, str, str, str]]:
    """The ``from module import name`` statements of the module at `path` (typing-only ones included) that
    `FORBIDDEN_NAMES` rules out: (statement, module, name, why)."""
    package = ".".join(Path(path).with_suffix("").parts[:2])
    rules = FORBIDDEN_NAMES.get(package, {})
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not rules:
            continue
        base = _absolute(node, this, is_package)
        for alias in node.names:
            if alias.name in rules.get(base, ()):
                found.append((node, base, alias.name, f"{package} must not read {base}.{alias.name}"))
    return found


def _violation(layer: str, path: str, this: str, module: str, *, at_top: bool) -> str | None:
    """Why the module `this` (at `path`, of `layer`) may not import `module` there (``None``: it may)."""
    root = module.split(".")[0]
    if root in OUTER.get(layer, ()) and (at_top or not path.startswith(EDGE)):
        return f"{layer} must not import {root}"
    if layer == "biorab" and at_top and root in HEAVY_STACK and root not in ENGINES.get(this, ()):
        return f"{root} only inside functions"
    if layer == "biorab" and at_top and module in ENGINES and this not in ENGINES:
        return f"{module} is an engine module ({', '.join(ENGINES[module])}): import it inside functions"
    return _inside_violation(path, module)


def _inside_violation(path: str, module: str) -> str | None:
    """Why `module`, imported by the library module at `path`, breaks `ALLOWED_INSIDE` or `FORBIDDEN_INSIDE`
    (``None``: fine)."""
    package = ".".join(Path(path).with_suffix("").parts[:2])
    parts = module.split(".")
    if parts[0] != "biorab" or len(parts) < 2:
        return None
    allowed = ALLOWED_INSIDE.get(package)
    if allowed is not None and not any(_within(parts[1:], entry) for entry in allowed):
        return f"{package} may import only biorab.{{{', '.join(allowed)}}}"
    if parts[1] in FORBIDDEN_INSIDE.get(package, ()):
        return f"{package} must not import biorab.{{{', '.join(FORBIDDEN_INSIDE[package])}}}"
    return None


def _within(parts: list[str], entry: str) -> bool:
    """Whether the module ``biorab.<parts>`` is the library module or package `entry` (dotted below
    ``biorab``: ``ral``, ``core.records``) or inside it."""
    named = entry.split(".")
    return parts[: len(named)] == named


def check_tree(repo: Path) -> list[Violation]:
    """Every violation in every module of every layer present under `repo`."""
    found = []
    for layer in LAYERS:
        for file in sorted((repo / layer).rglob("*.py")) if (repo / layer).is_dir() else []:
            rel = file.relative_to(repo).as_posix()
            found += check_source(file.read_text(encoding="utf-8"), layer=layer, path=rel)
    return found


# --- cycles ---------------------------------------------------------------------------------------------
# Module granularity over all four layers (``biorab``, ``pipelines``, ``serve``, ``training``). An import
# of ``a.b.c`` (``import a.b.c``, ``from a.b import c`` where ``c`` is a module, ``from a.b.c import name``,
# or the same written relative) is an edge to the module ``a.b.c``; ``from a.b import name`` of a name that
# is no module is an edge to the package ``a.b`` (its ``__init__``). The packages Python runs on the way
# (``a``, ``a.b``) are no edges: a package importing its own submodules is how a package is built. Every
# import that runs is an edge, inside functions too (`graph_of(..., top_only=True)` keeps only those that
# run when the module is imported); imports under ``if TYPE_CHECKING:`` never run, and are edges only with
# ``typing=True``: the module cycle check counts them (a circle of type hints is a circle of meaning, and
# the first runtime import along it would make it a real one), the floors and the package graph do not.


def _edges(source: str, module: str, is_package: bool, known: set[str], top_only: bool,
           typing: bool) -> dict[str, int]:
    tree = ast.parse(source, filename=module)
    typing_only, top = _is_type_checking(tree), _top_level(tree)
    edges: dict[str, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if (id(node) in typing_only and not typing) or (top_only and id(node) not in top):
            continue
        for name in _imported(node, module, is_package, known):
            target = _known_prefix(name, known)
            if target is not None and target != module:
                edges.setdefault(target, node.lineno)
    return edges


def _known_prefix(name: str, known: set[str]) -> str | None:
    parts = name.split(".")
    while parts and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts) if parts else None


def graph_of(sources: dict[str, str], packages: set[str] | frozenset[str] = frozenset(), *,
             top_only: bool = False, typing: bool = False) -> dict[str, dict[str, int]]:
    """The import graph of modules given as ``{module name: source}`` (`packages`: those that are
    packages, for relative imports): module -> {imported module: line} (`typing`: ``TYPE_CHECKING``
    imports too)."""
    known = set(sources)
    return {module: _edges(source, module, module in packages, known, top_only, typing)
            for module, source in sources.items()}


def import_graph(repo: Path, *, top_only: bool = False, typing: bool = False) -> dict[str, dict[str, int]]:
    """The import graph of every module of every layer present under `repo`."""
    sources, packages = _sources(repo)
    return graph_of(sources, packages, top_only=top_only, typing=typing)


def repo_packages(repo: Path) -> set[str]:
    """The packages (folders with an ``__init__.py``) of the layers present under `repo`."""
    return _sources(repo)[1]


def package_of(module: str, packages: set[str] | frozenset[str]) -> str:
    """The package a module belongs to: a package is its own; a module in a subpackage belongs to it
    (``biorab.ral.parts.core`` -> ``biorab.ral``); a module directly in a layer's folder
    (``biorab.common.records``,
    ``serve.app``) is a unit of its own, since a layer is no package with one job."""
    if module in packages:
        return module
    parent = module.rpartition(".")[0]
    return parent if "." in parent else module


def package_graph(graph: dict[str, dict[str, int]], packages: set[str] | frozenset[str]
                  ) -> dict[str, dict[str, str]]:
    """`graph` between packages (`package_of`): package -> {imported package: ``module:line -> module``,
    the first import that makes the edge}."""
    out: dict[str, dict[str, str]] = {}
    for module in sorted(graph):
        unit = package_of(module, packages)
        edges = out.setdefault(unit, {})
        for target, line in sorted(graph[module].items()):
            other = package_of(target, packages)
            if other != unit:
                edges.setdefault(other, f"{module}:{line} -> {target}")
    return out


def describe_package_cycle(pgraph: dict[str, dict[str, str]], group: list[str]) -> str:
    """The imports that tie one group of packages together."""
    members = set(group)
    return "; ".join(edge for a in group for b, edge in sorted(pgraph[a].items()) if b in members)


def heavy_on_import(sources: dict[str, str], packages: set[str] | frozenset[str],
                    roots: list[str]) -> list[str]:
    """Each chain of module-top imports from one of `roots` to a module that imports the heavy stack at its
    top, ``root -> ... -> module: torch`` (empty: importing every root stays light)."""
    graph = graph_of(sources, packages, top_only=True)
    found = []
    for root in roots:
        seen, chains = {root}, [[root]]
        while chains:
            chain = chains.pop(0)
            heavy = _heavy_at_top(sources[chain[-1]])
            if heavy:
                found.append(" -> ".join(chain) + ": " + ", ".join(heavy))
                continue
            for target in sorted(graph[chain[-1]]):
                if target not in seen:
                    seen.add(target)
                    chains.append(chain + [target])
    return found


def _heavy_at_top(source: str) -> list[str]:
    """The heavy libraries `source` imports when it is imported (absolute imports at its top)."""
    tree = ast.parse(source)
    top, typing_only = _top_level(tree), _is_type_checking(tree)
    roots = set()
    for node in ast.walk(tree):
        if id(node) not in top or id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return sorted(roots & set(HEAVY_STACK))


def library_heavy_on_import(repo: Path) -> list[str]:
    """`heavy_on_import` from every package of ``biorab`` and ``pipelines`` (what ``import biorab`` and a
    library package import pull in)."""
    sources, packages = _sources(repo)
    roots = sorted(p for p in packages if p.split(".")[0] in ("biorab", "pipelines"))
    return heavy_on_import(sources, packages, roots)


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
