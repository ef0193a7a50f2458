"""What the screen works out between the whole file read and its replay's result shown: each
piece once, where it is cheapest, and the same as worked out from scratch."""

from __future__ import annotations

import pytest

from core.policy import get_preset
from core.replay import Replayer, ReplayResult
from tests.support.sessions import claude_like_session
from tui.screen_state import SessionState, read_messages
from tui.screens.session.prepared import prepare
from tui.widgets.gauge_series import build_series


def test_a_message_that_is_no_call_has_no_point_and_none_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The detail pane asks for the point of the selected message (the first, a prompt, when
    a result arrives): a message that is no call gets None without a point being built (the
    first point built reads the turn of every message); a call gets its own point."""
    session = claude_like_session(6, with_compaction=True)
    policy = get_preset("seed")
    state = SessionState(session, policy)
    state.set_result(Replayer(session).run(policy))
    result = state.result
    assert result is not None
    calls = set(result.point_column("message_index"))
    built: list[int] = []
    real = ReplayResult.point

    def point(self: ReplayResult, call_index: int) -> object:
        built.append(call_index)
        return real(self, call_index)

    monkeypatch.setattr(ReplayResult, "point", point)
    prompts = [m.index for m in session.messages if m.index not in calls]
    assert prompts and calls
    for index in prompts:
        assert state.point_of_message(index) is None
    assert built == []
    for index in sorted(calls):
        found = state.point_of_message(index)
        assert found is not None and found.message_index == index
        assert found == real(result, found.call_index)
    assert len(built) == len(calls)


def test_the_rows_are_sliced_from_the_identity_the_worker_made() -> None:
    """The worker that reads the messages' table makes the rows' identity beside it: the state
    takes it (the interface thread makes none), and the rows are those of a state that made
    its own."""
    session = claude_like_session(6, with_compaction=True)
    table = read_messages(session)
    assert table.identity is not None
    assert list(table.identity) == list(range(len(session.messages)))
    policy = get_preset("seed")
    state = SessionState(session, policy, table=table)
    assert state._identity is table.identity
    fresh = SessionState(session, policy)
    assert list(state.rows) == list(fresh.rows)
    result = Replayer(session).run(policy)
    state.set_result(result)
    fresh.set_result(result)
    assert list(state.rows) == list(fresh.rows)
    assert any(row < 0 for row in state.rows)  # (a rule among them: the slices are tested)


def test_the_first_result_takes_the_calls_of_the_series_read_from_the_same_placing() -> None:
    """The recorded series read from the replay's placing of the calls gives the first result
    of that placing its packed calls and recorded figures (as a limit change does); the series
    is the one a fresh flattening gives. A result of calls placed anew reads its own."""
    session = claude_like_session(6, with_compaction=True)
    prepared = prepare(session, replayed=True)
    recorded = prepared.recorded
    assert recorded is not None and recorded.recorded_from is not None
    policy = get_preset("seed")
    result = Replayer(session).run(policy)  # (it finds the calls placed by prepare)
    assert result.point_column("recorded_tokens") is recorded.recorded_from
    series = build_series(session, result, recorded)
    assert series.message_index is recorded.message_index
    assert series.recorded is recorded.recorded
    assert series == build_series(session, result)

    other = claude_like_session(6, with_compaction=True)  # placed by its own replayer
    result_other = Replayer(other).run(policy)
    fresh = build_series(other, result_other, recorded)
    assert fresh.recorded is not recorded.recorded
    assert fresh == build_series(other, result_other)
