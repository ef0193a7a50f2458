"""What a loader does as it reads, :meth:`SessionBuilder.build` does not do again: the Claude
Code loader bounds and shares each call's arguments as it reads the call (``arguments_ready``)
and gives no message a derived estimate (``estimates_derived`` False), so that ``build`` walks
the messages for neither; a compaction is recorded without validating its event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.formats import load_session
from core.formats.base import SessionBuilder
from core.model.deep_json import MAX_DEPTH, bounded
from core.model.read_numbers import MAX_COUNT
from core.model.session import CompactionEvent, Message, Role, Session, SourceFormat
from tests.support.paths import REPO, TESTS

_CLAUDE = sorted((REPO / "sample_sessions" / "claude-code").glob("*.jsonl")) + sorted(
    (TESTS / "fixtures" / "claude").glob("*.jsonl")
)


@pytest.mark.parametrize("path", _CLAUDE, ids=lambda p: p.name)
def test_a_claude_code_session_holds_no_derived_estimate(path: Path) -> None:
    """The ground for skipping the clamp's pass: no Claude Code message has an estimate."""
    session = load_session(path)
    assert session.format is SourceFormat.CLAUDE_CODE
    assert session.messages
    for message in session.messages:
        assert message.agent_estimate_tokens is None
        assert message.reasoning_estimate_tokens == 0


def test_a_builder_still_clamps_a_derived_estimate_by_default() -> None:
    builder = SessionBuilder(SourceFormat.CODEX, None)
    assert builder.estimates_derived
    builder.append(
        Message(index=0, role=Role.USER, id="m", text="x", agent_estimate_tokens=MAX_COUNT + 9)
    )
    session = builder.build()
    assert session.messages[0].agent_estimate_tokens == MAX_COUNT
    assert any(d.code == "bad-count" for d in session.diagnostics)


_VALUES = st.one_of(st.text(max_size=12), st.integers(), st.none(), st.booleans())


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


@given(st.lists(st.dictionaries(st.sampled_from("abc"), _VALUES), max_size=6))
def test_share_arguments_gives_what_build_gave(calls: list[dict[str, Any]]) -> None:
    """Each call's arguments: equal to what they were, bounded, and a short string value the
    same object as the equal one of an earlier call."""
    builder = SessionBuilder(SourceFormat.CLAUDE_CODE, None)
    seen: dict[str, str] = {}
    for arguments in calls:
        expected = dict(arguments)
        held = builder.share_arguments(arguments)
        assert held == expected
        assert held == bounded(expected)
        for value in held.values():
            if type(value) is str:
                assert seen.setdefault(value, value) is value


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH + 1, MAX_DEPTH + 40])
def test_share_arguments_makes_too_deep_arguments_text(depth: int) -> None:
    value = _nested(depth)
    held = SessionBuilder(SourceFormat.CLAUDE_CODE, None).share_arguments(value)
    assert held == bounded(_nested(depth))
    assert (type(held) is str) == (depth > MAX_DEPTH)


def _call_line(arguments: Any, *, plain: bool) -> dict[str, Any]:
    line: dict[str, Any] = {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "timestamp": "2026-03-01T00:00:01.000Z",
        "message": {
            "id": "msg_1",
            "model": "claude-sonnet-4-5",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": arguments}],
            "usage": {"input_tokens": 3, "output_tokens": 4},
        },
    }
    if plain:  # (a field of another type than the typed read takes: read as an object)
        line["message"]["usage"]["cache_read_input_tokens"] = "0"
    return line


def _user_line(content: str) -> dict[str, Any]:
    """A Claude Code session's first user line, saying ``content``."""
    return {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s",
        "cwd": "/p",
        "timestamp": "2026-03-01T00:00:00.000Z",
        "message": {"role": "user", "content": content},
    }


def _load(tmp_path: Path, rows: list[dict[str, Any]]) -> Session:
    """The session of a Claude Code file of ``rows``, one JSON line each."""
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return load_session(path)


