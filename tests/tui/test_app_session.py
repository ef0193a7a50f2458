"""The session screen driven with Pilot: selection, detail, policy changes, overflow, compaction
steps, search, window prompt, resize, theme, help and the command palette (state asserted)."""

from __future__ import annotations

import pytest

from core.model.session import Role
from core.policy import get_preset
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import (
    HeldReplay,
    open_session,
    quiet_app,
    screen_text,
    settle,
    wait_for,
)
from tui.app import CtxscopeApp
from tui.screen_state import RowFlag
from tui.screens.help import HelpScreen
from tui.screens.session import SessionScreen


def _app() -> CtxscopeApp:
    return quiet_app()


_open = open_session


def _detail_text(screen: SessionScreen) -> str:
    return screen.detail.as_text()


async def test_moving_updates_the_detail_pane() -> None:
    session = claude_like_session(3, big_lines=200)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        assert screen.state is not None and screen.state.result is not None
        await pilot.press("down", "down")
        await settle(pilot)
        assert screen.message_list.selected_message == 2
        assert screen.detail.message_index == 2
        text = _detail_text(screen)
        assert "#2 tool · bash" in text
        assert "0:0:0 def function_0" in text  # the full output
        assert "counted" in text and "estimated" in text and "replay" in text
        await pilot.press("up")
        await settle(pilot)
        text = _detail_text(screen)
        assert screen.detail.message_index == 1
        assert "#1 assistant" in text
        assert "recorded call" in text  # the call's recorded usage
        assert "→ bash" in text


async def test_a_smaller_truncation_limit_marks_rows_truncated() -> None:
    session = claude_like_session(3, output_lines=40, big_lines=60)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        state = screen.state
        assert state is not None and state.result is not None
        tool_rows = [m.index for m in session.messages if m.role is Role.TOOL]
        assert not any(state.flags(i) & RowFlag.TRUNCATED for i in tool_rows)
        assert "✂" not in screen_text(app)

        policy = get_preset("seed")
        policy.truncation.max_lines = 10
        screen.set_policy(policy)
        await settle(pilot)
        assert state.policy.truncation.max_lines == 10
        assert state.result.policy.truncation.max_lines == 10
        assert all(state.flags(i) & RowFlag.TRUNCATED for i in tool_rows)
        message_state = state.message_state(tool_rows[0])
        assert message_state is not None and message_state.truncated
        assert message_state.tokens_after_truncation < message_state.tokens
        assert "✂" in screen_text(app)

        # the detail pane shows what the model would see, with the would-be spill path
        screen.select_message(tool_rows[0])
        await settle(pilot)
        text = _detail_text(screen)
        assert "What the model sees" in text
        assert "would spill to" in text
        assert "✂ truncated" in text


async def test_overflow_key_selects_the_first_overflow() -> None:
    session = claude_like_session(8, window=120_000, big_lines=200)
    policy = get_preset("pi")  # pi's reserve is reached too late here: the replay overflows
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session, policy)
        state = screen.state
        assert state is not None and state.result is not None
        overflow = state.first_overflow()
        assert overflow is not None
        _call, message_index, simulated = overflow
        assert simulated
        assert state.flags(message_index) & RowFlag.OVERFLOW
        await pilot.press("o")
        await settle(pilot)
        overflow_screen = app.screen
        if isinstance(overflow_screen, SessionScreen):  # no overflow view: the key jumps itself
            assert screen.message_list.selected_message == message_index
            return
        diagnosis = overflow_screen.diagnosis  # type: ignore[attr-defined]
        assert diagnosis is not None and diagnosis.overflowed
        await pilot.press("g")  # go to the call that overflowed
        await settle(pilot)
        assert app.screen is screen
        assert screen.message_list.selected_message == diagnosis.message_index
        assert screen.detail.message_index == diagnosis.message_index

        await pilot.press("o")
        await settle(pilot)
        await pilot.press("enter")  # the top contributor
        await settle(pilot)
        assert app.screen is screen
        top = diagnosis.contributors[0].message_index
        assert screen.message_list.selected_message == top
        assert screen.detail.message_index == top


async def test_brackets_step_through_compactions_and_draw_the_split() -> None:
    session = claude_like_session(8, window=120_000, big_lines=200)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session, get_preset("opencode"))
        state = screen.state
        assert state is not None and state.result is not None
        events = state.compaction_events()
        assert len(events) >= 2
        await pilot.press("right_square_bracket")
        await settle(pilot)
        first_id, first_message = events[0]
        assert screen.message_list.selected_message == first_message
        assert state.active_event == first_id
        event = state.event(first_id)
        assert event is not None
        assert all(state.flags(i) & RowFlag.HEAD for i in event.head_indices)
        assert all(state.flags(i) & RowFlag.TAIL for i in event.tail_indices)
        split_rows = [r for r in state.rows if r < 0 and state.markers[-1 - r].kind == "split"]
        assert len(split_rows) == 1
        assert "split (" in screen_text(app)

        await pilot.press("right_square_bracket")
        await settle(pilot)
        second_id, second_message = events[1]
        assert screen.message_list.selected_message == second_message
        assert state.active_event == second_id
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert screen.message_list.selected_message == first_message


async def test_search_and_next_match() -> None:
    session = claude_like_session(5)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session)
        await pilot.press("slash")
        await pilot.press(*"module_3.py")
        await pilot.press("enter")
        await settle(pilot)
        state = screen.state
        assert state is not None
        expected = [
            m.index for m in session.messages if "module_3.py" in (m.text + str(m.tool_calls))
        ]
        assert state.matches == expected
        assert screen.message_list.selected_message == expected[0]
        assert state.flags(expected[0]) & RowFlag.MATCH
        await pilot.press("n")
        assert screen.message_list.selected_message == expected[1]
        await pilot.press("N")
        assert screen.message_list.selected_message == expected[0]
        await pilot.press("N")  # wraps to the last match
        assert screen.message_list.selected_message == expected[-1]


