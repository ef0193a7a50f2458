"""A characters- or bytes-per-token rule counts many messages (``messages_tokens``) by applying
the rule once per distinct length: the counts are each message's own, and messages of one
length share one count (one int object, not one per message: a 100 MB session's 10^5 counts,
kept for its replay, have ~10^3 values)."""

from __future__ import annotations

import pytest

from core.model.session import Message, Role, ToolCall, ToolResult
from core.model.tokens import ESTIMATORS, TokenCounter


def _messages() -> list[Message]:
    messages: list[Message] = []
    for k in range(30):
        text = "word " * (800 + k % 3)  # (three lengths, counts past the small ints)
        messages.append(Message(index=len(messages), id=f"u{k}", role=Role.USER, text=text))
        call = ToolCall(id=f"c{k}", name="bash", arguments={"command": "ls " * (400 + k % 2)})
        messages.append(
            Message(index=len(messages), id=f"a{k}", role=Role.ASSISTANT, tool_calls=[call])
        )
        output = "→ line\n" * (500 + k % 2)
        result = ToolResult(call_id=f"c{k}", tool_name="bash", output=output)
        messages.append(
            Message(index=len(messages), id=f"t{k}", role=Role.TOOL, tool_result=result)
        )
    return messages


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_counts_are_each_messages_and_shared_by_equal_ones(estimator: str) -> None:
    counter = TokenCounter(estimator)
    messages = _messages()
    counts = counter.messages_tokens(messages)
    assert counts == [counter.message_tokens(message) for message in messages]
    assert min(counts) > 256
    assert len({id(count) for count in counts}) == len(set(counts)) < 12
