"""A tool output held as UTF-8 (:class:`~core.model.session.Utf8Text`) comes with its length in
characters and in UTF-16 units, which the string had at hand when it was held: the counts of a
session's tokens, the breakdown and the summary's cut read them and never decode the output."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights.breakdown import breakdown
from core.model.session import Message, Role, ToolResult, Utf8Text, held_output
from core.model.tokens import (
    ESTIMATORS,
    get_counter,
    message_text,
    output_sizes,
    utf8_length,
    utf16_length,
)
from tests.support.builders import SessionBuilder
from tests.support.decoded import spy_on_decoding

WIDE = st.text(alphabet=st.sampled_from("ab \n→é漢🚀\U0010fffd"), max_size=200)
"""ASCII, Latin-1, UCS-2 (``→``, ``漢``) and past U+FFFF (``🚀``, a 4-byte character), mixed."""

READ = "".join(f"{n:>6}→line {n} of a file 🚀\n" for n in range(1, 200))
"""A Read output held as UTF-8 (its arrows), with characters past U+FFFF."""


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(WIDE, st.text(max_size=200)))
def test_an_output_held_as_utf8_holds_the_lengths_of_its_text(text: str) -> None:
    held = held_output(text)
    if isinstance(held, str):
        assert held is text
        return
    assert held.data == text.encode()
    assert held.chars == len(text)
    assert held.units == utf16_length(text)
    result = ToolResult(call_id="c", output=text)
    assert result.output_chars() == len(text)
    assert result.output_utf8_size() == utf8_length(text)


def test_a_held_output_keeps_its_lengths_as_small_numbers() -> None:
    """A mostly-ASCII output's lengths are kept as what they differ from its bytes' count by:
    numbers Python keeps one object of each (-5 to 256), not a new int per output."""
    held = held_output("→" + "a" * 1000)
    assert isinstance(held, Utf8Text)
    assert (held.chars, held.units) == (1001, 1001)
    assert (held._extra, held._astral) == (2, 0)
    wide = held_output("🚀" + "a" * 1000)
    assert isinstance(wide, Utf8Text) and (wide.chars, wide.units) == (1001, 1002)
    assert (wide._extra, wide._astral) == (3, 1)


def test_two_held_outputs_are_equal_when_their_texts_are() -> None:
    one, two, other = held_output(READ), held_output(READ[:-1] + "\n"), held_output(READ + "→")
    assert one == two and hash(one) == hash(two)
    assert one != other
    assert one != READ and one != READ.encode()


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lengths of the outputs held as UTF-8 decoded while the test runs."""
    return spy_on_decoding(monkeypatch)


def _messages() -> list[Message]:
    return (
        SessionBuilder()
        .user("read it")
        .tool("Read", READ)
        .tool("Bash", "plain ASCII output\n")
        .tool("Read", "→")
        .reply("done")
        .session()
        .messages
    )


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_the_tokens_of_messages_read_held_outputs_without_decoding_them(
    estimator: str, decoded: list[int]
) -> None:
    messages = _messages()
    assert any(isinstance(m.tool_result.output_held, Utf8Text) for m in messages if m.tool_result)
    counter = get_counter(estimator)
    sizes = output_sizes(messages)
    tokens = counter.messages_tokens(messages)
    assert decoded == []
    assert tokens == [counter.count(message_text(m)) for m in messages]
    listed = {
        i: chars
        for indices, column in sizes.values()
        for i, chars in zip(indices, column, strict=True)
    }
    assert listed == {
        m.index: len(m.tool_result.output) for m in messages if m.tool_result is not None
    }


@pytest.mark.parametrize("estimator", [*ESTIMATORS, "tiktoken:cl100k_base"])
def test_the_tokens_of_an_output_are_its_text_s(estimator: str) -> None:
    counter = get_counter(estimator)
    for text in (READ, "ascii", "", "→", "🚀" * 3):
        result = ToolResult(call_id="c", output=text)
        assert counter.output_tokens(result) == counter.count(text)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_a_rule_counts_a_held_output_s_tokens_without_decoding_it(
    estimator: str, decoded: list[int]
) -> None:
    result = ToolResult(call_id="c", output=READ)
    get_counter(estimator).output_tokens(result)
    assert decoded == []


def test_the_breakdown_reads_held_outputs_without_decoding_them(decoded: list[int]) -> None:
    session = (
        SessionBuilder().user("read it").tool("Read", READ).reply("done", context=5_000).session()
    )
    result = breakdown(session, calibrate=False)
    assert decoded == []
    assert result.calls[-1].tool_outputs == get_counter().count(READ)


def test_a_redaction_that_keeps_its_length_counts_at_it_in_a_held_output() -> None:
    placeholder = "[REDACTED_TEXT len=4000 sha=036b7e47]"
    session = (
        SessionBuilder().user("go").tool("Read", "→ " + placeholder).reply("ok", context=3_000)
    ).session()
    message = session.messages[2]
    assert message.role is Role.TOOL and message.tool_result is not None
    assert isinstance(message.tool_result.output_held, Utf8Text)
    session.metadata["redacted_lengths_kept"] = True
    row = breakdown(session, calibrate=False).calls[-1]
    assert row.tool_outputs == 1_000 + get_counter().count("→ ")