async def test_unknown_window_can_be_set() -> None:
    session = claude_like_session(3, window=None)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        state = screen.state
        assert state is not None and state.window is None
        assert "window unknown" in screen_text(app)
        await pilot.press("w")
        await pilot.pause()
        await pilot.press(*"150000", "enter")
        await settle(pilot)
        assert state.window == 150_000
        assert session.window_source == "user"
        assert state.result is not None and state.result.window == 150_000
        assert "window 150,000 (user)" in screen_text(app)


async def test_resize_to_a_tiny_terminal_and_back() -> None:
    session = claude_like_session(4)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session)
        await pilot.press("down", "down", "down")
        assert screen.has_class("-wide")
        await pilot.resize_terminal(40, 12)
        await settle(pilot)
        assert screen.has_class("-narrow") and screen.has_class("-short")
        await pilot.press("down")
        assert screen.message_list.selected_message == 4
        assert screen.detail.message_index == 4
        await pilot.resize_terminal(120, 34)
        await settle(pilot)
        assert screen.has_class("-wide")
        assert screen.message_list.selected_message == 4


async def test_theme_help_and_escape() -> None:
    session = claude_like_session(2)
    app = _app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, session)
        assert app.theme == "textual-dark"
        await pilot.press("t")
        assert app.theme == "textual-light"
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        body = help_screen.query_one("#help-body")
        assert body.region.height > 10  # the key table is laid out
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("escape")  # back to the picker
        await pilot.pause()
        assert not isinstance(app.screen, SessionScreen)


async def test_policy_panel_toggles() -> None:
    session = claude_like_session(2)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session)
        slot = screen.query_one("#policy-slot")
        assert not slot.display
        await pilot.press("p")
        assert slot.display
        await pilot.press("escape")
        assert not slot.display
        assert app.screen is screen


async def test_command_palette_jumps_to_a_call() -> None:
    session = claude_like_session(4)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session)
        state = screen.state
        assert state is not None
        target = state.message_for_call(5)
        assert target is not None
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"call 5")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        assert screen.message_list.selected_message == target


async def test_command_palette_switches_preset() -> None:
    session = claude_like_session(3)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"preset: codex")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        state = screen.state
        assert state is not None and state.policy.name == "codex"
        assert state.result is not None and state.result.policy.name == "codex"
        assert "policy codex" in screen_text(app)


async def test_cancel_stops_the_running_replay_and_keeps_the_previous_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = claude_like_session(4)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        state = screen.state
        assert state is not None and state.result is not None
        previous = state.result
        held = HeldReplay(monkeypatch)  # the next replay waits half-way for its cancel
        policy = get_preset("seed")
        policy.truncation.max_lines = 5
        screen.set_policy(policy)
        await wait_for(pilot, held.started, "the replay under the new policy started")
        assert screen.replaying
        await pilot.press("x")
        await settle(pilot)
        assert held.saw_cancel == [True]  # the running replay was told to stop
        assert not screen.replaying
        assert state.result is previous  # its result never arrived
        assert state.policy.truncation.max_lines == 5  # the new policy stays, not replayed


async def test_compaction_screen_opens_on_the_selected_message_and_jumps_back() -> None:
    from tui.screens.compaction import CompactionScreen

    session = claude_like_session(8, window=120_000, big_lines=200)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session, get_preset("opencode"))
        state = screen.state
        assert state is not None and state.result is not None
        screen.select_message(30)
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        compaction = app.screen
        assert isinstance(compaction, CompactionScreen)
        assert compaction.message_index == 30
        assert compaction.policy == state.policy
        await pilot.press("right_square_bracket")  # the screen steps through the replay's events
        await settle(pilot)
        target = compaction.current_message
        await pilot.press("enter")  # jump: the session screen selects that message
        await settle(pilot)
        assert app.screen is screen
        assert screen.message_list.selected_message == target
        assert screen.detail.message_index == target


async def test_gauge_and_list_select_each_other() -> None:
    from tui.widgets.gauge import TokenGauge

    session = claude_like_session(4)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        state = screen.state
        assert state is not None and state.result is not None
        gauge = screen.query_one(TokenGauge)
        # the list moves the gauge
        target = state.message_for_call(5)
        assert target is not None
        screen.select_message(target + 1)  # the tool result after call 5
        await settle(pilot)
        assert gauge.selected_call == 5
        # the gauge (keys or a click there) moves the list and the detail
        gauge.focus()
        await pilot.press("right")
        await settle(pilot)
        assert gauge.selected_call == 6
        expected = state.message_for_call(6)
        assert screen.message_list.selected_message == expected
        assert screen.detail.message_index == expected


async def test_policy_panel_changes_replay_the_session() -> None:
    from tui.widgets.policy_panel import PolicyPanel

    session = claude_like_session(3, output_lines=40, big_lines=60)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        state = screen.state
        assert state is not None and state.result is not None
        await pilot.press("p")
        await settle(pilot)
        panel = screen.query_one(PolicyPanel)
        assert not screen.detail.display  # the panel takes the detail pane's place
        policy = get_preset("seed")
        policy.truncation.max_lines = 10
        panel.post_message(PolicyPanel.Changed(policy))
        await settle(pilot)
        assert state.result.policy.truncation.max_lines == 10
        tool_rows = [m.index for m in session.messages if m.role is Role.TOOL]
        assert all(state.flags(i) & RowFlag.TRUNCATED for i in tool_rows)
        await pilot.press("p")
        assert screen.detail.display
