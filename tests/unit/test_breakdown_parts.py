"""A tool's output and a user message in the breakdown's parts (core.insights.breakdown): the
one loop counts an output held as its text with the loop's own ``count`` and a user message's
text and result without a call of :func:`_count_all`; each figure is the counter's own."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.insights.breakdown import _KeptLengths, messages_parts
from core.model.session import Message, Role, ToolResult, held_output
from core.model.tokens import TokenCounter

_TEXTS = st.text(alphabet=st.sampled_from("ab c\né→😀"), max_size=40)


@st.composite
def _messages(draw: st.DrawFn) -> list[Message]:
    """Tool and user messages, each with or without a result whose output is held as its
    text or as its UTF-8 bytes (:func:`held_output`, as the loaders keep them)."""
    messages = []
    for i in range(draw(st.integers(0, 8))):
        result = None
        if draw(st.booleans()):
            text = draw(_TEXTS)
            output = held_output(text) if draw(st.booleans()) else text
            result = ToolResult(call_id=f"c{i}", tool_name="Bash", output=output)
        messages.append(
            Message(
                index=i,
                id=f"m{i}",
                role=draw(st.sampled_from([Role.TOOL, Role.USER])),
                text=draw(_TEXTS),
                tool_result=result,
                meta=draw(st.booleans()),
                agent_estimate_tokens=draw(st.one_of(st.none(), st.integers(0, 5))),
            )
        )
    return messages


@pytest.mark.parametrize("estimator", ["chars/4", "bytes/4", "ceil(chars/4)", "kept"])
@given(messages=_messages())
def test_an_outputs_and_a_user_messages_tokens_are_the_counters(
    estimator: str, messages: list[Message]
) -> None:
    """Issue 24: an output held as a ``str`` is counted by the loop's ``count``, one held as
    UTF-8 by the counter's ``output_tokens``, a user message's text and result added up in
    the loop: each message's tokens are the counter's own figures, for every rule and for the
    counter of lengths kept through redaction."""
    counter = _KeptLengths("chars/4") if estimator == "kept" else TokenCounter(estimator)
    expected = []
    for message in messages:
        result = message.tool_result
        if message.role is Role.TOOL:
            tokens = counter.output_tokens(result) if result else counter.count(message.text)
            if message.agent_estimate_tokens is not None:
                tokens = min(tokens, message.agent_estimate_tokens)
            expected.append([(f"tool:{result.tool_name if result else '(unknown tool)'}", tokens)])
        else:
            tokens = counter.count(message.text) + (counter.output_tokens(result) if result else 0)
            expected.append([("attachments" if message.meta else "user", tokens)])
    assert messages_parts(messages, counter) == expected
