"""``breakdown --json`` written by orjson from the models' fields (tui.cli.commands.breakdown.
report_json): the same bytes pydantic's writer gives, floats, non-ASCII names and pydantic's own
fallback for what orjson refuses (an undecodable byte) included; and no collection while the rows
are built."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from core.insights.breakdown import breakdown
from core.insights.cost import session_cost
from core.model.json_text import model_json_bytes
from core.model.session import Session, Usage
from core.reports.breakdown import breakdown_report
from tests.support.builders import SessionBuilder, text_of_tokens
from tui.cli.commands.breakdown import report_json


def priced_session(tool: str, model: str | None) -> Session:
    return (
        SessionBuilder()
        .user(text_of_tokens(100) + " é ✓ 😀")
        .call(tool, {"path": "a.py"}, text=text_of_tokens(20), context=5_000, output=37)
        .result(tokens=300)
        .call("Bash", {"command": "ls"}, context=5_200, output=11)
        .result(tokens=2_000)
        .call(tool, {"path": "b.py"}, context=5_300)  # over-explained: scaled down
        .result(tokens=40)
        .reply("done", context=9_000)
        .session(model=model)
    )


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "no-such-model", None])
@pytest.mark.parametrize("tool", ["Read", "lire_fichier_é"])
def test_report_json_is_pydantics_bytes(tool: str, model: str | None) -> None:
    session = priced_session(tool, model)
    result, cost = breakdown(session), session_cost(session)
    assert any(row.scale < 1.0 for row in result.calls)  # a float other than 1.0 is written
    assert report_json(result, cost) == model_json_bytes(breakdown_report(result, cost))


def test_a_model_whose_fields_are_out_of_order_is_written_as_pydantic_writes_it() -> None:
    session = priced_session("Read", "claude-sonnet-4-5")
    result, cost = breakdown(session), session_cost(session)
    row = result.calls[0]
    shuffled = dict(reversed(list(row.__dict__.items())))
    object.__setattr__(row, "__dict__", shuffled)
    assert report_json(result, cost) == model_json_bytes(breakdown_report(result, cost))


def test_what_orjson_refuses_is_written_as_pydantics_fallback_writes_it() -> None:
    session = priced_session("Read", "claude-sonnet-4-5")
    result, cost = breakdown(session), session_cost(session)
    result.notes.append("an undecodable byte: \udcff")
    written = report_json(result, cost)
    assert b"\\\\xff" in written
    assert written == model_json_bytes(breakdown_report(result, cost))


def test_no_collection_runs_while_the_rows_are_built() -> None:
    builder = SessionBuilder().user(text_of_tokens(100))
    for n in range(400):
        builder.call("Read", {"path": f"{n}.py"}, context=5_000 + 50 * n).result(tokens=40)
    session = builder.reply("done", context=30_000).session()
    started: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()
    gc.callbacks.append(seen)
    try:
        result = breakdown(session)
    finally:
        gc.callbacks.remove(seen)
    assert len(result.calls) == 401
    assert started == []
    assert gc.isenabled()


def test_the_rows_reach_orjson_as_dicts_not_one_callback_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rows per call (the breakdown's and the cost's) go to orjson as their field dicts,
    one list each: orjson calls back for no row (a call per row: 100,000 on 100 MB)."""
    from tui.cli.commands import breakdown as command

    session = priced_session("Read", "claude-sonnet-4-5")
    result, cost = breakdown(session), session_cost(session)
    called: list[type] = []
    fields = command._fields

    def counted(model: Any) -> dict[str, Any]:
        called.append(type(model))
        return fields(model)

    monkeypatch.setattr(command, "_fields", counted)
    written = report_json(result, cost)
    assert written == model_json_bytes(breakdown_report(result, cost))
    assert len(result.calls) >= 4 and len(cost.per_call) >= 4
    assert type(result.calls[0]) not in called and type(cost.per_call[0]) not in called


@pytest.mark.parametrize("undecodable", [False, True])
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "no-such-model"])
def test_the_calls_given_as_fields_are_written_as_their_models_are(
    model: str, undecodable: bool
) -> None:
    """Issue 24: ``breakdown --json`` makes no model per call: the breakdown's calls and the
    cost's are given as their fields, apart from their reports (whose lists of calls are then
    empty), and written as the models would be, pydantic's fallback included (an undecodable
    byte)."""
    from core.insights.breakdown import breakdown_rows
    from core.insights.cost import session_cost_rows

    session = (
        SessionBuilder()
        .user("go")
        .reply("side", usage=Usage(input=10, output=3), sidechain=True)
        .call("Read", {"path": "a.py"}, context=5_000, output=37)
        .result(tokens=3_000)
        .reply("done", context=6_000)
        .session(model=model)
    )
    found, rows = breakdown_rows(session)
    cost, per_call, other_calls = session_cost_rows(session)
    result, whole = breakdown(session), session_cost(session)
    assert found.calls == [] and cost.per_call == [] and cost.other_calls == []
    assert rows == [row.__dict__ for row in result.calls]
    assert per_call == [row.__dict__ for row in whole.per_call]
    assert other_calls == [row.__dict__ for row in whole.other_calls] and other_calls
    if undecodable:
        for notes in (found.notes, result.notes):
            notes.append("an undecodable byte: \udcff")
    written = report_json(found, cost, (rows, per_call, other_calls))
    assert written == report_json(result, whole)
    assert written == model_json_bytes(breakdown_report(result, whole))
