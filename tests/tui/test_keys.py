"""Every key the footer and the help advertise works, on every screen.

Seen before: ← / → did nothing at the start (the list had the focus and ate them), Tab never left
the message list (the screen bound it to an action it does not have), and q did not quit from the
overflow view (a modal screen passes no key on to the app). Each screen's footer keys are listed
here with what pressing them must do; a footer key nobody tests fails the test.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from textual.app import App
from textual.command import CommandPalette
from textual.pilot import Pilot

from tools.scenes import COMPACTED, OVERFLOW, picker_app, press, session_app, settle
from tui.app import CtxscopeApp
from tui.screens.compaction import CompactionScreen
from tui.screens.help import HelpScreen
from tui.screens.overflow import OverflowScreen
from tui.screens.picker import PickerScreen
from tui.screens.session import SessionScreen
from tui.screens.window_prompt import WindowPrompt

needs_samples = pytest.mark.skipif(not COMPACTED.exists(), reason="samples not generated")

SIZE = (120, 36)


def footer_keys(app: App[None]) -> set[str]:
    """The keys the footer of the current screen shows."""
    return {
        binding.key
        for (_node, binding, enabled, _tip) in app.screen.active_bindings.values()
        if binding.show and enabled
    }


def current(app: App[None]) -> object:
    """The screen on top (read afresh: a key may have changed it)."""
    return app.screen


def focused(app: App[None]) -> object:
    """The focused widget (read afresh)."""
    return app.focused


def _session(app: App[None]) -> SessionScreen:
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    return screen


async def _opened(pilot: Pilot[None]) -> SessionScreen:
    await settle(pilot)
    return _session(pilot.app)


async def _quits(
    make: Callable[[], App[None]], steps: Callable[[Pilot[None]], Awaitable[None]]
) -> None:
    """q, after ``steps``, ends the app."""
    app = make()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await steps(pilot)
        await press(pilot, "q")
        assert app._exit


@needs_samples
async def test_session_screen_keys() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        state = screen.state
        assert state is not None and state.result is not None
        shown = footer_keys(app)
        tested = {
            "o",
            "c",
            "p",
            "b",
            "right_square_bracket",
            "slash",
            "escape",
            "q",
            "question_mark",
        }
        assert shown <= tested | {"f"}, shown - tested  # (f only with a live file)

        # moving: the list's keys, and ← / → through the calls from the list at the start
        assert app.focused is screen.message_list and screen.message_list.selected_message == 0
        await press(pilot, "down", "j")
        assert screen.message_list.selected_message == 2
        await press(pilot, "k")
        assert screen.message_list.selected_message == 1
        await press(pilot, "G")
        assert screen.message_list.selected_message == state.message_count - 1
        await press(pilot, "g")
        assert screen.message_list.selected_message == 0
        await press(pilot, "right")
        assert screen.gauge.selected_call is not None and screen.gauge.selected_call > 0
        moved_to = screen.message_list.selected_message
        assert moved_to == state.message_for_call(screen.gauge.selected_call)
        await press(pilot, "left")
        assert screen.message_list.selected_message is not None
        assert screen.message_list.selected_message < (moved_to or 0)

        # tab: list, detail, gauge, and round again
        screen.message_list.focus()
        seen = []
        for _ in range(3):
            await press(pilot, "tab")
            seen.append(app.focused)
        assert seen == [screen.detail, screen.gauge, screen.message_list]
        await press(pilot, "shift+tab")
        assert focused(app) is screen.gauge

        # [ ] between compactions
        screen.message_list.focus()
        await press(pilot, "g", "right_square_bracket")
        first = screen.message_list.selected_message
        assert first is not None and first > 0
        await press(pilot, "right_square_bracket", "left_square_bracket")
        assert screen.message_list.selected_message == first

        # search, n / N
        await press(pilot, "slash", *"pytest", "enter")
        assert state.matches and screen.message_list.selected_message in state.matches
        before = screen.message_list.selected_message
        await press(pilot, "n")
        assert screen.message_list.selected_message != before
        await press(pilot, "N")
        assert screen.message_list.selected_message == before

        # the views
        await press(pilot, "o")
        assert isinstance(app.screen, OverflowScreen)
        await press(pilot, "escape")
        await press(pilot, "c")
        assert isinstance(app.screen, CompactionScreen)
        await press(pilot, "escape")
        assert current(app) is screen
        await press(pilot, "p")
        assert screen.query_one("#policy-slot").display
        await press(pilot, "escape")
        assert not screen.query_one("#policy-slot").display
        await press(pilot, "b")
        assert screen.breakdown_shown and state.insights is not None
        await press(pilot, "b")
        assert not screen.breakdown_shown
        await press(pilot, "w")
        assert isinstance(app.screen, WindowPrompt)
        await press(pilot, "escape")
        screen.message_list.focus()
        await press(pilot, "x")  # nothing running: nothing happens, nothing breaks
        theme = app.theme
        await press(pilot, "t")
        assert app.theme != theme
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await press(pilot, "escape")
        await press(pilot, "ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await press(pilot, "escape")
        assert current(app) is screen
        await press(pilot, "escape")  # back to the picker
        assert isinstance(app.screen, PickerScreen)


@needs_samples
async def test_detail_pane_keys() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        await press(pilot, "tab")
        assert app.focused is screen.detail
        await press(pilot, "right")  # ← / → step through the calls from here too
        assert screen.gauge.selected_call is not None and screen.gauge.selected_call > 0
        await press(pilot, "m")  # more of a long message: nothing to break on a short one


@needs_samples
async def test_overflow_view_keys() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await _opened(pilot)
        await press(pilot, "o")
        assert "g" not in footer_keys(app)  # nothing overflowed: no call to go to
    app = session_app(OVERFLOW)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        await press(pilot, "o")
        assert footer_keys(app) <= {"escape", "g", "enter", "q", "question_mark"}
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await press(pilot, "escape")
        assert isinstance(app.screen, OverflowScreen)
        await press(pilot, "g")  # to the call that came closest
        assert current(app) is screen
        await press(pilot, "o", "enter")  # to the biggest contributor
        assert current(app) is screen
    await _quits(lambda: session_app(COMPACTED), lambda pilot: press(pilot, "o"))


@needs_samples
async def test_compaction_screen_keys() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot)
        await press(pilot, "c")
        compaction = app.screen
        assert isinstance(compaction, CompactionScreen)
        shown = footer_keys(app)
        tested = {"r", "left_square_bracket", "right_square_bracket", "enter", "x", "escape"}
        assert shown <= tested | {"q", "question_mark"}, shown - tested
        await press(pilot, "right_square_bracket")
        assert compaction.position == 0
        await press(pilot, "left_square_bracket")  # none before the first: it says so
        assert compaction.position == 0
        await press(pilot, "r")
        assert compaction.position is None and compaction.status == "done"
        await press(pilot, "x")  # nothing running
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await press(pilot, "escape", "enter")
        assert current(app) is screen
    await _quits(lambda: session_app(COMPACTED), lambda pilot: press(pilot, "c"))


@needs_samples
async def test_help_keys() -> None:
    app = session_app(COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await _opened(pilot)
        await press(pilot, "question_mark")
        theme = app.theme
        await press(pilot, "t")
        assert app.theme != theme and isinstance(app.screen, HelpScreen)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, SessionScreen)
    await _quits(lambda: session_app(COMPACTED), lambda pilot: press(pilot, "question_mark"))


async def test_picker_keys() -> None:
    app = picker_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        # typing in the filter: q and ? type, so the footer does not offer them
        assert "q" not in footer_keys(app) and "question_mark" not in footer_keys(app)
        assert not {"s", "a", "n"} & footer_keys(app)  # nor the list's keys that are characters
        await press(pilot, "down")  # to the list: now they work, and say so
        assert {"q", "question_mark"} <= footer_keys(app)
        shown = footer_keys(app)
        tested = {"slash", "ctrl+o", "ctrl+r", "s", "S", "a", "n", "x", "q", "question_mark"}
        assert shown <= tested, shown - tested
        assert "S" in shown  # (x is shown dimmed while no session is being analysed)
        await press(pilot, "s")
        assert picker.view.sort == "share" and picker.view.descending
        await press(pilot, "S")
        assert picker.view.sort == "share" and not picker.view.descending
        await press(pilot, "a")
        assert picker.view.agent == "claude-code"
        await press(pilot, "n")
        assert picker.view.near
        await press(pilot, "n", "a", "a", "a", "a", "a", "a", "a")  # back to every session
        assert len(picker.shown) == len(picker.sessions)
        await press(pilot, "x")  # nothing running: nothing happens, nothing breaks
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await press(pilot, "escape", "ctrl+o")
        assert app.focused is picker.query_one("#picker-path")
        assert "slash" not in footer_keys(app)  # it types a slash in a path
        await press(pilot, "escape", "slash")  # from the list, / goes to the filter
        assert app.focused is picker.query_one("#picker-filter")
        await press(pilot, "ctrl+r")
        assert picker.sessions
    await _quits(picker_app, lambda pilot: press(pilot, "down"))


def test_the_app_quits_with_q_wherever_no_text_field_has_the_focus() -> None:
    assert "quit" in CtxscopeApp.TYPED_KEYS
