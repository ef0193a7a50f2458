"""What a loaded session holds once although several messages (or fields) hold an equal value:
the ints a message's index and the source lines take (one object per value for the whole
load). The values are those each message had with objects of its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.formats import claude_typed as typed
from core.formats import load_session
from core.formats.base import SHARED_ARGUMENT_CHARS, SessionBuilder
from core.formats.claude_code import _Reader
from core.formats.claude_records import USER, Entry
from core.model.session import Role, Session, SourceFormat
from tests.support.paths import TESTS

CODEX = (
    TESTS
    / "fixtures"
    / "codex"
    / "rollout-2026-04-01T12-00-00-019d0000-aaaa-7bbb-8ccc-000000000001.jsonl"
)


def _claude_rows(turns: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for turn in range(turns):
        n = len(rows)
        call_id = f"toolu_{turn}"
        rows.append(
            {
                "type": "user",
                "uuid": f"u{n}",
                "parentUuid": f"u{n - 1}" if n else None,
                "sessionId": "s",
                "timestamp": "2026-03-01T00:00:00.000Z",
                "message": {"role": "user", "content": f"step {turn}"},
            }
        )
        rows.append(
            {
                "type": "assistant",
                "uuid": f"u{n + 1}",
                "parentUuid": f"u{n}",
                "sessionId": "s",
                "timestamp": "2026-03-01T00:00:00.000Z",
                "requestId": f"req_{turn}",
                "message": {
                    "id": f"msg_{turn}",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [
                        {"type": "text", "text": "on it"},
                        {
                            "type": "tool_use",
                            "id": call_id,
                            "name": "Bash",
                            "input": {"command": "ls"},
                        },
                    ],
                    "stop_reason": "tool_use",
                    "usage": {"input_tokens": 3, "output_tokens": 5},
                },
            }
        )
        rows.append(
            {
                "type": "user",
                "uuid": f"u{n + 2}",
                "parentUuid": f"u{n + 1}",
                "sessionId": "s",
                "timestamp": "2026-03-01T00:00:00.000Z",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "a b"}],
                },
            }
        )
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _int_objects(session: Session) -> tuple[int, int]:
    """How many int objects and how many values the indexes and source lines hold."""
    held = [m.index for m in session.messages]
    held += [m.source_line for m in session.messages if m.source_line is not None]
    return len({id(n) for n in held}), len(set(held))


def test_a_message_index_and_the_line_numbers_share_their_ints(tmp_path: Path) -> None:
    # 600 lines: values past the ints CPython caches (-5..256)
    session = load_session(_write(tmp_path / "s.jsonl", _claude_rows(200)))
    assert len(session.messages) == 600
    assert [m.index for m in session.messages] == list(range(600))
    assert [m.source_line for m in session.messages] == list(range(1, 601))
    objects, values = _int_objects(session)
    assert values == 601
    assert objects == values


def test_codex_lines_share_the_ints_too(tmp_path: Path) -> None:
    head = CODEX.read_text(encoding="utf-8").splitlines(keepends=True)[:6]
    said: dict[str, Any] = {
        "timestamp": "2026-04-01T12:00:02.000Z",
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": []},
    }
    rows = []
    for n in range(400):
        said["payload"]["content"] = [{"type": "input_text", "text": f"question {n}"}]
        rows.append(json.dumps(said) + "\n")
    path = tmp_path / CODEX.name
    path.write_text("".join(head + rows), encoding="utf-8")
    session = load_session(path)
    assert len(session.messages) > 400
    objects, values = _int_objects(session)
    assert objects == values


def test_an_index_is_the_int_an_earlier_message_holds_as_its_source_line() -> None:
    builder = SessionBuilder(SourceFormat.CLAUDE_CODE, None)
    lines = [int(str(n + 1)) for n in range(1000)]  # (objects of their own, past the cached ones)
    for line in lines:
        builder.add(Role.USER, text="x", source_line=line)
    messages = builder.messages
    assert [m.index for m in messages] == list(range(1000))
    assert all(m.index is line for m, line in zip(messages[1:], lines, strict=False))
    session = builder.build()
    assert [m.source_line for m in session.messages] == list(range(1, 1001))


def test_lines_far_past_the_messages_are_not_looked_up() -> None:
    builder = SessionBuilder(SourceFormat.CODEX, None)
    for n in range(300):  # ten lines a message
        builder.add(Role.USER, text="x", source_line=int(str(10 * n + 7)))
    assert [m.index for m in builder.messages] == list(range(300))
    assert len(builder._lines) < 2 * 300 + 64 + 300


def test_equal_argument_values_are_one_string(tmp_path: Path) -> None:
    rows = _claude_rows(3)
    long = "x" * (SHARED_ARGUMENT_CHARS + 1)
    for row, value in zip(rows[1::3], ["ls -la", "ls -la", "pwd"], strict=True):
        row["message"]["content"][1]["input"] = {"command": value, "content": long, "n": 1000}
    session = load_session(_write(tmp_path / "s.jsonl", rows))
    calls = [c for m in session.messages for c in m.tool_calls]
    assert [c.arguments["command"] for c in calls] == ["ls -la", "ls -la", "pwd"]
    assert calls[0].arguments["command"] is calls[1].arguments["command"]
    assert all(c.arguments["content"] == long for c in calls)
    assert calls[0].arguments["content"] is not calls[1].arguments["content"]  # too long to look up
    assert [list(c.arguments) for c in calls] == [["command", "content", "n"]] * 3


def test_an_assistant_entry_holds_its_ids_not_a_key_tuple() -> None:
    raw = json.dumps(_claude_rows(1)[1]).encode()
    read = typed.read(raw, 2, 100)
    assert read is not None and read[1] is not None
    entry = read[1]
    assert "key" not in Entry.__struct_fields__
    assert (entry.message_id, entry.request_id) == ("msg_0", "req_0")
    assert entry.key == ("msg_0", "req_0")
    user = typed.read(json.dumps(_claude_rows(1)[0]).encode(), 1, 0)
    assert user is not None and user[1] is not None and user[1].key is None


def test_a_result_holds_its_call_id_string_from_the_read_of_its_line() -> None:
    call_line, result_line = (json.dumps(row).encode() for row in _claude_rows(1)[1:])
    ids: dict[str, str] = {}
    call = typed.read(call_line, 2, 100, call_ids=ids)
    result = typed.read(result_line, 3, 200, call_ids=ids)
    assert call is not None and call[1] is not None and result is not None and result[1]
    calls, results = call[1].calls, result[1].results
    assert results[0][0] == "toolu_0" and results[0][0] is calls[0].id
    assert ids == {"toolu_0": "toolu_0"}


def _block_line(n: int, message_id: str, request_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "assistant",
        "uuid": f"b{n}",
        "parentUuid": f"b{n - 1}" if n else "u0",
        "sessionId": "s",
        "timestamp": "2026-03-01T00:00:01.000Z",
        "requestId": request_id,
        "message": {
            "id": message_id,
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 3, "output_tokens": 5},
        },
    }


def test_block_lines_merge_by_message_id_and_request_id(tmp_path: Path) -> None:
    # one message id in two requests, their lines interleaved: two messages, each with its own
    # lines (the lookup by message id alone goes on to the request id when they differ)
    rows = [_claude_rows(1)[0]]
    rows += [
        _block_line(0, "msg_a", "req_1", "one"),
        _block_line(1, "msg_a", "req_2", "two"),
        _block_line(2, "msg_a", "req_1", "three"),
        _block_line(3, "msg_b", "req_2", "four"),
        _block_line(4, "msg_a", "req_2", "five"),
    ]
    session = load_session(_write(tmp_path / "s.jsonl", rows))
    said = [(m.id, m.text) for m in session.messages if m.role == Role.ASSISTANT]
    assert said == [
        ("msg_a", "one\n\nthree"),
        ("msg_a#b1", "two\n\nfive"),
        ("msg_b", "four"),
    ]


def test_a_line_with_one_text_holds_the_string_itself() -> None:
    user, assistant = (
        typed.read(json.dumps(row).encode(), n, 0) for n, row in enumerate(_claude_rows(1)[:2])
    )
    assert user is not None and user[1] is not None
    assert assistant is not None and assistant[1] is not None
    for entry, text in ((user[1], "step 0"), (assistant[1], "on it")):
        assert entry.one_text == text and entry.more_texts == ()
        assert list(entry.texts) == [text]
    entry = assistant[1]
    entry.texts = ["a", "b"]
    assert (entry.one_text, list(entry.texts)) == (None, ["a", "b"])
    entry.texts = ()
    assert (entry.one_text, list(entry.texts)) == (None, [])


@pytest.mark.parametrize("flags", [(False, False, False), (True, False, True), (True, True, True)])
def test_an_entry_reads_its_flags_back(flags: tuple[bool, bool, bool]) -> None:
    sidechain, meta, summary = flags
    row = {**_claude_rows(1)[0], "isSidechain": sidechain, "isMeta": meta}
    row["isCompactSummary"] = summary
    read = typed.read(json.dumps(row).encode(), 1, 0)
    assert read is not None and read[1] is not None
    entry = read[1]
    assert (entry.sidechain, entry.meta, entry.summary) == flags
    plain = Entry.of(USER, 1, 0, "u0", None, row)
    assert (plain.sidechain, plain.meta, plain.summary) == flags
    plain.meta = True
    assert (plain.sidechain, plain.meta, plain.summary) == (sidechain, True, summary)
    plain.meta = False
    assert (plain.sidechain, plain.meta, plain.summary) == (sidechain, False, summary)


def test_the_block_lines_of_one_reply_share_its_id_strings() -> None:
    reader = _Reader(SessionBuilder(SourceFormat.CLAUDE_CODE, None))
    lines = [
        _block_line(0, "msg_a", "req_1", "one"),
        _block_line(1, "msg_a", "req_1", "two"),
        _block_line(2, "msg_a", "req_2", "three"),
        _block_line(3, "msg_b", "req_2", "four"),
    ]
    for n, row in enumerate(lines):
        assert reader.typed_line(json.dumps(row).encode(), n + 1, 0)
    first, second, third, fourth = reader.entries
    assert [e.key for e in reader.entries] == [
        ("msg_a", "req_1"),
        ("msg_a", "req_1"),
        ("msg_a", "req_2"),
        ("msg_b", "req_2"),
    ]
    assert second.message_id is first.message_id and second.request_id is first.request_id
    assert third.message_id is first.message_id and third.request_id is not first.request_id
    assert fourth.request_id is not third.request_id  # (another reply: not looked at)


def test_an_api_message_holds_its_texts_as_its_entries_do() -> None:
    # one rule for an entry's texts (texts_of / set_texts) serves the entries and the calls
    # the assembly merges them into: a one-text reply holds its line's own string
    from core.formats.claude_assembly import Assembler, merge_line
    from core.formats.claude_records import texts_of

    rows = [_claude_rows(1)[1], _block_line(1, "msg_0", "req_0", "more")]
    entries = [typed.read(json.dumps(row).encode(), n, 0) for n, row in enumerate(rows)]
    assert all(read is not None and read[1] is not None for read in entries)
    first, second = (read[1] for read in entries if read is not None and read[1] is not None)
    builder = SessionBuilder(SourceFormat.CLAUDE_CODE, None)
    assembler = Assembler({}, builder, flag_sidechain=True, compact_commands={}, segments={})
    _, (call,) = assembler._merge([first])
    assert call.one_text is first.one_text and call.more_texts == ()
    merge_line(call, second)
    assert (call.one_text, list(texts_of(call))) == (None, ["on it", "more"])


def test_a_passed_over_line_gives_its_parent_from_the_typed_read() -> None:
    # the parent (parentUuid, else logicalParentUuid) is read in one place for every line
    row = {"type": "progress", "uuid": "p1", "parentUuid": None, "logicalParentUuid": "u0"}
    read = typed.read(json.dumps(row).encode(), 1, 0)
    assert read is not None and read[1] is None and read[2] == "u0"
    assert not hasattr(typed.Envelope, "parent")
    user = typed.read(json.dumps(_claude_rows(1)[0]).encode(), 1, 0)
    assert user is not None and user[1] is not None and user[2] is user[1].parent is None


@pytest.mark.parametrize(
    "row",
    [
        {"type": "user", "message": {"role": "user", "content": "/compact keep the plan"}},
        {
            "type": "user",
            "isMeta": None,
            "message": {"content": [{"type": "text", "text": "/compact"}]},
        },
        {
            "type": "system",
            "subtype": "local_command",
            "content": "<command-name>/compact</command-name>",
        },
    ],
    ids=["typed", "plain", "local-command"],
)
def test_every_read_of_a_user_line_finds_a_compact_command(row: dict[str, Any]) -> None:
    # one place (_Reader._user_facts) tells a /compact command, whichever way the line is read
    reader = _Reader(SessionBuilder(SourceFormat.CLAUDE_CODE, None))
    line = {"uuid": "c1", "parentUuid": None, "sessionId": "s", **row}
    raw = json.dumps(line).encode()
    if not reader.typed_line(raw, 7, 0):
        reader.line(7, 0, line)
    assert reader.compact_commands.pending == [7]
