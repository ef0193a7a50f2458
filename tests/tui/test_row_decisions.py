"""The list's flags read per row from the result's columns match one pass over every message."""

from __future__ import annotations

from array import array

from core.policy import get_preset
from core.replay import replay
from tests.support.sessions import claude_like_session
from tui.screen_state import RowFlag, SessionState, _mark_decisions


def test_flags_read_per_row_are_those_of_a_pass_over_every_message() -> None:
    session = claude_like_session(12, window=60_000, big_lines=3000)
    policy = get_preset("seed")  # (it prunes, protects, truncates and compacts here)
    result = replay(session, policy)
    state = SessionState(session, policy)
    state.set_result(result)
    count = state.message_count
    eager = array("q", bytes(8 * count))
    _mark_decisions(eager, result, count)
    decided = RowFlag.PRUNED | RowFlag.TRUNCATED | RowFlag.PROTECTED | RowFlag.OVERFLOW
    decided |= RowFlag.COMPACTED_HERE
    shown = [state.flags(i) & decided for i in range(count)]
    assert shown == list(eager)
    assert any(value & RowFlag.PRUNED for value in shown)  # (the session prunes something)
    assert any(value & RowFlag.TRUNCATED for value in shown)
    assert any(value & RowFlag.PROTECTED for value in shown)
    assert any(value & RowFlag.COMPACTED_HERE for value in shown)
