"""Bad input never raises a traceback and never touches the file.

Each case ends in a loaded Session whose diagnostics name the line and the reason, or in one
clear :class:`LoadError`; the file's bytes and mtime are the same afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.formats import LoadError, load_session
from core.model.session import Role, Session, Severity
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures"
CLAUDE = FIXTURES / "claude" / "9b1c0e55-7a2d-4c3e-9f10-5a6b7c8d9e0f.jsonl"
CODEX = (
    FIXTURES / "codex" / "rollout-2026-04-01T12-00-00-019d0000-aaaa-7bbb-8ccc-000000000001.jsonl"
)


def _load_untouched(path: Path, **kwargs: Any) -> Session | LoadError:
    """Load ``path``; return the Session or the LoadError; assert the file did not change."""
    stat = path.stat() if path.is_file() else None
    before = path.read_bytes() if path.is_file() else None
    try:
        result: Session | LoadError = load_session(path, **kwargs)
    except LoadError as exc:
        result = exc
    if stat is not None:
        after = path.stat()
        assert (after.st_mtime_ns, after.st_size) == (stat.st_mtime_ns, stat.st_size)
        assert path.read_bytes() == before
    return result


def _codes(session: Session) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in session.diagnostics]


def _claude_rows() -> list[bytes]:
    return CLAUDE.read_bytes().splitlines(keepends=True)


def _codex_rows() -> list[bytes]:
    return CODEX.read_bytes().splitlines(keepends=True)


@pytest.fixture(params=["claude", "codex"])
def rows(request: pytest.FixtureRequest) -> Iterator[list[bytes]]:
    yield _claude_rows() if request.param == "claude" else _codex_rows()


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    error = _load_untouched(path)
    assert isinstance(error, LoadError) and "empty file" in str(error)


def test_a_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    error = _load_untouched(tmp_path)
    assert isinstance(error, LoadError)
    assert "not an opencode storage folder" in str(error)


def test_a_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "image.jsonl"
    path.write_bytes(bytes(range(256)) * 64)
    error = _load_untouched(path)
    assert isinstance(error, LoadError) and "binary file" in str(error)
    forced = _load_untouched(path, format="claude-code")
    assert isinstance(forced, LoadError) and "binary file" in str(forced)


def test_a_json_array_instead_of_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    records = [json.loads(line) for line in _claude_rows()]
    path.write_text(json.dumps(records, indent=2))
    error = _load_untouched(path)
    assert isinstance(error, LoadError) and "JSON array" in str(error)
    forced = _load_untouched(path, format="codex")
    assert isinstance(forced, LoadError) and "JSON array" in str(forced)


def test_invalid_json_on_some_lines(tmp_path: Path, rows: list[bytes]) -> None:
    good = _load_untouched(_write(tmp_path / "good.jsonl", rows))
    assert isinstance(good, Session)
    broken = list(rows)
    broken.insert(5, b'{"type": "user", "message": {oops\n')
    broken.insert(9, b"<<<merge conflict>>>\n")
    session = _load_untouched(_write(tmp_path / "broken.jsonl", broken))
    assert isinstance(session, Session)
    invalid = [d for d in session.diagnostics if d.code == "invalid-json"]
    assert [d.line for d in invalid] == [6, 10]
    assert all(d.severity is Severity.WARNING for d in invalid)
    # everything else still loads
    assert [m.text for m in session.messages] == [m.text for m in good.messages]


def test_a_partial_last_line(tmp_path: Path, rows: list[bytes]) -> None:
    cut = b"".join(rows) + rows[-1][: len(rows[-1]) // 2]  # still being written
    path = tmp_path / "live.jsonl"
    path.write_bytes(cut)
    session = _load_untouched(path)
    assert isinstance(session, Session)
    partial = [d for d in session.diagnostics if d.code == "partial-last-line"]
    assert len(partial) == 1
    assert partial[0].severity is Severity.INFO
    assert partial[0].line == len(rows) + 1
    assert "still being written" in partial[0].message
    assert not [d for d in session.diagnostics if d.code == "invalid-json"]


def test_a_complete_last_line_without_newline_loads(tmp_path: Path, rows: list[bytes]) -> None:
    path = tmp_path / "no-newline.jsonl"
    path.write_bytes(b"".join(rows).rstrip(b"\n"))
    session = _load_untouched(path)
    assert isinstance(session, Session)
    assert not session.diagnostics or all(
        d.code != "partial-last-line" for d in session.diagnostics
    )
    full = load_session(_write(tmp_path / "full.jsonl", rows))
    assert len(session.messages) == len(full.messages)


def test_non_utf8_bytes(tmp_path: Path) -> None:
    lines = _claude_rows()
    index = next(i for i, line in enumerate(lines) if b"Fix it please." in line)
    lines[index] = lines[index].replace(b"Fix it please.", b"Fix it \xff\xfe please.")
    session = _load_untouched(_write(tmp_path / "latin.jsonl", lines))
    assert isinstance(session, Session)
    assert ("non-utf8", index + 1) in _codes(session)
    fixed = next(m for m in session.messages if "please." in m.text)
    assert "\ufffd" in fixed.text and fixed.is_turn_start


def test_a_50_mb_single_line(tmp_path: Path) -> None:
    big = "0123456789abcdef" * (50 * 1024 * 1024 // 16)
    path = tmp_path / "huge.jsonl"
    record = {
        "parentUuid": None,
        "sessionId": "big",
        "type": "user",
        "uuid": "u-big",
        "message": {"role": "user", "content": big},
    }
    path.write_bytes(json.dumps(record).encode() + b"\n")
    assert path.stat().st_size > 50 * 1024 * 1024
    session = _load_untouched(path)
    assert isinstance(session, Session)
    assert len(session.messages) == 1 and len(session.messages[0].text) == len(big)
    assert not session.diagnostics


def test_a_50_mb_tool_output_in_codex(tmp_path: Path) -> None:
    rows = _codex_rows()
    index = next(i for i, line in enumerate(rows) if b'"call_id":"call_run","output"' in line)
    record = json.loads(rows[index])
    record["payload"]["output"] = "y" * (50 * 1024 * 1024)
    rows[index] = json.dumps(record).encode() + b"\n"
    session = _load_untouched(_write(tmp_path / "rollout-big.jsonl", rows))
    assert isinstance(session, Session)
    run = next(m for m in session.messages if m.tool_result and m.tool_result.call_id == "call_run")
    assert run.tool_result is not None and len(run.tool_result.output) == 50 * 1024 * 1024


def test_unknown_line_types_and_fields(tmp_path: Path) -> None:
    claude = _claude_rows()
    claude.insert(3, b'{"type":"telepathy","uuid":"t-1","parentUuid":"u-001","payload":{"x":1}}\n')
    claude.insert(4, b'{"no_type_at_all":true}\n')
    session = _load_untouched(_write(tmp_path / "claude.jsonl", claude))
    assert isinstance(session, Session)
    unknown = [d for d in session.diagnostics if d.code == "unknown-record"]
    assert {d.line for d in unknown} >= {4, 5}
    assert all(d.severity in (Severity.INFO, Severity.WARNING) for d in unknown)
    assert len(session.model_calls()) == len(load_session(CLAUDE).model_calls())

    codex = _codex_rows()
    codex.insert(2, b'{"timestamp":"t","type":"hyperdrive","payload":{"warp":9}}\n')
    codex.insert(
        3, b'{"timestamp":"t","type":"response_item","payload":{"type":"hologram","x":1}}\n'
    )
    session = _load_untouched(_write(tmp_path / "rollout-x.jsonl", codex))
    assert isinstance(session, Session)
    assert {d.line for d in session.diagnostics if d.code == "unknown-record"} >= {3, 4}


def test_unexpected_shapes_do_not_raise(tmp_path: Path) -> None:
    lines = [
        b'{"type":"user","uuid":"a","parentUuid":null,"sessionId":"s","message":"a string"}\n',
        b'{"type":"assistant","uuid":"b","parentUuid":"a","sessionId":"s","message":{"id":7,"content":[1,2,{"type":"tool_use"}],"usage":{"input_tokens":"many"}}}\n',
        b'{"type":"user","uuid":"c","parentUuid":"b","sessionId":"s","message":{"content":[{"type":"tool_result","content":{"weird":true}}]}}\n',
        b'{"type":"system","uuid":"d","parentUuid":"c","sessionId":"s","subtype":"compact_boundary","compactMetadata":"none"}\n',
    ]
    session = _load_untouched(_write(tmp_path / "odd.jsonl", lines))
    assert isinstance(session, Session)
    assert len(session.compactions) == 1 and session.compactions[0].trigger == "unknown"
    codex = [
        b'{"timestamp":"t","type":"session_meta","payload":{"id":5,"base_instructions":7}}\n',
        b'{"timestamp":"t","type":"response_item","payload":{"type":"function_call","arguments":{"a":1}}}\n',
        b'{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":"x"}}}\n',
        b'{"timestamp":"t","type":"compacted","payload":{"message":null,"replacement_history":[1,"x"]}}\n',
        b'{"timestamp":"t","type":"response_item","payload":"not an object"}\n',
    ]
    session = _load_untouched(_write(tmp_path / "rollout-odd.jsonl", codex))
    assert isinstance(session, Session)


def test_duplicate_uuids(tmp_path: Path) -> None:
    lines = _claude_rows()
    index = next(i for i, line in enumerate(lines) if b'"uuid":"u-003"' in line)
    lines.insert(index + 1, lines[index])  # the same line written twice (a resumed writer)
    session = _load_untouched(_write(tmp_path / "dup.jsonl", lines))
    assert isinstance(session, Session)
    assert ("duplicate-uuid", index + 2) in _codes(session)
    assert [m.text for m in session.messages].count("Fix it please.") == 1


def test_tool_result_whose_call_is_missing(tmp_path: Path) -> None:
    lines = [line for line in _claude_rows() if b'"id":"toolu_read"' not in line]
    session = _load_untouched(_write(tmp_path / "orphan.jsonl", lines))
    assert isinstance(session, Session)
    orphans = [d for d in session.diagnostics if d.code == "orphan-tool-result"]
    assert len(orphans) == 1 and "toolu_read" in orphans[0].message
    result_line = next(
        i + 1 for i, line in enumerate(lines) if b'"tool_use_id":"toolu_read"' in line
    )
    assert orphans[0].line == result_line
    tool = next(
        m for m in session.messages if m.tool_result and m.tool_result.call_id == "toolu_read"
    )
    assert tool.tool_result is not None and tool.tool_result.tool_name is None  # loaded anyway


def test_call_whose_result_is_missing(tmp_path: Path) -> None:
    lines = [line for line in _claude_rows() if b'"tool_use_id":"toolu_run"' not in line]
    session = _load_untouched(_write(tmp_path / "unanswered.jsonl", lines))
    assert isinstance(session, Session)
    missing = [d for d in session.diagnostics if d.code == "missing-tool-result"]
    assert len(missing) == 1 and "toolu_run" in missing[0].message
    call = next(m for m in session.messages if m.id == "msg_01")
    assert missing[0].line == call.source_line
    assert [t.id for t in call.tool_calls] == ["toolu_run", "toolu_read"]  # loaded anyway

    codex = [line for line in _codex_rows() if b'"call_id":"call_run","output"' not in line]
    session = _load_untouched(_write(tmp_path / "rollout-unanswered.jsonl", codex))
    assert isinstance(session, Session)
    assert any(
        d.code == "missing-tool-result" and "call_run" in d.message for d in session.diagnostics
    )


def test_many_bad_lines_are_summarised(tmp_path: Path) -> None:
    lines = _claude_rows() + [b"garbage line\n"] * 1000
    session = _load_untouched(_write(tmp_path / "noisy.jsonl", lines))
    assert isinstance(session, Session)
    invalid = [d for d in session.diagnostics if d.code == "invalid-json"]
    assert len(invalid) < 300
    assert "1000 in all" in invalid[-1].message
    assert session.messages[0].role is Role.USER


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(lines))
    return path


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    return _write(path, [json.dumps(r).encode() + b"\n" for r in records])


def test_counts_that_are_not_numbers_read_as_zero(tmp_path: Path) -> None:
    """Every loader coerces counts with core.model.read_numbers.as_int: an int or a finite float counts;
    a numeric string or a boolean is 0, or None for a count a record may leave out (the Claude
    Code and Codex loaders once read "1200" as 1200 and true as 1)."""
    claude = _jsonl(
        tmp_path / "claude.jsonl",
        [
            {
                "type": "assistant",
                "uuid": "a1",
                "parentUuid": None,
                "sessionId": "s",
                "requestId": "r1",
                "message": {
                    "id": "m1",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "hi"}],
                    "usage": {
                        "input_tokens": "1200",
                        "output_tokens": True,
                        "cache_read_input_tokens": 30,
                        "cache_creation_input_tokens": 2.5,
                    },
                },
            }
        ],
    )
    session = _load_untouched(claude)
    assert isinstance(session, Session)
    usage = session.messages[0].usage
    assert usage is not None
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (0, 0, 30, 2)

    codex = _jsonl(
        tmp_path / "rollout-x.jsonl",
        [
            {"type": "session_meta", "payload": {"id": "s", "cwd": "/p"}},
            {
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "hi"}],
                },
            },
            {
                "type": "event_msg",
                "payload": {
                    "type": "token_count",
                    "info": {
                        "last_token_usage": {
                            "input_tokens": 500,
                            "cached_input_tokens": "100",
                            "output_tokens": 20.0,
                            "total_tokens": "520",
                        }
                    },
                },
            },
        ],
    )
    session = _load_untouched(codex)
    assert isinstance(session, Session)
    usage = session.messages[-1].usage
    assert usage is not None
    assert (usage.input, usage.cache_read, usage.output, usage.total) == (500, 0, 20, None)


def test_a_type_that_is_a_list_or_an_object(tmp_path: Path) -> None:
    """A record whose ``type`` is a JSON list or object is a line without a type (the Claude Code
    loader once stopped with a TypeError: it looked such a type up in a set)."""
    rows = _claude_rows()
    bad = [b'{"type": ["user"], "uuid": "bad-1"}\n', b'{"type": {"a": 1}, "uuid": "bad-2"}\n']
    session = _load_untouched(_write(tmp_path / "typed.jsonl", rows[:1] + bad + rows[1:]))
    assert isinstance(session, Session)
    assert ("unknown-record", 2) in _codes(session) and ("unknown-record", 3) in _codes(session)
    assert len(session.messages) == len(_load_untouched(CLAUDE).messages)  # type: ignore[union-attr]
