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


def test_each_message_row_is_the_row_showing_it_between_the_rules() -> None:
    session = claude_like_session(12, window=60_000, big_lines=3000, with_compaction=True)
    state = SessionState(session, get_preset("seed"))
    state.set_result(replay(session, state.policy))
    assert state.markers  # (rules: the split of the selected compaction, the recorded ones)
    rows = list(state.rows)
    assert sorted(i for i in rows if i >= 0) == list(range(state.message_count))
    assert [i for i in rows if i < 0] == [-1 - k for k in range(len(state.markers))]
    for message in range(state.message_count):
        assert rows[state.row_of_message(message)] == message
    for k, marker in enumerate(state.markers):  # each rule right above its message
        row = rows.index(-1 - k)
        assert row + 1 == len(rows) or rows[row + 1] < 0 or rows[row + 1] == marker.message_index
