"""Before its replay, a session's calls are read from its messages in one pass (the list's
flags and the calls together; the gauge's recorded series in one comprehension): they must be
the calls and recorded figures the replay finds, so nothing moves when its result arrives."""

from __future__ import annotations

from core.model.session import Role, replace
from core.policy import get_preset
from core.replay import replay
from tests.support.sessions import claude_like_session
from tui.screen_state import RowFlag, SessionState
from tui.widgets.gauge_series import OVERFLOW_RECORDED, build_series


def test_the_calls_read_before_the_replay_are_the_replays() -> None:
    session = claude_like_session(8, with_compaction=True)
    summaries = [m.index for m in session.messages if m.summary]
    assert summaries  # (a summary is an assistant-like message that is not a call)
    policy = get_preset("seed")
    state = SessionState(session, policy)
    before = [state.message_for_call(c) for c in range(state.call_count)]
    result = replay(session, policy)
    assert before == list(result.point_column("message_index"))
    assert before == [m.index for m in session.messages if m.is_model_call]
    assert not set(before) & set(summaries)
    for index in summaries:
        assert state.flags(index) & RowFlag.SUMMARY
    state.set_result(result)
    assert [state.message_for_call(c) for c in range(state.call_count)] == before


def test_the_recorded_series_before_the_replay_is_the_replays() -> None:
    session = claude_like_session(8, with_compaction=True)
    session.context_window = 20_000  # (some calls over it: their overflow flag)
    recorded = build_series(session, None)
    replayed = build_series(session, replay(session, get_preset("seed")))
    assert list(recorded.message_index) == list(replayed.message_index)
    assert list(recorded.recorded) == list(replayed.recorded)
    calls = [m for m in session.messages if m.role is Role.ASSISTANT and not m.summary]
    over = [
        i
        for i, m in enumerate(calls)
        if m.usage is not None and m.usage.context_tokens > session.context_window
    ]
    assert over
    assert [i for i, f in enumerate(recorded.flags) if f & OVERFLOW_RECORDED] == over


def test_an_assistant_summary_is_not_a_call() -> None:
    session = claude_like_session(4)
    first = next(m for m in session.messages if m.is_model_call)
    session.messages[first.index] = replace(first, summary=True)
    state = SessionState(session, get_preset("seed"))
    calls = [state.message_for_call(c) for c in range(state.call_count)]
    assert calls == [m.index for m in session.messages if m.is_model_call]
    assert first.index not in calls
    assert list(build_series(session, None).message_index) == calls
