"""A tool output cut for a summary request (:func:`core.llm.summary_request.capped_result_output`):
the same entry as decoding the whole output and slicing it, with only the bytes of the start it
keeps decoded for an output held as UTF-8, whose length in characters is the one it is held with
(:meth:`core.model.session.ToolResult.output_chars`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.llm.summary_request import (
    EntryCache,
    build_request,
    cap_tool_output,
    capped_result_output,
    serialize_message,
)
from core.model.session import Message, Role, ToolResult, Utf8Text, replace
from core.model.tokens import utf8_head, utf8_tail
from tests.support.builders import SessionBuilder
from tests.support.decoded import spy_on_decoding

_outputs = st.text(alphabet="ab →é😀\n", max_size=300)


@settings(max_examples=300, deadline=None)
@given(_outputs, st.integers(min_value=0, max_value=320))
def test_the_start_of_utf8_is_the_decoded_text_sliced(text: str, count: int) -> None:
    data = text.encode()
    start, end = utf8_head(data, count)
    assert start == text[:count]
    assert data[:end].decode(errors="ignore").startswith(start)


@settings(max_examples=300, deadline=None)
@given(_outputs, st.integers(min_value=0, max_value=320), st.integers(min_value=0, max_value=3))
def test_the_end_of_utf8_is_the_decoded_text_sliced(text: str, count: int, cut: int) -> None:
    data = text.encode()
    end, begin = utf8_tail(data, count)
    assert end == (text[-count:] if count else "")
    assert end.encode() in data[begin:]
    # a window cut from the end of a text, starting within a character: that one is left out
    window = data[cut:]
    kept = window.decode(errors="ignore")  # (only its start may be cut)
    assert utf8_tail(window, count)[0] == (kept[-count:] if count else "")


@settings(max_examples=300, deadline=None)
@given(_outputs, st.integers(min_value=0, max_value=320))
def test_the_cut_is_the_one_of_the_whole_output(text: str, max_chars: int) -> None:
    result = ToolResult(call_id="c", output=text)
    reference = cap_tool_output(result.output, max_chars)
    assert capped_result_output(result, max_chars) == reference


def test_a_long_output_held_as_utf8_is_cut_from_its_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Any caller (a compaction's request, the command line's, the TUI's): the output is not
    decoded whole to keep its first 2,000 characters."""
    text = "".join(f"{n:6}→line {n} of a file read by the agent\n" for n in range(3_000))
    result = ToolResult(call_id="c", tool_name="Read", output=text)
    assert isinstance(result.output_held, Utf8Text)  # (the case the held length is for)
    message = Message(index=0, id="m", role=Role.TOOL, tool_result=result)
    decoded = spy_on_decoding(monkeypatch)
    plain = serialize_message(message, {}, 2_000)
    assert decoded == []
    assert plain == f"[Tool result]: Read\n{cap_tool_output(text, 2_000)}"


def _session() -> list[Message]:
    builder = SessionBuilder().user("look at the files")
    for n in range(4):
        body = "".join(f"{k:6}→{'é' * (n % 2)} line {k}\n" for k in range(40 + 300 * n))
        builder.tool("Read", body, {"file_path": f"/f{n}"}).reply(f"read {n}")
    return builder.session().messages


def test_an_entry_cache_makes_the_same_request() -> None:
    messages = _session()
    cache = EntryCache()
    for cap in (50, 2_000, 100_000):
        assert build_request(messages, cap, cache=cache) == build_request(messages, cap)


def test_an_output_tells_its_length_without_decoding_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """For a truncated or pruned copy as for the session's own message: the length an output
    held as UTF-8 keeps."""
    session = SessionBuilder().user("go").tool("Read", "a→b\n" * 900).reply("ok").session()
    tool = next(m for m in session.messages if m.tool_result is not None)
    assert tool.tool_result is not None and isinstance(tool.tool_result.output_held, Utf8Text)
    copy = replace(tool, tool_result=replace(tool.tool_result, output="cut→" + "a" * 50))
    assert copy.tool_result is not None and isinstance(copy.tool_result.output_held, Utf8Text)
    decoded = spy_on_decoding(monkeypatch)
    assert tool.tool_result.output_chars() == 4 * 900
    assert copy.tool_result.output_chars() == 54
    assert decoded == []


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab\n[]", max_size=3_000), st.integers(min_value=0, max_value=2_500))
def test_an_output_held_as_text_is_cut_as_the_text_is(text: str, max_chars: int) -> None:
    """An ASCII output is held as text: cut from it as it is, the same entry."""
    result = ToolResult(call_id="c", output=text)
    assert isinstance(result.output_held, str)
    assert capped_result_output(result, max_chars) == cap_tool_output(text, max_chars)