@pytest.mark.parametrize("plain", [False, True], ids=["typed", "plain"])
@pytest.mark.parametrize("depth", [1, MAX_DEPTH + 5])
def test_a_loaded_call_s_arguments_are_bounded(tmp_path: Path, plain: bool, depth: int) -> None:
    arguments = {"command": "ls", "deep": _nested(depth)}
    user = _user_line("go")
    rows = [user, _call_line(arguments, plain=plain)]
    session = _load(tmp_path, rows)
    (call,) = [tc for m in session.messages for tc in m.tool_calls]
    assert call.arguments == bounded(arguments)


def test_a_compaction_event_is_what_validation_made() -> None:
    builder = SessionBuilder(SourceFormat.CLAUDE_CODE, None)
    builder.append(Message(index=0, role=Role.USER, id="m", text="x"))
    event = builder.add_compaction(trigger="auto", tokens_before=12, source_line=3)
    made = CompactionEvent(message_index=1, trigger="auto", tokens_before=12, source_line=3)
    assert event == made
    assert event.model_dump() == made.model_dump()
    assert event.model_dump_json() == made.model_dump_json()
    event.summary = "s"
    assert event.summary == "s"


def _error_line(uuid: str, parent: str, window: int, *, sidechain: bool) -> dict[str, Any]:
    text = f"API Error: 400 prompt is too long: 300000 tokens > {window} maximum"
    return {
        "type": "assistant",
        "uuid": uuid,
        "parentUuid": parent,
        "isSidechain": sidechain,
        "isApiErrorMessage": True,
        "timestamp": "2026-03-01T00:00:02.000Z",
        "message": {
            "id": f"msg_{uuid}",
            "model": "<synthetic>",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
        },
    }


@pytest.mark.parametrize(
    ("windows", "expected"),
    [
        ([(111_000, False)], 111_000),
        ([(111_000, True)], None),  # a sidechain's error states no window of the session
        ([(111_000, False), (222_000, True)], 111_000),
        ([(111_000, False), (222_000, False)], 222_000),  # the last one said
    ],
)
def test_the_window_an_error_states_is_the_last_main_one(
    tmp_path: Path, windows: list[tuple[int, bool]], expected: int | None
) -> None:
    """What the assembler keeps of the errors is what the messages hold (it was read from
    them): the main messages' errors, in order."""
    user = _user_line("go")
    rows: list[dict[str, Any]] = [user]
    for k, (window, sidechain) in enumerate(windows):
        rows.append(_error_line(f"e{k}", rows[-1]["uuid"], window, sidechain=sidechain))
    session = _load(tmp_path, rows)
    held = [m.error for m in session.messages if m.error and not m.sidechain]
    assert len(held) == sum(not sidechain for _, sidechain in windows)
    assert session.metadata.get("window_from_error") == expected


def test_long_non_ascii_lines_read_as_views_load_as_copies_did(tmp_path: Path) -> None:
    """Each line of a chunk a view of it, ASCII or not: a line read typed and a line read as an
    object (``system``) give what they gave as copies."""
    output = "→ " * 2_000
    rows: list[dict[str, Any]] = [
        _user_line("é" * 3_000),
        _call_line({"command": "ls"}, plain=False),
        {
            "type": "user",
            "uuid": "u2",
            "parentUuid": "a1",
            "timestamp": "2026-03-01T00:00:02.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": output}],
            },
        },
        {
            "type": "system",
            "subtype": "informational",
            "uuid": "s1",
            "parentUuid": "u2",
            "content": "ü" * 2_000,
            "timestamp": "2026-03-01T00:00:03.000Z",
        },
    ]
    session = _load(tmp_path, rows)
    assert [m.role for m in session.messages] == [Role.USER, Role.ASSISTANT, Role.TOOL]
    assert session.messages[0].text == "é" * 3_000
    tool_result = session.messages[2].tool_result
    assert tool_result is not None and tool_result.output == output
    offsets = [m.source_offset for m in session.messages]
    assert offsets == [0, *[len(json.dumps(r)) + 1 for r in rows[:1]], offsets[2]]
    assert offsets[2] == sum(len(json.dumps(r)) + 1 for r in rows[:2])
    assert not session.diagnostics
