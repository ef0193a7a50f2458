"""Work that waits for the message list's next frame (the rest of a big file, a replay's next
step) is never held by a frame that cannot come: a list with no row on screen, a screen left.
"""

from __future__ import annotations

from pathlib import Path

from textual.screen import Screen

from tests.support.tui_harness import settle, until
from tui.app import CtxscopeApp
from tui.screens.session import SessionScreen

SAMPLE = Path(__file__).parents[2] / "sample_sessions" / "claude-code" / "overflow.jsonl"


async def test_a_list_with_no_row_on_screen_does_not_hold_the_work_waiting_for_its_frame() -> None:
    """A terminal too small for the list leaves it no row: it paints no line, so the work runs
    after the current refresh instead of waiting for a frame (before: until a 1 s fallback)."""
    app = CtxscopeApp(str(SAMPLE), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.state is not None
        listing = screen.message_list
        listing.styles.height = 0
        await until(
            pilot, lambda: listing.scrollable_content_region.height == 0, "the list laid out empty"
        )
        ran: list[str] = []
        screen.after_list_painted(lambda: ran.append("ran"))
        await until(pilot, lambda: ran == ["ran"], "the waiting work ran", limit_s=3)
        assert listing.size.width > 0  # (laid out: not the wait of a list before its first layout)


async def test_leaving_the_screen_runs_the_work_waiting_for_its_list_frame() -> None:
    """A screen with another pushed over it paints nothing: what waited for its list's frame
    goes on when the screen is left (before: until a 1 s fallback, or the screen's return)."""
    app = CtxscopeApp(str(SAMPLE), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.state is not None
        ran: list[str] = []
        screen.message_list.when_painted(lambda: ran.append("ran"))
        app.push_screen(Screen())  # (in the same pass: the list's frame never comes)
        await until(pilot, lambda: ran == ["ran"], "the waiting work ran", limit_s=3)
        assert app.screen is not screen
