"""Where the window and the thresholds come from, and one label per figure.

- the header names the window's source and keeps the evidence for it; a window that changes
  during the session says so;
- the status line leads with the recorded peak (as the overflow view does);
- a recorded compaction's trigger is the same in the list as on every other screen;
- calls are numbered from 0 in the gauge, the detail pane and the palette, as in the JSON;
- the detail pane of a call shows the check log line;
- the policy panel says where the threshold comes from, offers ``inferred``, and editing a
  threshold of a policy that takes its thresholds from the recording turns that off, visibly.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input, Static

from core.formats import load_session
from core.model.session import WindowChange
from tests.support.tui_harness import until
from tools.scenes import COMPACTED, OVERFLOW, PI, LoadedSessionApp, press, session_app, settle
from tui.figures import check_line
from tui.screens.session import SessionScreen
from tui.widgets.policy_panel import PolicyPanel

needs_samples = pytest.mark.skipif(not COMPACTED.exists(), reason="samples not generated")
SIZE = (120, 36)


def _screen(app: object) -> SessionScreen:
    screen = getattr(app, "screen", None)
    assert isinstance(screen, SessionScreen) and screen.state is not None
    return screen


def _label(screen: SessionScreen, selector: str) -> str:
    return str(screen.query_one(selector).render())


@needs_samples
async def test_the_header_says_where_the_window_comes_from_and_why() -> None:
    app = session_app(PI)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _screen(app)
        state = screen.state
        assert state is not None and state.result is not None
        window = screen.query_one("#hdr-window")
        assert str(window.render()) == f"window {state.result.window:,} (table)"
        assert window.tooltip == state.result.window_evidence and window.tooltip


@needs_samples
async def test_a_window_that_changes_during_the_session_is_said_to() -> None:
    session = load_session(PI)
    middle = session.messages[len(session.messages) // 2].index
    session.window_changes.append(WindowChange(message_index=middle, context_window=400_000))
    app = LoadedSessionApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _screen(app)
        result = screen.state.result if screen.state else None
        assert result is not None
        first = next(p for p in result.points if p.window == 400_000)
        text = _label(screen, "#hdr-window")
        assert text.startswith("window 200,000 → 400,000 at call ")
        assert f"at call {first.call_index} " in text


@needs_samples
async def test_the_recorded_peak_leads_the_status_line() -> None:
    # Regression: "peak 185,743 · 93% (rec. 150,210 · 75%)" while the overflow view said
    # the peak was 150,210
    app = session_app(OVERFLOW, "seed")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _screen(app)
        result = screen.state.result if screen.state else None
        assert result is not None
        summary = result.summary
        assert summary.peak_recorded is not None
        assert summary.peak_recorded != summary.peak_simulated
        peak = _label(screen, "#status-peak")
        assert peak.startswith(f"peak {summary.peak_recorded:,} / 200,000")
        assert "recorded" in peak and f"simulated {summary.peak_simulated:,}" in peak


@needs_samples
async def test_a_recorded_compaction_has_one_trigger_everywhere() -> None:
    # Regression: the trigger was "unknown" in the list and "auto"/"manual" elsewhere
    app = session_app(PI)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _screen(app)
        state = screen.state
        assert state is not None and state.result is not None
        assert str(state.session.compactions[0].trigger) == "unknown"  # pi writes none
        judged = state.result.fidelity[0].trigger
        assert judged != "unknown"
        marker = next(m for m in state.markers if m.kind == "boundary")
        assert marker.text.startswith(f"recorded compaction #0 · {judged}")


@needs_samples
async def test_calls_are_numbered_from_0_everywhere() -> None:
    # Regression: "call 51/157" in the header, "call 50" in the detail pane
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _screen(app)
        state = screen.state
        assert state is not None and state.result is not None
        point = state.result.points[50]
        await press(pilot, "ctrl+p", *"call 50", "enter")
        assert screen.message_list.selected_message == point.message_index
        assert screen.gauge.selected_call == 50
        assert screen.gauge.render_line(0).text.startswith(" call 50 · msg #")
        head = screen.detail.section_text("head")
        assert f"#{point.message_index} " in head and "· call 50 ·" in head
        screen.select_message(point.message_index + 1)
        await settle(pilot)
        assert "· after call 50 ·" in screen.detail.section_text("head")


@needs_samples
async def test_the_detail_pane_of_a_call_shows_its_check() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _screen(app)
        state = screen.state
        assert state is not None and state.result is not None
        fired = next(p for p in state.result.points if p.check_fired)
        quiet = next(p for p in state.result.points if p.checked and not p.check_fired)
        for point, verdict in ((fired, "fired"), (quiet, "did not fire")):
            screen.select_message(point.message_index)
            await settle(pilot)
            text = " ".join(screen.detail.section_text("decision", width=200).split())
            assert check_line(point, state.policy) in text
            assert f"checked before this call: {point.check_tokens:,}" in text
            assert text.count(verdict) >= 1


@needs_samples
async def test_the_policy_panel_says_where_the_threshold_comes_from() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _screen(app)
        await press(pilot, "p")
        panel = screen.query_one(PolicyPanel)
        inferred = screen.inferred
        assert inferred is not None
        evidence = str(panel.query_one("#pp-evidence", Static).render())
        evidence = " ".join(evidence.split())
        assert "window 200,000 (table)" in evidence
        assert "Threshold 167,000 (the claude-code rule) at every call" in evidence
        assert inferred.threshold.note in evidence  # "compacted at …; did not at … → …"
        # the inferred policy is a preset like the others
        panel.switch_preset("inferred")
        await settle(pilot)
        state = screen.state
        assert state is not None and state.policy.name == "inferred"
        assert state.result is not None and state.result.policy.name == "inferred"


@needs_samples
async def test_an_edited_threshold_is_replayed_as_edited() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _screen(app)
        await press(pilot, "p")
        panel = screen.query_one(PolicyPanel)
        await panel.open_sections("compaction")
        await settle(pilot)
        field = panel.field_widget("compaction.reserve_tokens")
        assert isinstance(field, Input)
        field.focus()
        await press(pilot, "ctrl+u", *"40000", "enter")
        await until(
            pilot, lambda: panel.policy.compaction.reserve_tokens == 40_000, "the edit applied"
        )
        await settle(pilot)
        assert panel.policy.compaction.reserve_tokens == 40_000
        state = screen.state
        assert state is not None and state.result is not None
        # the edit holds at every call: no stretch takes the recording's threshold instead
        assert all(p.threshold_source != "inferred" for p in state.result.points)
        assert state.result.threshold is not None and state.result.threshold < 167_000
