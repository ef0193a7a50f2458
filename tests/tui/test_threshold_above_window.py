"""A threshold at or above the window (the inferred policy of a session that never compacted by
itself, ``make run``'s sample) is flagged on the gauge and in the detail pane's check, never shown
as an ordinary threshold with a reserve of 0."""

from __future__ import annotations

import pytest

from core.formats import load_session
from core.policy import Policy
from tests.support.paths import REPO
from tests.support.tui_harness import open_session, quiet_app, settle, until
from tui.widgets.gauge import TokenGauge

OVERFLOW = REPO / "sample_sessions" / "claude-code" / "overflow.jsonl"


@pytest.mark.skipif(not OVERFLOW.exists(), reason="samples not generated")
async def test_a_threshold_above_the_window_is_flagged() -> None:
    session = load_session(str(OVERFLOW))
    app = quiet_app()
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_session(pilot, session, Policy(name="inferred"))
        state = screen.state
        assert state is not None
        await until(
            pilot,
            lambda: state.result is not None and state.result.policy.name == "inferred",
            "the inferred policy replayed",
        )
        await settle(pilot)
        result = state.result
        assert result is not None and result.window is not None and result.threshold is not None
        assert result.threshold >= result.window  # (the sample: 210,084 over 200,000)
        gauge = screen.query_one(TokenGauge)
        rows = [gauge.render_line(y).text for y in range(3)]
        header = next(row for row in rows if "window 200,000" in row)
        assert f"threshold {result.threshold:,} (inferred) ≥ window: never reached" in header
        legend = next(
            row for row in rows if "recorded" in row and "simulated" in row and "┈" in row
        )
        assert "≥ window: never reached" in legend and "reserve 0" not in legend, legend

        call = state.call_count - 1
        at = state.message_for_call(call)
        assert at is not None
        screen.select_message(at)
        await until(pilot, lambda: screen.detail.message_index == at, "the detail pane")
        detail = " ".join(screen.detail.as_text(width=200).split())
        assert "(inferred; at or above the 200,000 window: never fires before an overflow)" in (
            detail
        ), detail


def test_the_check_line_names_the_policys_threshold_as_the_gauge_does() -> None:
    from core.replay import replay
    from tests.support.sessions import claude_like_session
    from tui.figures import check_line

    session = claude_like_session(4)
    result = replay(session, Policy(name="claude-code"))
    checked = next(p for p in result.points if p.checked and p.check_tokens is not None)
    point = checked.model_copy(
        update={"threshold": 168_000, "threshold_source": "rule", "window": 200_000}
    )
    assert "against 168,000 (rule)" in check_line(point, Policy(name="claude-code"))
    assert "against 168,000 (inferred)" in check_line(point, Policy(name="inferred"))
