"""The markers of hosted tools' calls in the breakdown's parts (core.insights.breakdown): the one
loop over the messages looks a reply's calls up by name and asks :func:`_hosted` only of a
message that calls a hosted tool; its parts are every message's own parts followed by
:func:`_hosted`'s markers wherever the message holds tool calls, whatever its role."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.insights.breakdown import _Answered, _hosted, message_parts, messages_parts
from core.model.session import Message, Role, ToolCall, ToolResult
from core.model.tokens import TokenCounter

_TEXTS = st.text(alphabet=st.sampled_from("ab c\né→"), max_size=20)
_NAMES = st.sampled_from(["web_search", "Bash", "Read"])


@st.composite
def _messages(draw: st.DrawFn) -> list[Message]:
    """Messages of any role, some with calls of a hosted tool (``web_search``) among others,
    some of those calls answered by a later tool message (the same id)."""
    messages: list[Message] = []
    ids: list[str] = []
    for i in range(draw(st.integers(0, 10))):
        role = draw(st.sampled_from(list(Role)))
        result = None
        if role is Role.TOOL and ids and draw(st.booleans()):
            result = ToolResult(call_id=draw(st.sampled_from(ids)), tool_name="web_search")
        calls = [
            ToolCall(id=f"t{i}.{k}", name=name, arguments=draw(_TEXTS))
            for k, name in enumerate(draw(st.lists(_NAMES, max_size=3)))
        ]
        ids += [call.id for call in calls]
        messages.append(
            Message(
                index=i,
                id=f"m{i}",
                role=role,
                text=draw(_TEXTS),
                reasoning=draw(st.sampled_from(["", "thinking é"])),
                tool_calls=calls,
                tool_result=result,
                summary=draw(st.booleans()),
                reasoning_estimate_tokens=draw(st.integers(-2, 5)),
            )
        )
    return messages


@pytest.mark.parametrize("estimator", ["chars/4", "bytes/4"])
@given(messages=_messages())
def test_each_messages_hosted_markers_follow_its_own_parts(
    estimator: str, messages: list[Message]
) -> None:
    """Issue 24: with the answered calls given, each message's parts are its own parts then,
    for any message with tool calls (a reply, or a message of another role that holds some),
    a marker per hosted call without a result; an empty reasoning is 0 tokens, at least the
    agent's estimate of it."""
    counter = TokenCounter(estimator)
    answered = _Answered(messages)
    expected = [
        message_parts(message, counter) + (_hosted(message, answered) if message.tool_calls else [])
        for message in messages
    ]
    assert messages_parts(messages, counter, answered) == expected
    for message, parts in zip(messages, expected, strict=True):
        if message.role is Role.ASSISTANT and not message.summary:
            least = message.reasoning_estimate_tokens
            assert parts[1] == ("reasoning", max(counter.count(message.reasoning), least))


def test_a_reply_calling_a_hosted_tool_among_others_has_its_markers_after_every_call() -> None:
    """The markers of a reply's unanswered hosted calls come after all of its calls' parts (the
    order the running sums add them in), one per call, none for an answered one."""
    calls = [
        ToolCall(id="a", name="web_search", arguments="q"),
        ToolCall(id="b", name="Bash", arguments="ls"),
        ToolCall(id="c", name="web_search", arguments="r"),
    ]
    reply = Message(index=0, id="m0", role=Role.ASSISTANT, text="x", tool_calls=calls)
    result = ToolResult(call_id="c", tool_name="web_search", output="found")
    answer = Message(index=1, id="m1", role=Role.TOOL, tool_result=result)
    parts = messages_parts([reply, answer], TokenCounter("chars/4"), _Answered([reply, answer]))
    assert [key for key, _tokens in parts[0]] == [
        "assistant_text",
        "reasoning",
        "tool_calls",
        "tool_calls",
        "tool_calls",
        "hidden:0:web_search",
    ]
