"""A tool output with a character past U+00FF (Claude Code's ``→`` in every Read output) makes
CPython hold the whole string 2 bytes a character: a :class:`ToolResult` keeps such an output as
its UTF-8 bytes (half the memory for mostly-ASCII text), and every reader, record, copy,
comparison and truncation sees the same text as before."""

from __future__ import annotations

import copy
import json
import pickle
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.algorithms.prune import prune
from core.algorithms.truncate import truncate_tool_output
from core.formats import ctxscope_jsonl as cj
from core.formats import load_session
from core.model.session import (
    Message,
    Role,
    ToolResult,
    Utf8Text,
    from_record,
    replace,
    to_record,
)
from core.model.tokens import get_counter
from core.policy import PruningPolicy, TruncationPolicy
from core.replay.truncation import sent_output
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.support.decoded import spy_on_decoding

READ = "".join(f"{n:>6}→line {n} of a file, mostly ASCII\n" for n in range(1, 400))
"""A Claude Code Read output: a ``→`` after every line number makes the string UCS-2."""


def _held(result: ToolResult) -> Any:
    """What the struct holds in its ``output`` field (msgspec's view of the fields)."""
    return msgspec.structs.asdict(result)["output"]


def test_a_wide_output_is_held_as_fewer_bytes_and_read_as_the_same_text() -> None:
    result = ToolResult(call_id="c", tool_name="Read", output=READ)
    held = _held(result)
    assert isinstance(held, Utf8Text)
    assert sys.getsizeof(held.data) < sys.getsizeof(READ) * 0.6
    assert held.data == READ.encode()
    assert type(result.output) is str
    assert result.output == READ


@pytest.mark.parametrize(
    "text",
    ["", "plain ASCII\n", "café, naïve: Latin-1 is 1 byte a character", "漢字ばかり" * 50],
    ids=["empty", "ascii", "latin-1", "cjk"],
)
def test_an_output_no_smaller_in_utf8_stays_the_string_itself(text: str) -> None:
    """ASCII and Latin-1 are 1 byte a character already; CJK is 3 in UTF-8 and 2 as a string."""
    result = ToolResult(call_id="c", output=text)
    assert _held(result) is text
    assert result.output is text


def test_records_copies_and_comparisons_see_the_text() -> None:
    result = ToolResult(call_id="c", tool_name="Read", output=READ, is_error=True)
    assert result == ToolResult(
        call_id="c", tool_name="Read", output=READ[:-1] + "\n", is_error=True
    )
    assert result != ToolResult(call_id="c", tool_name="Read", output=READ + "→", is_error=True)
    record = to_record(result)
    assert record == {"call_id": "c", "tool_name": "Read", "output": READ, "is_error": True}
    assert from_record(record, ToolResult) == result
    assert isinstance(_held(from_record(record, ToolResult)), Utf8Text)
    message = Message(index=0, id="m", role=Role.TOOL, tool_result=result)
    assert to_record(message)["tool_result"]["output"] == READ
    assert pickle.loads(pickle.dumps(result)) == result
    assert copy.deepcopy(message) == message
    # a copy keeps the held bytes, a new output is held as the constructor holds it
    same = replace(result, is_error=False)
    assert _held(same) is _held(result) and same.output == READ
    other = replace(result, output="→ " + READ)
    assert isinstance(_held(other), Utf8Text) and other.output == "→ " + READ
    assert _held(replace(result, output="short")) == "short"


def test_an_encoder_that_meets_the_held_bytes_fails_rather_than_writing_base64() -> None:
    result = ToolResult(call_id="c", output=READ)
    with pytest.raises(TypeError, match="Utf8Text"):
        msgspec.json.encode(result)
    with pytest.raises(TypeError, match="Utf8Text"):
        msgspec.to_builtins(result)


def test_an_output_is_a_string() -> None:
    with pytest.raises(TypeError, match="a tool output is a str"):
        ToolResult(call_id="c", output=b"raw")  # type: ignore[arg-type]
    with pytest.raises(msgspec.ValidationError, match="output"):
        from_record({"call_id": "c", "output": 5}, ToolResult)
    result = ToolResult(call_id="c", output=READ)
    with pytest.raises(AttributeError):
        result.output = "x"


@pytest.mark.parametrize(
    "text", [READ, "x" * 50 + "\n" * 3, "漢字\n" * 9, ""], ids=["read", "ascii", "cjk", "empty"]
)
def test_sizes_and_lines_read_without_decoding_are_the_text_s(text: str) -> None:
    result = ToolResult(call_id="c", output=text)
    assert result.output_utf8_size() == len(text.encode())
    assert result.output_lines() == text.count("\n") + 1


