"""The TUI on damaged numbers: a token count of 2^63 or more once stopped the app (the gauge's
``array("q")``); the loaders clamp such figures where the line is read, so the session opens,
replays and draws like any other (tests/fixtures/malformed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.formats import load_session
from tests.support.paths import TESTS
from tests.support.tui_harness import settle
from tui.app import CtxscopeApp
from tui.screens.session import SessionScreen

MALFORMED = TESTS / "fixtures" / "malformed"


@pytest.mark.parametrize("path", sorted(MALFORMED.iterdir()), ids=lambda p: p.name)
async def test_a_damaged_session_opens_replays_and_draws(path: Path) -> None:
    expected = load_session(path)
    app = CtxscopeApp(discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        app.open_session(str(path))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen), app.picker and app.picker.error_text
        state = screen.state
        assert state is not None
        assert state.message_count == len(expected.messages)
        assert state.result is not None, state.replay_error
        await pilot.press("end")
        await pilot.press("home")
        await settle(pilot)
        assert app.is_running
