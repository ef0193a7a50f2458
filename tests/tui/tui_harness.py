"""Helpers for driving the app in tests: wait for workers, read the screen as text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App
from textual.pilot import Pilot

from core.models import Session
from core.policy import Policy

if TYPE_CHECKING:
    from tui.app import CtxscopeApp

ENDLESS_GROUPS = frozenset({"live"})
"""Worker groups that never finish on their own (the live-tail watcher)."""


async def settle(pilot: Pilot[object], rounds: int = 50, *, ignore: tuple[str, ...] = ()) -> None:
    """Wait until every finite worker is done and the messages they posted are handled.

    ``ignore``: worker groups not to wait for (e.g. ``("replay",)`` to act while it runs).
    """
    app = pilot.app
    skip = ENDLESS_GROUPS | set(ignore)
    for _ in range(rounds):
        await pilot.pause()
        while _pending(app):  # a screen is about to start its replay (right after a frame)
            await pilot.pause(0.02)
        busy = [w for w in app.workers if w.group not in skip and w.is_running]
        if not busy:
            await pilot.pause()
            busy = [w for w in app.workers if w.group not in skip and w.is_running]
            if not busy:
                break
        await app.workers.wait_for_complete(busy)
    await pilot.pause()


def _pending(app: App[object]) -> bool:
    return any(getattr(screen, "after_paint_pending", False) for screen in app.screen_stack)


def screen_text(app: App[object]) -> str:
    """What the terminal shows, as plain text (one line per row)."""
    lines = []
    for strip in app.screen._compositor.render_strips():
        lines.append("".join(segment.text for segment in strip))
    return "\n".join(lines)


def quiet_app() -> CtxscopeApp:
    """The ctxscope app with discovery off (no picker rows from this machine)."""
    from tui.app import CtxscopeApp

    return CtxscopeApp(discover=lambda: [])


async def open_session(pilot: Pilot[object], session: Session, policy: Policy | None = None):  # type: ignore[no-untyped-def]
    """Push a session screen for ``session`` (no live tail), wait until it is replayed."""
    from tui.screens.session import SessionScreen

    pilot.app.push_screen(SessionScreen(session=session, live=False, policy=policy))
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    assert screen.state is not None
    return screen
