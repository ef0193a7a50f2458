"""A Codex call's arguments are bounded as the call is read (``_Loader.tool_call``), typed or
plain, so that :meth:`SessionBuilder.build` walks no call again (``arguments_ready``); every
call of a session holds what the build's pass made of its arguments, and a missing output is
still reported when another call's is not."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.formats import load_session
from core.formats.base import SessionBuilder
from core.model.deep_json import MAX_DEPTH, deeper_than
from core.model.session import SourceFormat

_TS = "2026-04-01T12:00:01.000Z"


def _line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": _TS, "type": kind, "payload": payload}, separators=(",", ":"))


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


def _rollout(path: Path, calls: list[Any], answered: int) -> Path:
    lines = [
        _line("session_meta", {"id": "019d0000-aaaa-7bbb-8ccc-000000000009", "cwd": "/p"}),
        _line("event_msg", {"type": "task_started", "turn_id": "t1"}),
        _line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        ),
    ]
    for n, arguments in enumerate(calls):
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        item: dict[str, Any] = {
            "type": "function_call",
            "name": "f",
            "arguments": text,
            "call_id": f"c{n}",
        }
        if n % 2:  # (a field of another type than the typed read takes: read the plain way)
            item["namespace"] = 7
        lines.append(_line("response_item", item))
    for n in range(answered):
        output = {"type": "function_call_output", "call_id": f"c{n}", "output": "ok"}
        lines.append(_line("response_item", output))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


_VALUES = st.one_of(st.text(max_size=8), st.integers(-5, 5), st.none(), st.booleans())
_ARGUMENTS = st.one_of(
    st.dictionaries(st.sampled_from("abc"), _VALUES, max_size=3),
    st.integers(1, MAX_DEPTH + 5).map(_nested),
    st.lists(_VALUES, max_size=3),
    st.just("not json {"),
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(_ARGUMENTS, min_size=1, max_size=5))
def test_each_call_holds_what_the_build_pass_made_of_its_arguments(
    tmp_path: Path, calls: list[Any]
) -> None:
    session = load_session(_rollout(tmp_path / "rollout.jsonl", calls, len(calls)))
    held = [call.arguments for m in session.messages for call in m.tool_calls]
    builder = SessionBuilder(SourceFormat.CODEX, None)
    expected = [builder.share_arguments(copy.deepcopy(arguments)) for arguments in calls]
    assert held == expected
    for value, arguments in zip(held, calls, strict=True):  # text: not JSON, or too deep
        made_text = isinstance(arguments, str) or deeper_than(arguments, MAX_DEPTH)
        assert (type(value) is str) == made_text
    assert not any(d.code == "missing-tool-result" for d in session.diagnostics)


@pytest.mark.parametrize("answered", [0, 1, 2])
def test_a_call_without_output_is_still_reported(tmp_path: Path, answered: int) -> None:
    calls: list[Any] = [{"a": 1}, {"b": 2}]
    session = load_session(_rollout(tmp_path / "rollout.jsonl", calls, answered))
    missing = [d for d in session.diagnostics if d.code == "missing-tool-result"]
    assert len(missing) == 2 - answered
    assert [d.message.split()[2] for d in missing] == [f"c{n}" for n in range(answered, 2)]
