"""A model written from its fields (:func:`core.model.json_text.model_json_bytes`, through
:func:`core.model.plain_json.plain_data`) is byte for byte what pydantic's serialiser writes, on reports hypothesis makes from the models'
own annotations; and models built with :func:`core.model.fastmodel.build_filled` are the
models validation makes."""

from __future__ import annotations

import types
import typing
from array import array
from enum import Enum
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from pydantic_core import PydanticSerializationError

from core.insights.diagnosis import OverflowDiagnosis
from core.insights.named_figures import CompactionFigures, ThresholdFigure
from core.model.fastmodel import build, build_filled, resolved_fields
from core.model.json_text import escaped_json, model_json_bytes
from core.model.plain_json import Unsupported, model_encoder, plain_data
from core.policy import Policy
from core.replay.results import (
    FidelityRow,
    InferredThreshold,
    ReplayResult,
    ReplaySummary,
    ThresholdSpan,
    replay_summary,
)
from core.reports.analyze import AnalysisReport, CallTimeline, SessionInfo


def _values(annotation: Any) -> st.SearchStrategy[Any]:
    """Values of one annotation, as the core's code holds them (an int in a float field too:
    a model built without validation keeps what it is given)."""
    if annotation is int:
        return st.integers(-(2**64), 2**64)
    if annotation is float:
        return st.floats() | st.integers(-(10**6), 10**6)
    if annotation is str:
        return st.text(max_size=8)
    if annotation is bool:
        return st.booleans()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _models(annotation)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return st.sampled_from(list(annotation))
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([st.none() if a is type(None) else _values(a) for a in args])
    if origin is list:
        return st.lists(_values(args[0]), max_size=2)
    if origin is dict:
        return st.dictionaries(st.text(max_size=3), _values(args[1]), max_size=2)
    raise AssertionError(f"no strategy for {annotation!r}")


def _models(cls: type[BaseModel]) -> st.SearchStrategy[BaseModel]:
    fields = {name: _values(info.annotation) for name, info in resolved_fields(cls).items()}
    if cls is CallTimeline:  # (its calls' column may be an int array, written as a list)
        ints = st.lists(st.integers(0, 2**31 - 1), max_size=3)
        fields["message_index"] = ints | ints.map(lambda v: array("i", v))
    return st.fixed_dictionaries(fields).map(lambda values: _built(cls, values))


def _built(cls: type[BaseModel], values: dict[str, Any]) -> BaseModel:
    model = build(cls, values)
    if cls.__private_attributes__:  # (a replay's result: its lazy columns, none here)
        private = {name: a.get_default() for name, a in cls.__private_attributes__.items()}
        object.__setattr__(model, "__pydantic_private__", private)
    return model


def _pydantic_bytes(model: BaseModel, indent: int | None = 2) -> bytes:
    """What the model's own serialiser writes (its dump escaped for a string it cannot)."""
    try:
        written: bytes = model.__pydantic_serializer__.to_json(model, indent=indent)
    except (PydanticSerializationError, UnicodeEncodeError):
        return escaped_json(model.model_dump(mode="python"), indent=indent).encode()
    return written


@pytest.mark.parametrize("cls", [AnalysisReport, ReplayResult, Policy])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_model_is_written_as_pydantic_writes_it(cls: type[BaseModel], data: Any) -> None:
    """``analyze --json``'s report, ``replay --json``'s result and a policy."""
    model = data.draw(_models(cls))
    assert plain_data(model) is not None
    assert model_json_bytes(model) == _pydantic_bytes(model)
    assert model_json_bytes(model, indent=None) == _pydantic_bytes(model, indent=None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_models(AnalysisReport))
def test_a_replaced_field_is_written_as_the_copy_would_be(report: BaseModel) -> None:
    copy = report.model_copy(update={"timeline": None, "policy": "other"})
    replace = {"timeline": None, "policy": "other"}
    assert model_json_bytes(report, replace=replace) == _pydantic_bytes(copy)


def test_every_model_of_the_report_has_an_encoder() -> None:
    """No model of ``analyze --json`` falls back to pydantic (which would build its schema)."""
    seen: set[type[BaseModel]] = set()

    def walk(annotation: Any) -> None:
        model = isinstance(annotation, type) and issubclass(annotation, BaseModel)
        if model and annotation not in seen:
            seen.add(annotation)
            model_encoder(annotation)
            for info in annotation.model_fields.values():
                walk(info.annotation)
        for arg in typing.get_args(annotation):
            walk(arg)

    walk(AnalysisReport)
    assert len(seen) > 20


class _Aliased(BaseModel):
    name: str = Field(serialization_alias="Name")


class _Paired(BaseModel):
    pair: tuple[int, int]


