"""Whether the ends of a tool output may state an exit code (``_ends_say_exit``, the filter
before a failed command's fact is looked for): read from the bytes of the ends' characters,
never missing an ``exit`` there, and the facts of a head the same as the exact search's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights import conversation_facts
from core.insights.conversation_facts import (
    _EXIT_ENDS,
    _ends_say_exit,
    ascii_lower,
    extract_facts,
)
from core.model.session import ToolResult
from tests.support.builders import SessionBuilder

_LINE = "    12→some line of a file\n"


def _exact(output: str) -> bool:
    """The exact answer: either end's :func:`ascii_lower` holds ``exit``."""
    head, tail = output[:_EXIT_ENDS], output[-_EXIT_ENDS:]
    return "exit" in ascii_lower(head) or "exit" in ascii_lower(tail)


def test_an_exit_past_the_ends_characters_is_not_read() -> None:
    # 20,000 characters of mostly-ASCII output: "exit" at character 5,000 is in neither end
    # (the first 8,000 bytes, the window that holds the first 2,000 characters, held it)
    body = _LINE * 1_000
    output = body[:5_000] + "EXIT" + body[5_004:20_000]
    assert not _exact(output)
    assert not _ends_say_exit(ToolResult(call_id="c", output=output))


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=0, max_value=9_000),
    st.sampled_from(["exit", "Exit", "EXIT", "eXiT"]),
    st.sampled_from(["", "é", "→", "😀", "İ"]),
    st.integers(min_value=1, max_value=400),
)
def test_an_exit_within_an_end_is_read(at: int, word: str, other: str, lines: int) -> None:
    body = (_LINE + other) * lines
    output = body[:at] + word + body[at:]
    result = ToolResult(call_id="c", output=output)
    if _exact(output):
        assert _ends_say_exit(result)
    if "exit" not in output.lower():
        assert not _ends_say_exit(result)


def test_a_failed_command_is_found_in_either_end() -> None:
    body = _LINE * 400
    builder = SessionBuilder().user("run the tests")
    builder.tool("Bash", "Process exited with exit code 2\n" + body, {"command": "make one"})
    builder.tool("Bash", body + "\nerror: it broke\nexit code 3", {"command": "make two"})
    builder.tool("Bash", body[:3_000] + "exit code 4" + body, {"command": "make three"})
    facts = extract_facts(builder.session().messages)
    failed = [f.text for f in facts if f.kind == "failed_command"]
    assert failed == ["make one", "make two"]


def test_a_mostly_ascii_output_s_ends_are_read_without_decoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long Read output held as UTF-8 (an ``→`` a line): its windows are little more than its
    ends' characters, lowered as they are, without decoding them to find where those end."""

    def decoded(data: bytes, count: int) -> tuple[str, int]:
        raise AssertionError("an end was decoded")

    monkeypatch.setattr(conversation_facts, "utf8_head", decoded)
    monkeypatch.setattr(conversation_facts, "utf8_tail", decoded)
    body = _LINE * 1_000
    quiet = ToolResult(call_id="c", output=body)
    assert type(quiet.output_held) is not str  # (held as UTF-8)
    assert not _ends_say_exit(quiet)
    assert _ends_say_exit(ToolResult(call_id="c", output=body + "exit code 1"))
