"""The Claude Code loader walks each batch of lines itself (:meth:`core.formats.claude_code.
_Reader.walk`, through ``read_jsonl_raw``'s ``walk``): the session, its diagnostics and the
empty-file errors are those of the generic line reader it replaced (``Lines.objects`` calling
the typed read back for each line, :meth:`~core.formats.claude_code._Reader.typed_line`), on
every fixture and sample and on lines of every damaged kind the reader reports."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.formats import claude_code
from core.formats.base import LoadError, SessionBuilder
from core.formats.jsonl import Lines
from core.model.session import Session
from tests.support.sessions import session_facts
from tests.unit.test_formats_claude_linked import _load, _paths


def _load_by_objects(path: Path, head_bytes: int | None = None) -> Session:
    """The load as it was before the walk: the generic reader's ``objects`` loop, which calls
    the typed read back for each line and yields the others."""
    return _load(path, walk=False, head_bytes=head_bytes)[0]


def _same(path: Path, head_bytes: int | None = None) -> dict[str, Any]:
    walked = session_facts(claude_code.load(path, head_bytes=head_bytes))
    assert walked == session_facts(_load_by_objects(path, head_bytes))
    return walked


@pytest.mark.parametrize("path", _paths(), ids=lambda p: p.name)
def test_fixture_and_sample_read_the_same_walked(path: Path) -> None:
    _same(path)


def _rows() -> list[dict[str, Any]]:
    """A short conversation: a prompt, a reply in two block lines (a text, a tool call), its
    result, a line passed over, a system line (read the plain way) and a reply."""
    usage = {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 100}
    reply = {"id": "msg_1", "model": "claude-sonnet-4-5", "usage": usage}
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "a \u2192\nb"}
    rows: list[dict[str, Any]] = [
        {"type": "user", "message": {"role": "user", "content": "list the files"}},
        {"type": "assistant", "requestId": "r1", "message": {**reply, "content": [call]}},
        {"type": "user", "message": {"role": "user", "content": [result]}},
        {"type": "progress", "data": {"type": "hook"}},
        {"type": "system", "subtype": "turn_duration", "durationMs": 5},
        {"type": "assistant", "requestId": "r2", "message": {**reply, "id": "msg_2"}},
    ]
    return [
        {
            "sessionId": "s1",
            "cwd": "/w",
            "version": "2.1.0",
            **row,
            "uuid": f"u{k}",
            "parentUuid": f"u{k - 1}" if k else None,
            "timestamp": f"2026-04-01T12:00:0{k}.000Z",
        }
        for k, row in enumerate(rows)
    ]


_DAMAGED = [
    b"",
    b"   \t",
    b'{"type":"user","uuid":"cut","message":{"role":"user","content":"cut',
    b"{not json",
    b"[1, 2]",
    b"42",
    b'{"type":"summary","summary":"a"}{"type":"custom-title","customTitle":"b"}',
    b'{"type":"user","uuid":"x1","message":{"role":"user","content":"\xff"}}',
    b'{"type":"assistant","uuid":"x2","message":{"id":"m","content":[{"type":"text","text":1}]}}',
    b'{"type":"user","uuid":"u1","parentUuid":"u0","message":{"role":"user","content":"dup"}}',
    b'{"type":"progress","uuid":"x3","parentUuid":"elsewhere"}',
]
"""Lines of every kind the line reader treats apart: blank, cut, not JSON, not an object,
two records on a line, bytes that are not UTF-8, a field of another type (read the plain
way), a repeated uuid, a line passed over that names another parent."""


@pytest.mark.parametrize("last", [b"", b'{"type":"user","message":{"content":"cu'])
def test_damaged_lines_read_the_same_walked(tmp_path: Path, last: bytes) -> None:
    rows = [json.dumps(row, separators=(",", ":")).encode() for row in _rows()]
    lines: list[bytes] = []
    for k, row in enumerate(rows * 2):
        lines.append(row)
        lines.append(_DAMAGED[k % len(_DAMAGED)])
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n" + last)
    facts = _same(path)
    assert facts["diagnostics"]  # (the damaged lines were reported)
    size = len(path.read_bytes())
    for head in (len(rows[0]) + 20, size // 2, size - 3):
        _same(path, head_bytes=head)


@pytest.mark.parametrize("content", [b"", b"\n  \n", b"[1]\n42\n"])
def test_a_file_without_a_record_is_the_same_error_walked(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    assert _error(claude_code.load, path) == _error(_load_by_objects, path)


def _error(load: Callable[[Path], Session], path: Path) -> str:
    try:
        load(path)
    except LoadError as exc:
        return str(exc)
    raise AssertionError(f"{path} loaded")


def test_the_walk_yields_only_the_lines_it_does_not_read_typed(tmp_path: Path) -> None:
    rows = [json.dumps(row).encode() for row in _rows()]
    path = tmp_path / "s.jsonl"
    reader = claude_code._Reader(SessionBuilder(claude_code.FORMAT, path))
    lines = Lines(reader.builder, None, 0)
    left = []
    for line_no, offset, raw, obj in reader.walk(lines, [*rows, b"", b"42"]):
        left.append((line_no, offset, raw, obj))
        reader.line(line_no, offset, obj)  # (before the walk goes on, as the load does)
    # the system line is read as an object (the blank line is passed over, 42 is no object)
    assert [(line_no, obj["type"]) for line_no, _, _, obj in left] == [(5, "system")]
    assert (lines.line_no, lines.offset) == (8, sum(len(r) + 1 for r in rows) + 4)
    assert (lines.objects_read, lines.non_blank) == (6, 7)
    assert [e.uuid for e in reader.entries] == ["u0", "u1", "u2", "u5"]
    assert reader.linked  # (the system line, read as yielded, is the next line's parent)


def test_the_start_is_the_first_typed_line_s_timestamp(tmp_path: Path) -> None:
    rows = _rows()
    del rows[0]["timestamp"], rows[1]["timestamp"]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    session = claude_code.load(path)
    assert session.started_at == "2026-04-01T12:00:02.000Z"
    assert session_facts(session) == session_facts(_load_by_objects(path))


@pytest.mark.parametrize("at", [0, 1, 255, 262, 263, 291, 292, 293, 299, 300, 320])
@pytest.mark.parametrize("typed", [True, False])
def test_a_compact_command_is_looked_for_in_the_first_300_characters(at: int, typed: bool) -> None:
    """A user line is a ``/compact`` command when its text is the command (typed) or holds the
    agent's tag for it within its first 300 characters."""
    from core.formats.claude_compactions import COMMAND_TAG
    from core.formats.claude_records import USER, Entry

    text = "/compact" + " x" * at if typed else "x" * at + COMMAND_TAG
    reader = claude_code._Reader(SessionBuilder(claude_code.FORMAT, None))
    entry = Entry(USER, 7, 0, "u", None)
    entry.one_text = text
    reader._user_facts(7, entry, None)
    expected = typed or COMMAND_TAG in text[:300]
    assert reader.compact_commands.pending == ([7] if expected else [])
