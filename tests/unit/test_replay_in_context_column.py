"""A result's per-message "still in context at the end" column is held as a byte per message
(the TUI reads a new result's columns at each limit change) and reads as the states' field."""

from __future__ import annotations

from core.policy import get_preset
from core.replay import replay
from tests.support.sessions import claude_like_session, read_bash_turns


def test_the_in_context_column_is_a_byte_per_message_read_as_the_states_say() -> None:
    for session in (
        read_bash_turns(30, 2_500),  # (compacted by the policy: its summary and tail stay)
        claude_like_session(12, window=60_000, big_lines=3000, with_compaction=True),
    ):
        result = replay(session, get_preset("seed"))
        column = result.message_column("in_context_at_end")
        assert not isinstance(column, list)
        expected = [state.in_context_at_end for state in result.messages]
        assert list(column) == expected
        assert [column[i] for i in range(len(expected))] == expected
        assert True in expected and False in expected
