"""The session screen's tables: machine integers as narrow as their values allow."""

from __future__ import annotations

from array import array

from core.replay import replay
from tests.unit.test_replay_memory import _one_compaction


def test_the_screen_tables_hold_four_bytes_a_message() -> None:
    """The session screen's per-message tables (rows, flags) and its calls' messages are
    4-byte integers: indices, row markers and flag masks fit."""
    from tui.screen_state import SessionState

    session, policy = _one_compaction()
    state = SessionState(session=session, policy=policy)
    state.set_result(replay(session, policy))
    for table in (state.rows, state._flags, state._call_messages, state._identity):
        assert isinstance(table, array) and table.itemsize == 4
    assert len(state.rows) >= len(session.messages)
