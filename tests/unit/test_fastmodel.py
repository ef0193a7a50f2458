"""Field descriptions come from the docstrings under the fields, read when first asked for."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

import core.algorithms.truncate
import core.fleet.survey
import core.insights.breakdown
import core.insights.compaction_records
import core.insights.cost
import core.insights.forgotten_facts
import core.policy
import core.replay
import core.reports.analyze
import core.reports.breakdown
from core.model.fastmodel import documented

IMPORTED = [
    core.insights.breakdown,
    core.insights.compaction_records,
    core.insights.cost,
    core.fleet.survey,
    core.insights.forgotten_facts,
    core.policy,
]
IMPORTED += [core.replay, core.reports.analyze, core.reports.breakdown, core.algorithms.truncate]
"""The modules whose models are checked (imported for their classes)."""


def _models(base: type[BaseModel] = BaseModel) -> Iterator[type[BaseModel]]:
    for sub in base.__subclasses__():
        if sub.__module__.startswith("core."):
            yield sub
        yield from _models(sub)


def test_every_core_model_gets_the_descriptions_pydantic_would_read() -> None:
    models = set(_models())
    assert len(models) > 40
    checked = 0
    for model in models:
        expected: dict[str, str] = {}
        for cls in reversed(model.__mro__):
            if issubclass(cls, BaseModel) and cls is not BaseModel:
                expected.update(extract_docstrings_from_cls(cls, use_inspect=True))
        for name, info in documented(model).items():
            if name in expected:
                assert info.description == expected[name], f"{model.__name__}.{name}"
                checked += 1
    assert checked > 500


class _Late(BaseModel):
    model_config = ConfigDict(defer_build=True)

    limit: int = 3
    """How many, at most."""
    plain: str = ""


class _Child(_Late):
    limit: int = 4
    """The child's own words."""


def test_a_schema_built_before_still_gets_its_descriptions() -> None:
    assert "description" not in _Late.model_json_schema()["properties"]["limit"]
    fields = documented(_Late)
    assert fields["limit"].description == "How many, at most."
    assert fields["plain"].description is None
    assert _Late.model_json_schema()["properties"]["limit"]["description"] == "How many, at most."
    assert documented(_Child)["limit"].description == "The child's own words."


def test_start_up_reads_no_docstring() -> None:
    """Importing the result models and the policy leaves the descriptions unread: reading them
    walks the source of every class, a tenth of a short command's start-up."""
    code = (
        "from core.replay import ReplayEvent; from core.policy import TruncationPolicy; "
        "print(ReplayEvent.model_fields['reason'].description, "
        "TruncationPolicy.model_fields['max_bytes'].description)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["None", "None"]


def test_no_core_model_field_hides_a_base_model_member() -> None:
    """The core's models skip pydantic's protected-namespace check as each class is created
    (``protected_namespaces=()``): no field of theirs may take a ``BaseModel`` member's name."""
    members = set(dir(BaseModel))
    models = set(_models())
    assert len(models) > 40
    for model in models:
        assert not members & set(model.model_fields), model.__name__
