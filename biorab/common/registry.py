"""One `Registry` class with one instance per kind of component.

Light built-ins register with the `@REGISTRY.register("name")` decorator where they are defined; heavy ones
(torch, vllm, faiss, peft, mlflow) register lazily as a ``"module:attribute"`` string so that importing
`biorab` never imports them. Each registry knows the package that holds its built-ins and imports it on
the first lookup, so a caller never has to import modules for their side effects.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from biorab.common.errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps names to components of one kind (datasets, retrievers, backends, ...)."""

    def __init__(self, kind: str, builtins: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self._builtins = builtins
        self._loaded_builtins = False
        self._objects: dict[str, T] = {}
        self._lazy: dict[str, str] = {}
        self._lazy_params: dict[str, str] = {}
        self._lazy_declared: dict[str, dict[str, str]] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: register the decorated class or function under `name`."""

        def decorate(obj: T) -> T:
            self.add(name, obj)
            return obj

        return decorate

    def add(self, name: str, obj: T) -> None:
        if name in self._objects and self._objects[name] is not obj:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._objects[name] = obj
        self._lazy.pop(name, None)

    def add_lazy(self, name: str, target: str, *, params: str | None = None,
                 declared: Mapping[str, str] | None = None) -> None:
        """Register `name` as ``"package.module:attribute"``, imported only when first asked for.

        `params` (``"module:attribute"``) names the component's ``Params`` model in a light module: checking
        a config's params then never imports the component's own module (the transformers backend's
        imports torch and transformers, seconds of CPU on a driver that never generates). `declared` does
        the same for other class attributes (``{"capabilities": "module:attribute"}``, `attribute_of`);
        the component's class must hold the very same objects.
        """
        for spec in (target, params or "-:-", *(declared or {}).values()):
            if ":" not in spec:
                raise ValueError(f"lazy target must look like 'module:attribute', got {spec!r}")
        if name not in self._objects:
            self._lazy[name] = target
            if params is not None:
                self._lazy_params[name] = params
            if declared:
                self._lazy_declared[name] = dict(declared)

    def get(self, name: str) -> T:
        """The component `name`, imported on first use. Safe under concurrent first use (a served RAL's
        worker threads render their first prompts at once): several threads may import the same lazy
        target (Python's import lock makes that one import), and each dict step is a single operation,
        so no thread finds an entry gone that it saw a moment before."""
        self._load_builtins()
        found = self._objects.get(name)
        if found is not None:
            return found
        target = self._lazy.get(name)
        if target is not None:
            module_name, attribute = target.split(":", 1)
            obj: T = getattr(importlib.import_module(module_name), attribute)
            obj = self._objects.setdefault(name, obj)
            self._lazy.pop(name, None)
            return obj
        if name in self._objects:  # another thread moved it from lazy to loaded between the two looks
            return self._objects[name]
        raise UnknownNameError(self.kind, name, self.names())

    def params_of(self, name: str) -> Any:
        """The ``Params`` attribute of component `name` (None when it has none), from the light module
        given to `add_lazy` while the component itself is not loaded."""
        self._load_builtins()
        if name in self._lazy_params and name not in self._objects:
            module_name, attribute = self._lazy_params[name].split(":", 1)
            return getattr(importlib.import_module(module_name), attribute)
        return getattr(self.get(name), "Params", None)

    def attribute_of(self, name: str, attribute: str) -> Any:
        """Class attribute `attribute` of component `name` (None when it has none), read from the light
        module given to `add_lazy` (`declared`) while the component itself is not loaded."""
        self._load_builtins()
        light = self._lazy_declared.get(name, {}).get(attribute)
        if light is not None and name not in self._objects:
            module_name, found = light.split(":", 1)
            return getattr(importlib.import_module(module_name), found)
        return getattr(self.get(name), attribute, None)

    def names(self) -> list[str]:
        self._load_builtins()
        return sorted({*self._objects, *self._lazy})

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def _load_builtins(self) -> None:
        if self._loaded_builtins:
            return
        self._loaded_builtins = True
        for module in self._builtins:
            importlib.import_module(module)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._objects) + len(self._lazy)} entries)"


def _registry(kind: str, package: str) -> Registry[Any]:
    return Registry(kind, builtins=(package,))


DATASETS: Registry[Any] = _registry("dataset", "biorab.datasets")
#: Task types (`biorab.tasks.task_types.TaskType`): one module each, one line each. A new task is its module
#: (with its tests) and its line here; generic code asks the task, never its name.
TASKS: Registry[Any] = Registry("task")
TASKS.add_lazy("triple_extraction", "biorab.tasks.triples:TripleExtraction")
TASKS.add_lazy("link_prediction", "biorab.tasks.link_prediction:LinkPrediction")
TASKS.add_lazy("classification", "biorab.tasks.classification:Classification")
TASKS.add_lazy("qa", "biorab.tasks.qa:QuestionAnswering")
TASKS.add_lazy("nli", "biorab.tasks.nli:NaturalLanguageInference")
TASKS.add_lazy("multilabel_classification", "biorab.tasks.multilabel:MultiLabelClassification")
PARSERS: Registry[Any] = _registry("parser", "biorab.parsing")
METRICS: Registry[Any] = _registry("metric", "biorab.metrics")
CORPORA: Registry[Any] = _registry("corpus", "biorab.corpora")
RETRIEVERS: Registry[Any] = _registry("retriever", "biorab.retrieval")
BACKENDS: Registry[Any] = _registry("backend", "biorab.generation")
#: Kinds of experiment (`biorab.runner.plan.experiment_source.ExperimentSource` classes), registered lazily.
EXPERIMENTS: Registry[Any] = Registry("experiment")
EXPERIMENTS.add_lazy("biorab", "biorab.runner.plan.benchmark_source:BioRABSource")
EXPERIMENTS.add_lazy("drugmech", "biorab.drugmech.experiment.source:DrugMechSource")
#: The RAL assembly's plug-ins (`biorab.ral.parts.plugins`): hit filters by kind, corpus methods by name.
HIT_FILTERS: Registry[Any] = Registry("hit filter")
HIT_FILTERS.add_lazy("encoder", "biorab.learn.hit_filter:build_hit_filter")
CORPUS_METHODS: Registry[Any] = Registry("corpus method")
for _method in ("detect_correct", "llm_label"):
    CORPUS_METHODS.add_lazy(_method, "biorab.methods.corpus_hooks:CORPUS_METHOD")
#: Config blocks their plug-ins own (`biorab.common.config_sections`), by the key they fill: the ``drugmech:``
#: block
#: of a run config (the DrugMech experiment kind) and a retrieval entry's ``filter:`` (the trained encoder).
CONFIG_SECTIONS: Registry[Any] = Registry("config section")
CONFIG_SECTIONS.add_lazy("drugmech", "biorab.drugmech.experiment.spec:DrugMechSpec")
CONFIG_SECTIONS.add_lazy("retrieval.filter", "biorab.learn.hit_filter:HitFilterSpec")



def dataset_task(name: str) -> str | None:
    """The task a registered dataset's loader declares (its class attribute ``task``); ``None`` for an
    unknown name and for a loader whose task is a parameter (``byo``)."""
    if name not in DATASETS:
        return None
    task = getattr(DATASETS.get(name), "task", None)
    return task if isinstance(task, str) else None


ALL_REGISTRIES: dict[str, Registry[Any]] = {
    "datasets": DATASETS,
    "tasks": TASKS,
    "parsers": PARSERS,
    "metrics": METRICS,
    "corpora": CORPORA,
    "retrievers": RETRIEVERS,
    "backends": BACKENDS,
}
