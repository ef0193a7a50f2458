"""After a limit change, the gauge's series keeps the calls and recorded figures it had (they
are the recording's: the same for every policy) instead of packing them again, and a window or
threshold the same at every call is packed as one value repeated: the series is the one a
fresh flattening gives."""

from __future__ import annotations

import pytest

from core.model.session import Session
from core.policy import get_preset
from core.replay import replay
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import open_session, quiet_app, settle
from tui.widgets.gauge_series import build_series


def test_a_result_of_the_same_session_takes_the_calls_and_recorded_figures() -> None:
    session = claude_like_session(6, with_compaction=True)
    first = build_series(session, replay(session, get_preset("seed")))
    policy = get_preset("seed")
    policy.pruning.protect_turns = 4
    policy.compaction.reserve_tokens = 40_000
    result = replay(session, policy)
    again = build_series(session, result, first)
    assert again.message_index is first.message_index
    assert again.recorded is first.recorded
    assert again == build_series(session, result)  # (what a fresh flattening gives)
    other = claude_like_session(6)
    fresh = build_series(other, replay(other, policy), first)  # another session: its own
    assert fresh.recorded is not first.recorded
    assert fresh == build_series(other, replay(other, policy))


def test_a_window_and_threshold_at_every_call_are_read_once() -> None:
    session = claude_like_session(6, with_compaction=True)
    result = replay(session, get_preset("seed"))
    series = build_series(session, result)
    assert list(series.windows) == [w or 0 for w in result.point_column("window")]
    assert list(series.thresholds) == [
        -1 if t is None else t for t in result.point_column("threshold")
    ]
    assert len(set(series.windows)) == 1 and series.windows[0] == 200_000


async def test_a_limit_change_keeps_the_gauges_recorded_series() -> None:
    async with quiet_app().run_test(size=(120, 34)) as pilot:
        screen = await open_session(pilot, claude_like_session(6), get_preset("seed"))
        before = screen.gauge.series
        policy = get_preset("seed")
        policy.compaction.reserve_tokens = 40_000
        screen.set_policy(policy)
        await settle(pilot)
        assert screen.state is not None and screen.state.result is not None
        assert screen.state.result.policy == policy
        after = screen.gauge.series
        assert after is not before
        assert after.recorded is before.recorded
        assert after.message_index is before.message_index
        assert after == build_series(screen.state.session, screen.state.result)


async def test_a_limit_change_that_moves_no_bar_keeps_the_charts_rows() -> None:
    """A result whose bars, lines and labels come out the same keeps the chart's strips; one
    that moves them draws the rows a gauge drawing it from scratch draws."""
    async with quiet_app().run_test(size=(120, 34)) as pilot:
        screen = await open_session(pilot, claude_like_session(6), get_preset("seed"))
        gauge = screen.gauge
        await settle(pilot)
        drawn = list(gauge._drawn_rows)
        assert drawn
        same = get_preset("seed")
        same.truncation.max_lines = 1_999  # (no output of this session is that long)
        screen.set_policy(same)
        await settle(pilot)
        assert screen.state is not None and screen.state.result is not None
        assert screen.state.result.policy == same
        assert all(a is b for a, b in zip(gauge._drawn_rows, drawn, strict=True))
        moved = get_preset("seed")
        moved.context_window = 120_000  # (the scale, the threshold and the window move)
        screen.set_policy(moved)
        await settle(pilot)
        assert screen.state.result.policy == moved
        assert gauge._drawn_rows != drawn
        rows = gauge._drawn_rows
        gauge._drawn_key = None  # (drawn from scratch)
        gauge._base_key = None
        gauge.refresh()
        await settle(pilot)
        assert gauge._drawn_rows == rows and gauge._drawn_rows is not rows


def test_buckets_worked_out_from_the_series_drawn_before_are_the_fresh_ones() -> None:
    """After a limit change the gauge keeps the buckets whose calls hold the same figures and
    flags as in the series it drew before; the layout is the one bucketing from scratch gives
    (narrow charts: several calls per bucket)."""
    from tui.widgets.gauge_series import bucket_series

    session = claude_like_session(40, with_compaction=True)
    first = build_series(session, replay(session, get_preset("seed")))
    protected, reserved, narrower, same = (get_preset("seed") for _ in range(4))
    protected.pruning.protect_turns = 4
    reserved.compaction.reserve_tokens = 150_000
    narrower.context_window = 60_000
    policies = [protected, reserved, narrower, same]
    kept = 0
    for width in (8, 13, 30):
        before = (first, bucket_series(first, width))
        for policy in policies:
            series = build_series(session, replay(session, policy), before[0])
            layout = bucket_series(series, width, before)
            assert layout == bucket_series(series, width), (width, policy)
            assert layout.grid.buckets < series.calls
            kept += sum(
                before[0].simulated[layout.grid.first_call(b) : layout.grid.first_call(b + 1)]
                == series.simulated[layout.grid.first_call(b) : layout.grid.first_call(b + 1)]
                for b in range(layout.grid.buckets)
            )
            before = (series, layout)
    assert kept  # (some bucket was kept: the comparison is not of two fresh layouts)


def test_the_recorded_series_from_the_states_calls_is_the_walked_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before a replay the screen's state has read which messages are model calls: the gauge
    takes them rather than walking the session again, and draws the same series."""
    from tui.screen_state import SessionState

    session = claude_like_session(6, with_compaction=True)
    walked = build_series(session, None)
    state = SessionState(session, get_preset("seed"))
    calls = state.recorded_calls
    assert calls is not None and list(calls) == [m.index for m in session.model_calls()]

    def no_walk() -> None:
        raise AssertionError("walked the session again")

    monkeypatch.setattr(Session, "model_calls", no_walk)
    assert build_series(session, None, None, calls) == walked


def test_indices_that_are_not_positions_are_walked() -> None:
    session = claude_like_session(3)
    calls = [m.index for m in session.model_calls()]
    shifted = session.model_copy(update={"messages": session.messages[1:]})  # (not positions)
    assert build_series(shifted, None, None, calls) == build_series(shifted, None)
