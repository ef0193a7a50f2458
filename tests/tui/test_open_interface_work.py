"""What the interface thread does while a session opens: only what the user sees needs it (the
loader and the replay threads share one interpreter with it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.css.stylesheet import Stylesheet

from tests.support.tui_harness import settle
from tui.app import CtxscopeApp
from tui.screens.session import SessionScreen

SAMPLE = Path(__file__).parents[2] / "sample_sessions" / "claude-code" / "overflow.jsonl"


async def test_opening_a_session_parses_the_stylesheets_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Textual parses every stylesheet again from scratch (and restyles every widget) each time
    a screen brings one it has not read: the app reads the picker's and the session screen's
    with its own, so an open does it once (as any new mode does), not once more per screen."""
    reparses: list[int] = []
    real = Stylesheet.reparse

    def counted(stylesheet: Stylesheet) -> None:
        reparses.append(len(stylesheet.source))
        real(stylesheet)

    monkeypatch.setattr(Stylesheet, "reparse", counted)
    app = CtxscopeApp(str(SAMPLE), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen) and app.screen.state is not None
        assert len(reparses) == 1
        app.screen.dismiss(None)  # the picker under it: read already
        await settle(pilot)
        assert len(reparses) == 1
