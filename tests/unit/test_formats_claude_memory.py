"""What a loaded Claude Code session holds once rather than per message: the empty tool-call
sequence of every message without calls, and the timestamp consecutive lines share. The records
and results are the same as when each message had its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.formats import load_session
from core.model.session import Message, Role, ToolCall, from_record, to_record
from tests.support.paths import TESTS

RECENT = TESTS / "fixtures" / "claude" / "recent_lines.jsonl"


def _line(n: int, kind: str, content: Any, timestamp: str, **more: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": f"u{n}",
        "parentUuid": f"u{n - 1}" if n > 1 else None,
        "sessionId": "s",
        "timestamp": timestamp,
        "message": {"role": kind, "content": content, **more},
    }


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_messages_without_calls_share_one_empty_tuple() -> None:
    session = load_session(RECENT)
    without = [m for m in session.messages if not m.tool_calls]
    with_calls = [m for m in session.messages if m.tool_calls]
    assert without and with_calls
    empty = Message(index=0, id="x", role=Role.USER).tool_calls
    assert type(empty) is tuple and not empty
    assert all(m.tool_calls is empty for m in without)
    assert all(isinstance(m.tool_calls, tuple | list) for m in with_calls)


def test_a_message_built_without_calls_has_the_empty_tuple() -> None:
    one = Message(index=0, id="a", role=Role.USER)
    other = Message(index=1, id="b", role=Role.USER)
    assert one.tool_calls == () and one.tool_calls is other.tool_calls


def test_calls_in_any_sequence_make_the_same_record() -> None:
    call = ToolCall(id="c", name="bash", arguments={"command": "ls"})
    base = Message(index=0, id="m", role=Role.ASSISTANT, text="hi")
    as_tuple = Message(index=0, id="m", role=Role.ASSISTANT, text="hi", tool_calls=(call,))
    as_list = Message(index=0, id="m", role=Role.ASSISTANT, text="hi", tool_calls=[call])
    empty_list = Message(index=0, id="m", role=Role.ASSISTANT, text="hi", tool_calls=[])
    assert (
        to_record(empty_list)
        == to_record(base)
        == {
            "index": 0,
            "id": "m",
            "role": "assistant",
            "text": "hi",
        }
    )
    record = to_record(as_tuple)
    assert record == to_record(as_list)
    assert record["tool_calls"] == [{"id": "c", "name": "bash", "arguments": {"command": "ls"}}]
    assert type(record["tool_calls"]) is list
    assert list(from_record(record, Message).tool_calls) == [call]
    assert from_record(to_record(base), Message).tool_calls == ()


def test_consecutive_lines_with_one_timestamp_share_its_string(tmp_path: Path) -> None:
    same, later = "2026-03-01T00:00:01.000Z", "2026-03-01T00:00:02.000Z"
    rows = [
        _line(1, "user", "hello", same),
        _line(2, "assistant", [{"type": "text", "text": "hi"}], same, id="m1"),
        _line(3, "user", "again", later),
        _line(4, "assistant", [{"type": "text", "text": "yes"}], later, id="m2"),
    ]
    session = load_session(_write(tmp_path / "t.jsonl", rows))
    stamps = [m.timestamp for m in session.messages]
    assert stamps == [same, same, later, later]
    assert stamps[0] is stamps[1] and stamps[2] is stamps[3]
    assert session.started_at == same


def test_the_start_is_the_first_timestamp_even_after_lines_without_one(tmp_path: Path) -> None:
    first = _line(1, "user", "hello", "x")
    del first["timestamp"]
    rows = [first, _line(2, "assistant", "hi", "2026-03-01T00:00:03.000Z", id="m1")]
    session = load_session(_write(tmp_path / "t.jsonl", rows))
    assert session.started_at == "2026-03-01T00:00:03.000Z"
    assert [m.timestamp for m in session.messages] == [None, "2026-03-01T00:00:03.000Z"]


@pytest.mark.parametrize(
    "path",
    [
        *sorted((TESTS / "fixtures" / "codex").glob("*.jsonl")),
        *sorted((TESTS / "fixtures" / "pi").glob("*.jsonl")),
        *sorted((TESTS / "fixtures" / "qwen").glob("*.jsonl")),
        TESTS / "fixtures" / "gemini" / "single.json",
        TESTS / "fixtures" / "opencode" / "export.json",
    ],
    ids=lambda p: p.name,
)
def test_other_formats_share_the_empty_tuple_too(path: Path) -> None:
    """Every loader gives a message without calls the default (an empty list it passed would
    be a list per message, and unequal to the same message read back from ctxscope JSONL)."""
    session = load_session(path)
    empty = Message(index=0, id="x", role=Role.USER).tool_calls
    assert session.messages
    assert all(m.tool_calls is empty for m in session.messages if not m.tool_calls)


def test_an_api_message_is_assembled_in_its_first_lines_entry() -> None:
    """No object is made per call: the entry of a reply's first line stands for its message in
    the assembly (its later block lines merged into it), and the message is the same."""
    from core.formats import claude_typed as typed
    from core.formats.base import SessionBuilder
    from core.formats.claude_assembly import CALL, Assembler
    from core.formats.claude_records import Entry, texts_of
    from core.model.session import SourceFormat

    def block(n: int, message_id: str, content: list[dict[str, Any]]) -> dict[str, Any]:
        line = _line(n, "assistant", content, "2026-03-01T00:00:01.000Z", id=message_id)
        line["requestId"] = f"req-{message_id}"
        return line

    rows = [
        _line(1, "user", "hello", "2026-03-01T00:00:00.000Z"),
        block(2, "m1", [{"type": "text", "text": "one"}]),
        block(3, "m1", [{"type": "tool_use", "id": "c1", "name": "Bash", "input": {}}]),
        _line(
            4,
            "user",
            [{"type": "tool_result", "tool_use_id": "c1", "content": "done"}],
            "2026-03-01T00:00:02.000Z",
        ),
        block(5, "m2", [{"type": "text", "text": "two"}]),
    ]

    def entries_and_assembler() -> tuple[list[Entry], Assembler]:
        reads = [typed.read(json.dumps(row).encode(), n, 0) for n, row in enumerate(rows, 1)]
        entries = [read[1] for read in reads if read is not None and read[1] is not None]
        assert len(entries) == len(rows)
        builder = SessionBuilder(SourceFormat.CLAUDE_CODE, None)
        return entries, Assembler(
            {}, builder, flag_sidechain=True, compact_commands={}, segments={}
        )

    entries, assembler = entries_and_assembler()
    order, calls = assembler._merge(list(entries))
    first, second, third, result, fourth = entries
    assert calls[0] is second and calls[1] is fourth and len(calls) == 2
    assert order == [first, second, result, fourth]
    assert all(a is b for a, b in zip(order, [first, second, result, fourth], strict=True))
    assert second.kind == CALL and third.kind != CALL
    assert list(texts_of(second)) == ["one"] and [c.id for c in second.calls] == ["c1"]
    entries, assembler = entries_and_assembler()
    assembler.run(entries)
    messages = assembler.builder.messages
    texts = [(m.role.value, m.id, m.text, [c.id for c in m.tool_calls]) for m in messages]
    assert texts == [
        ("user", "u1", "hello", []),
        ("assistant", "m1", "one", ["c1"]),
        ("tool", "u4", "", []),
        ("assistant", "m2", "two", []),
    ]


def test_the_reader_lets_its_call_ids_go_before_the_assembly(tmp_path: Path) -> None:
    """The typed read's table of call ids serves the reading only: it goes before the assembly
    (which keeps one table of the calls it keeps), and each result still holds its call's id
    string and name."""
    from core.formats.base import SessionBuilder
    from core.formats.claude_code import FORMAT, _Reader
    from core.formats.jsonl import read_jsonl

    rows = [
        _line(1, "user", "hello", "2026-03-01T00:00:00.000Z"),
        _line(
            2,
            "assistant",
            [{"type": "tool_use", "id": "c1", "name": "Bash", "input": {"command": "ls"}}],
            "2026-03-01T00:00:01.000Z",
            id="m1",
        ),
        _line(
            3,
            "user",
            [{"type": "tool_result", "tool_use_id": "c1", "content": "a → b"}],
            "2026-03-01T00:00:02.000Z",
        ),
    ]
    path = _write(tmp_path / "t.jsonl", rows)
    reader = _Reader(SessionBuilder(FORMAT, path))
    for line_no, offset, obj in read_jsonl(path, reader.builder, typed=reader.typed_line):
        reader.line(line_no, offset, obj)
    assert list(reader.call_ids) == ["c1"]
    session = reader.finish(path)
    assert reader.call_ids == {}
    call, result = session.messages[1].tool_calls[0], session.messages[2].tool_result
    assert result is not None and result.output == "a → b"
    assert result.call_id is call.id and result.tool_name is call.name