@pytest.mark.parametrize(
    ("model", "expected"),
    [(_Aliased(name="a"), b'{"name":"a"}'), (_Paired(pair=(1, 2)), b'{"pair":[1,2]}')],
)
def test_a_model_it_does_not_know_is_written_by_pydantic(model: BaseModel, expected: bytes) -> None:
    with pytest.raises(Unsupported):
        model_encoder(type(model))
    assert plain_data(model) is None
    assert model_json_bytes(model, indent=None) == expected


def test_a_string_that_is_not_utf8_is_written_escaped_as_pydantic_does() -> None:
    info = build_filled(SessionInfo, _session_fields() | {"path": "/tmp/x\udcff.jsonl"})
    assert model_json_bytes(info) == _pydantic_bytes(info)
    assert b"\\\\xff" in model_json_bytes(info)
    replaced = model_json_bytes(info, replace={"model": "m"})
    assert replaced == _pydantic_bytes(info.model_copy(update={"model": "m"}))


def _session_fields() -> dict[str, Any]:
    return {
        "id": "s",
        "format": "claude-code",
        "path": None,
        "model": None,
        "window": 200_000,
        "window_source": "table",
        "messages": 3,
        "calls": 1,
        "turns": 1,
        "recorded_compactions": 0,
        "diagnostics": 0,
    }


BUILT = [
    FidelityRow,
    ThresholdSpan,
    ReplaySummary,
    OverflowDiagnosis,
    InferredThreshold,
    SessionInfo,
    ThresholdFigure,
    CompactionFigures,
]
"""The models the core builds with :func:`build_filled` rather than validates."""


@pytest.mark.parametrize("cls", BUILT)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_model_built_filled_is_the_validated_model(cls: type[BaseModel], data: Any) -> None:
    """Every field given, or only the required ones: the same values, in the declared order,
    defaults made afresh for each model (a factory's list is not shared)."""
    required = {n: _values(i.annotation) for n, i in cls.model_fields.items() if i.is_required()}
    optional = {
        n: _values(i.annotation) for n, i in cls.model_fields.items() if not i.is_required()
    }
    fields = data.draw(st.fixed_dictionaries(required, optional=optional))
    for name, info in cls.model_fields.items():  # (validation makes a float field's int a float)
        if info.annotation is float and type(fields.get(name)) is int:
            fields[name] = float(fields[name])
    built = build_filled(cls, dict(fields))
    validated = cls(**fields)
    assert list(built.__dict__) == list(cls.model_fields)
    assert built.__dict__ == validated.__dict__
    assert model_json_bytes(built) == model_json_bytes(validated)
    for name, value in built.__dict__.items():
        if isinstance(value, list) and name not in fields:
            assert value is not build_filled(cls, dict(fields)).__dict__[name]


def test_the_summary_of_a_replay_is_built_filled() -> None:
    fields = {name: 0 for name, info in ReplaySummary.model_fields.items() if info.is_required()}
    summary = replay_summary(**fields)
    assert summary == ReplaySummary(**fields)
    assert list(summary.__dict__) == list(ReplaySummary.model_fields)


def test_a_replay_result_is_written_with_its_points_and_messages() -> None:
    """A result holds its points and message states as columns until asked: they are written
    (as ``model_dump_json`` writes them), not left out."""
    from core.model.json_text import model_json
    from core.replay import Replayer, native_policy
    from tests.support.builders import SessionBuilder

    script = SessionBuilder().user("start")
    for n in range(4):
        script.call(context=1_000 + 10 * n).result(f"out {n}")
    session = script.reply("end", context=2_000).session()

    def result() -> ReplayResult:
        return Replayer(session).run(native_policy(session))

    fresh = result()
    assert fresh._lazy_points is not None  # (held as columns: the case under test)
    written = model_json(fresh)
    assert written == result().model_dump_json(indent=2)
    assert '"points": [' in written and '"messages": [' in written


def test_a_lazily_held_replay_result_under_another_model_is_written_whole() -> None:
    """The lazy columns are filled wherever the result stands in a document, not only when it is
    the document itself."""
    import json

    from core.model.fastmodel import Documented
    from core.model.json_text import model_json
    from core.replay import Replayer, native_policy
    from tests.support.builders import SessionBuilder

    script = SessionBuilder().user("start")
    for n in range(4):
        script.call(context=1_000 + 10 * n).result(f"out {n}")
    session = script.reply("end", context=2_000).session()

    class Holder(Documented):
        result: ReplayResult

    def result() -> ReplayResult:
        return Replayer(session).run(native_policy(session))

    held = result()
    assert held._lazy_points is not None  # (held as columns: the case under test)
    written = json.loads(model_json(build(Holder, {"result": held})))
    assert written["result"] == json.loads(result().model_dump_json())
    assert written["result"]["points"]
