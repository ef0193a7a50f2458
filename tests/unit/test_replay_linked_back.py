"""``Calls.linked_back``: each message's first earlier message sharing a tool call id with it."""

from __future__ import annotations

from array import array
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.model.session import Session, ToolCall, ToolResult, replace
from core.replay.calls import Calls
from tests.support.builders import SessionBuilder


def _reference(session: Session) -> list[int]:
    """The links as the docstring says them, the slow way: the least index among the first
    messages holding each of a message's ids (its own index when it has none earlier)."""
    first: dict[str, int] = {}
    links = []
    for i, message in enumerate(session.messages):
        ids = [call.id for call in message.tool_calls]
        if message.tool_result is not None:
            ids.append(message.tool_result.call_id)
        for call_id in ids:
            first.setdefault(call_id, i)
        links.append(min([first[call_id] for call_id in ids], default=i))
    return links


def _tangled() -> Session:
    """Calls answered in order, a call id held again later, and a message holding a call and a
    result (of an older call) at once."""
    session = (
        SessionBuilder()
        .user("start")
        .calls([("bash", {"command": "a"}), ("read", {"path": "b"})])
        .result("a")
        .result("b")
        .call("bash")
        .result("c")
        .call("grep")
        .result("d")
        .reply("end")
        .session()
    )
    messages = list(session.messages)
    # message 5 (a call) holds again the id of message 1's first call, and answers call3
    again = ToolCall(id="call1", name="bash", arguments={"command": "again"})
    messages[5] = replace(messages[5], tool_calls=[again, *messages[5].tool_calls])
    messages[7] = replace(messages[7], tool_result=messages[6].tool_result)
    session.messages = messages
    return session


def test_links_match_their_definition() -> None:
    session = _tangled()
    links = list(Calls(session).linked_back())
    assert links == _reference(session)
    assert links[2] == 1 and links[5] == 1  # answered, and an id held again
    assert links[0] == 0 and links[len(links) - 1] == len(links) - 1  # nothing to link


_IDS = st.sampled_from(["a", "b", "c", "d", "e"])
_MESSAGE = st.tuples(st.lists(_IDS, max_size=3), st.one_of(st.none(), _IDS))
"""A message's tool call ids and the id of the call it answers (None: it answers none)."""


@settings(max_examples=200, deadline=None)
@given(st.lists(_MESSAGE, max_size=14))
def test_links_made_a_column_at_a_time_are_the_definition(specs: list[Any]) -> None:
    """Any pattern of ids held and answered, again and out of order, several to a message:
    the links made in C equal the message-by-message definition."""
    builder = SessionBuilder()
    for _spec in specs:
        builder.user("x")
    session = builder.session()
    session.messages = [
        replace(
            message,
            tool_calls=[ToolCall(id=i, name="bash", arguments={}) for i in ids],
            tool_result=None if answered is None else ToolResult(call_id=answered),
        )
        for message, (ids, answered) in zip(session.messages, specs, strict=True)
    ]
    links = Calls(session).linked_back()
    assert isinstance(links, array) and links.itemsize == 4
    assert list(links) == _reference(session)