def test_the_ctxscope_file_writes_and_reads_back_the_text(tmp_path: Path) -> None:
    session = SessionBuilder().user("read it").tool("Read", READ).reply("done").session()
    out = tmp_path / "s.jsonl"
    cj.write_session(session, out)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["tool_result"]["output"] for r in records if "tool_result" in r] == [READ]
    again = load_session(out)
    assert [to_record(m) for m in again.messages] == [to_record(m) for m in session.messages]
    held = [m.tool_result for m in again.messages if m.tool_result is not None]
    assert [r.output for r in held] == [READ]
    assert isinstance(_held(held[0]), Utf8Text)


def test_truncation_and_pruning_give_the_same_texts() -> None:
    session = (
        SessionBuilder()
        .user("one")
        .tool("Read", READ)
        .user("two")
        .tool("Read", text_of_tokens(50) + "→")
        .session()
    )
    rules = TruncationPolicy(max_lines=20, max_bytes=10_000)
    message = session.messages[2]
    assert message.tool_result is not None
    outcome = sent_output(message, rules)
    plain = truncate_tool_output(
        READ, tool_name="Read", call_id=message.tool_result.call_id, policy=rules, spill=False
    )
    assert outcome.truncated and outcome.content == plain.content
    pruned = prune(
        session.messages,
        PruningPolicy(protect_turns=1),
        counter=get_counter("chars/4"),
        now_ms=1,
    )
    outputs = [m.tool_result.output for m in pruned.messages if m.tool_result is not None]
    assert outputs == ["<tool-output-compacted />", text_of_tokens(50) + "→"]


def _line(n: int, kind: str, content: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": f"u{n}",
        "parentUuid": f"u{n - 1}" if n > 1 else None,
        "sessionId": "s",
        "timestamp": "2026-03-01T00:00:01.000Z",
        "message": {
            "role": kind,
            "content": content,
            **({"id": f"m{n}"} if kind == "assistant" else {}),
        },
    }


def test_a_claude_code_read_output_is_held_from_the_load(tmp_path: Path) -> None:
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}}
    answer = {"type": "tool_result", "tool_use_id": "t1", "content": READ}
    rows = [
        _line(1, "user", "read a.py"),
        _line(2, "assistant", [call]),
        _line(3, "user", [answer]),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    session = load_session(path)
    results = [m.tool_result for m in session.messages if m.tool_result is not None]
    assert [r.output for r in results] == [READ]
    assert isinstance(_held(results[0]), Utf8Text)


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab\n→é漢🚀"), max_size=120),
    count=st.integers(min_value=1, max_value=12),
)
def test_the_ends_of_an_output_are_its_slices(text: str, count: int) -> None:
    """Held as UTF-8 or not, cut inside a character or not: the ends read without decoding the
    whole output are the text's own slices (the end None when the start holds it all)."""
    result = ToolResult(call_id="c", output=text)
    assert result.output_ends(count) == (
        text[:count],
        text[-count:] if len(text) > count else None,
    )


@given(
    text=st.text(alphabet=st.sampled_from("ab\n→é漢🚀"), max_size=120),
    count=st.integers(min_value=1, max_value=12),
)
def test_the_ends_utf8_hold_the_ends(text: str, count: int) -> None:
    """Held as UTF-8 or not: the UTF-8 windows start with the first end's UTF-8 and end with
    the last end's (the whole text's, when the start holds it all)."""
    result = ToolResult(call_id="c", output=text)
    head, tail = result.output_ends(count)
    first, last = result.output_ends_utf8(count)
    assert first.startswith(head.encode())
    assert last.endswith((head if tail is None else tail).encode())


def test_the_ends_utf8_of_an_output_their_windows_cover_are_the_output_once() -> None:
    """An output held as UTF-8 that two windows cover whole is given whole, the same bytes
    twice (a reader looks at them once); a longer one as its windows: ``count`` bytes and the
    bytes the output has past one a character (two for a ``→``), at most ``4 * count``."""
    for text, whole, window in (
        ("→" + "a" * 2997, True, 3000),
        ("→" + "a" * 4001, True, 4004),
        ("→" + "a" * 4002, False, 2002),
        ("→" * 5 + "a" * 30_000, False, 2010),
        ("→" * 2000 + "a" * 30_000, False, 6000),
        ("→" * 4000 + "a" * 30_000, False, 8000),
        ("→" * 3000 + "a" * 7000, True, 16000),
    ):
        result = ToolResult(call_id="c", output=text)
        assert type(result.output_held) is not str  # (held as UTF-8)
        first, last = result.output_ends_utf8(2000)
        assert (first is last) is whole, len(text)
        assert (len(first), len(last)) == (window, window)


def test_the_ends_of_a_long_held_output_decode_only_the_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "→" + "x" * 50_000 + "🚀 exit code 1"
    result = ToolResult(call_id="c", output=text)
    assert type(result.output_held) is not str  # (held as UTF-8)
    decoded = spy_on_decoding(monkeypatch)
    assert result.output_ends(2000) == (text[:2000], text[-2000:])
    assert decoded == []
