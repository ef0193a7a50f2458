"""The session's insights in the screens: the breakdown band (``b``) and its selection, the session's cost in the
status line, and what each compaction forgot on the compaction screen and in the detail pane."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from core.formats import load_session
from core.insights.breakdown import ContextBreakdown, breakdown
from core.insights.cost import compaction_cost_label, cost_label, session_cost
from core.insights.forgotten_facts import ENCRYPTED
from core.model.session import Role, Session
from core.policy import get_preset
from tools.scenes import CODEX, COMPACTED, LoadedSessionApp, press, session_app, settle
from tui.screens.compaction import CompactionScreen
from tui.screens.session import SessionScreen
from tui.widgets.breakdown_call import BreakdownCall
from tui.widgets.breakdown_chart import BreakdownChart
from tui.widgets.forgotten_view import ForgottenView

needs_samples = pytest.mark.skipif(not COMPACTED.exists(), reason="samples not generated")

SIZE = (120, 36)


async def _opened(pilot: Pilot[None]) -> SessionScreen:
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    assert screen.state is not None and screen.state.insights is not None
    return screen


def _status_info(screen: SessionScreen) -> str:
    return str(screen.query_one("#status-info").render())


def _forgotten_text(screen: CompactionScreen) -> str:
    return str(screen.query_one("#forgotten-body").render())


# -- the breakdown band --------------------------------------------------------------------------


@needs_samples
async def test_b_toggles_the_breakdown_band() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        assert not screen.breakdown_shown
        await press(pilot, "b")
        assert screen.breakdown_shown
        chart = screen.query_one(BreakdownChart)
        assert screen.state is not None and screen.state.insights is not None
        assert chart.breakdown is screen.state.insights.breakdown
        assert chart.selected_call == screen.gauge.selected_call
        await press(pilot, "b")
        assert not screen.breakdown_shown


@needs_samples
async def test_the_selected_call_follows_the_list_as_the_gauge_does() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        state = screen.state
        assert state is not None and state.insights is not None
        await press(pilot, "b", "G")
        chart = screen.query_one(BreakdownChart)
        shown = screen.query_one(BreakdownCall)
        for index in (state.message_count - 1, state.message_count // 2, 40):
            screen.select_message(index)
            await settle(pilot)
            call = state.call_for_message(index)
            assert call is not None
            assert chart.selected_call == call == screen.gauge.selected_call
            assert state.insights.breakdown is not None  # (the band is open)
            assert shown.call is state.insights.breakdown.calls[call]
            assert shown.cost is state.insights.call_cost(call)
            assert shown.cost is not None and shown.cost.call_index == call
        await press(pilot, "right")  # ← / → from the list: the next call, everywhere
        assert chart.selected_call == screen.gauge.selected_call
        # a call picked in the chart selects its message (and the gauge follows)
        chart.focus()
        await press(pilot, "home")
        assert chart.selected_call == 0 == screen.gauge.selected_call
        assert screen.message_list.selected_message == state.message_for_call(0)


@needs_samples
async def test_the_breakdown_is_worked_out_off_the_ui_thread_once_per_session_when_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[threading.Thread] = []
    real: Callable[..., ContextBreakdown] = breakdown

    def counted(session: Session, **options: str) -> ContextBreakdown:
        threads.append(threading.current_thread())
        return real(session, **options)

    monkeypatch.setattr("tui.insights.breakdown", counted)
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        state = screen.state
        assert state is not None and state.insights is not None
        assert not threads and state.insights.breakdown is None  # the band is not open
        assert not state.insights.cost.per_call and state.insights.cost.calls
        await press(pilot, "b")
        await settle(pilot)
        assert threads and threading.main_thread() not in threads
        assert state.insights is not None and state.insights.breakdown is not None
        assert len(state.insights.cost.per_call) == len(state.insights.breakdown.calls)
        seen = len(threads)
        screen.set_policy(get_preset("seed"))  # a new result: new reports, the same breakdown
        await settle(pilot)
        assert state.insights is not None and state.insights.breakdown is not None
        assert state.insights.result is state.result
        assert len(threads) == seen


# -- the cost ------------------------------------------------------------------------------------


@needs_samples
async def test_the_status_line_shows_the_core_cost_figure() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        assert screen.state is not None
        expected = cost_label(session_cost(screen.state.session))
        assert expected.startswith("$")
        assert f"cost {expected}" in _status_info(screen)


@needs_samples
async def test_an_unpriced_model_makes_the_cost_a_lower_bound() -> None:
    session = load_session(COMPACTED)
    reply = next(m for m in session.messages if m.role is Role.ASSISTANT and m.usage is not None)
    reply.model = "no-such-model-anywhere"
    app = LoadedSessionApp(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        expected = cost_label(session_cost(session))
        assert expected.startswith("≥$")
        assert f"cost {expected}" in _status_info(screen)


# -- what compaction forgot ----------------------------------------------------------------------


@needs_samples
async def test_a_readable_summary_shows_what_it_forgot() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        state = screen.state
        assert state is not None and state.insights is not None and state.result is not None
        reports = state.insights.reports
        assert reports
        report = reports[0]
        forgotten = report.forgotten
        assert forgotten is not None and forgotten.readable and forgotten.dropped
        # the detail pane at the compaction
        await press(pilot, "right_square_bracket")
        detail = screen.detail.section_text("forgotten", width=200)
        assert "What the summary kept" in detail
        assert f"{forgotten.kept} of {forgotten.facts} facts" in detail
        # the compaction screen, on that compaction
        await press(pilot, "c")
        compaction = app.screen
        assert isinstance(compaction, CompactionScreen)
        view = compaction.query_one(ForgottenView)
        assert view.report is None  # running one now: a note, not a report
        compaction.show_event(0)
        await settle(pilot)
        assert view.report is report
        text = _forgotten_text(compaction)
        assert f"{forgotten.kept} of {forgotten.facts} facts" in text
        first = forgotten.dropped[0]
        assert f"#{first.message_index:<5}{first.kind}" in text
        assert report.cost is not None
        assert f"cost: {compaction_cost_label(report.cost)}" in text


@needs_samples
async def test_the_compaction_screen_works_the_reports_out_itself_when_it_has_none() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        state = screen.state
        assert state is not None and state.result is not None
        compaction = CompactionScreen(state.session, state.policy, 0, state.result)
        app.push_screen(compaction)
        await settle(pilot)
        compaction.show_event(0)
        await settle(pilot)
        assert "What the summary kept" in _forgotten_text(compaction)


@pytest.mark.skipif(not CODEX.exists(), reason="samples not generated")
async def test_a_codex_remote_compaction_says_its_summary_is_encrypted() -> None:
    session = load_session(CODEX)
    assert session.compactions
    session.compactions[0].summary = "[compaction summary encrypted by the provider]"
    app = LoadedSessionApp(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        await press(pilot, "right_square_bracket")
        detail = screen.detail.section_text("forgotten", width=300)
        assert "encrypted" in detail
        await press(pilot, "c")
        compaction = app.screen
        assert isinstance(compaction, CompactionScreen)
        compaction.show_event(0)
        await settle(pilot)
        text = " ".join(_forgotten_text(compaction).split())
        assert f"cannot tell: {ENCRYPTED}" in text


@needs_samples
async def test_a_compaction_run_now_shows_what_its_own_summary_kept() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await _opened(pilot)
        await press(pilot, "G", "c")
        compaction = app.screen
        assert isinstance(compaction, CompactionScreen)
        await settle(pilot)
        forgotten = compaction.run_now_forgotten
        assert compaction.status == "done" and forgotten is not None
        assert forgotten.readable and forgotten.summary_source == "replayed" and forgotten.facts
        text = _forgotten_text(compaction)
        assert "the compaction run now" in text
        assert f"{forgotten.kept} of {forgotten.facts} facts" in text
        compaction.show_event(0)  # a replay compaction: its report takes the box
        await settle(pilot)
        assert compaction.query_one(ForgottenView).report is not None


@needs_samples
async def test_insights_that_fail_are_said_and_the_screen_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tui.screens.session.insights as layer

    def broken(*_args: object, **_options: object) -> None:
        raise ValueError("a price table that cannot be read")

    monkeypatch.setattr(layer, "compute_insights", broken)
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, SessionScreen) and screen.state is not None
        assert screen.state.insights is None
        said = [n.message for n in app._notifications]
        assert any("could not be worked out: a price table that cannot be read" in m for m in said)
        await press(pilot, "down")
        assert app.is_running
