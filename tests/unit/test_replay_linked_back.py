"""``Calls.linked_back``: each message's first earlier message sharing a tool call id with it."""

from __future__ import annotations

from core.model.session import Session, ToolCall, replace
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
