"""Tasks and prompt templates: the task types (one module each, registered in
`biorab.common.registry.TASKS`), a
frozen `Template` per dataset and variant with the original's instruction wording, the pure `render`, and the
negative-awareness probe."""

from __future__ import annotations

from biorab.tasks.awareness_probe import (
    AWARENESS_LABELS,
    AWARENESS_MAX_TOKENS,
    AWARENESS_NEGATIVE,
    AWARENESS_NOT_NEGATIVE,
    awareness_target,
    describe_hit,
    render_awareness_probe,
)
from biorab.tasks.task_types import (
    PRIMARY_METRIC,
    TASK_METRICS,
    TaskType,
    get_task,
    parse,
    single_label,
    task_names,
)
from biorab.tasks.template import Template, format_options, render, render_training
from biorab.tasks.template_catalog import COMMON_VARIANTS, get_template, template_datasets, template_variants
from biorab.tasks.wrappers import inference_prompt, training_prompt

__all__ = [
    "AWARENESS_LABELS",
    "AWARENESS_MAX_TOKENS",
    "AWARENESS_NEGATIVE",
    "AWARENESS_NOT_NEGATIVE",
    "COMMON_VARIANTS",
    "PRIMARY_METRIC",
    "TASK_METRICS",
    "TaskType",
    "Template",
    "awareness_target",
    "describe_hit",
    "format_options",
    "get_task",
    "get_template",
    "inference_prompt",
    "parse",
    "render",
    "render_awareness_probe",
    "render_training",
    "single_label",
    "template_datasets",
    "task_names",
    "template_variants",
    "training_prompt",
]
