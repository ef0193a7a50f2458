"""The report and result models' field annotations are objects, not strings: the modules that
define the models ``analyze`` creates at its start leave out ``from __future__ import
annotations``, so that pydantic takes each field's type as the class body evaluated it instead
of compiling and evaluating its text (a third of what each field costs to create)."""

from __future__ import annotations

import ast
import inspect
from types import ModuleType

import pytest
from pydantic import BaseModel

import core.fleet.subagent_info
import core.insights.calibration_figures
import core.insights.call_cost
import core.insights.cost
import core.insights.diagnosis
import core.insights.named_figures
import core.policy
import core.replay.points
import core.replay.results
import core.reports.analyze

EVALUATED = [
    core.fleet.subagent_info,
    core.insights.call_cost,
    core.insights.calibration_figures,
    core.insights.cost,
    core.insights.diagnosis,
    core.insights.named_figures,
    core.policy,
    core.replay.points,
    core.replay.results,
    core.reports.analyze,
]


LAZY = {
    ("AnalysisReport", "subagents"): "list[SubagentInfo]",
    ("AnalysisReport", "calibration"): "EstimateCalibration | None",
    ("SessionCost", "per_call"): "list[CallCost]",
    ("SessionCost", "other_calls"): "list[CallCost]",
    ("ReplayResult", "points"): "list[CallPoint]",
    ("ReplayResult", "messages"): "list[MessageState]",
}
"""The fields whose types are :func:`core.model.fastmodel.lazy_field_types` classes, which
``analyze`` never builds: their annotations are strings, resolved when first needed."""


def _models(module: ModuleType) -> list[type[BaseModel]]:
    return [
        cls
        for cls in vars(module).values()
        if inspect.isclass(cls) and issubclass(cls, BaseModel) and cls.__module__ == module.__name__
    ]


@pytest.mark.parametrize("module", EVALUATED, ids=lambda m: m.__name__)
def test_field_annotations_are_evaluated(module: ModuleType) -> None:
    models = _models(module)
    assert models, f"{module.__name__} defines no model"
    for cls in models:
        for name, annotation in inspect.get_annotations(cls).items():
            if (cls.__name__, name) in LAZY:
                assert annotation == LAZY[cls.__name__, name]
                continue
            assert not isinstance(annotation, str), f"{cls.__name__}.{name}: {annotation!r}"


@pytest.mark.parametrize("module", EVALUATED, ids=lambda m: m.__name__)
def test_fields_resolved_at_creation(module: ModuleType) -> None:
    """Every field's type was known as its class was created (none left to a rebuild)."""
    for cls in _models(module):
        for name, info in cls.model_fields.items():
            if (cls.__name__, name) in LAZY:
                continue
            assert info._complete, f"{cls.__name__}.{name}"
            assert not isinstance(info.annotation, str), f"{cls.__name__}.{name}"


CONSTRAINTS = frozenset({"gt", "ge", "lt", "le", "multiple_of", "min_length", "max_length"})
"""``Field`` arguments that an annotation's ``annotated_types`` metadata states as well."""


@pytest.mark.parametrize("module", EVALUATED, ids=lambda m: m.__name__)
def test_constraints_in_annotations(module: ModuleType) -> None:
    """A field's bounds are its annotation's metadata (``Annotated[int, Ge(0)] = 2000``), not a
    ``Field(default=2000, ge=0)`` in the class body: pydantic gives the field the same metadata
    either way, but a ``Field`` is one more object made, copied and merged as the class is
    created (the policy's 33 bounded fields: 2.1 M of ``analyze``'s start)."""
    tree = ast.parse(inspect.getsource(module))
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Call):
            call = node.value
            if isinstance(call.func, ast.Name) and call.func.id == "Field":
                bounds = {kw.arg for kw in call.keywords} & CONSTRAINTS
                assert not bounds, f"{module.__name__} line {node.lineno}: Field({bounds})"
