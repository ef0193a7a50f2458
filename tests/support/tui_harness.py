"""Helpers for driving the app in tests: wait for workers, hold one while it runs, read the screen.

:func:`settle` is the one of :mod:`tools.scenes` (the snapshot scenes wait the same way). The held
workers stop a replay or a load half-way on an event, so a test can look at (or cancel) what the
app shows while it runs, whatever the speed of the machine.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.worker import get_current_worker

import tui.screens.session.loading as session_module
from core.formats import load_session
from core.llm.protocol import ChatMessage, DeltaCallback, LLMUsage, SummaryResult
from core.model.session import Session
from core.policy import Policy
from core.replay import Replayer, ReplayResult
from tools.scenes import settle
from tui.app import CtxscopeApp
from tui.screens.session import SessionScreen

__all__ = [
    "HeldLoad",
    "HeldReplay",
    "HeldSummarizer",
    "open_session",
    "quiet_app",
    "screen_text",
    "settle",
    "until",
    "wait_for",
]

WAIT_LIMIT_S = 120.0
"""How long a test waits for a condition before it fails: generous, since a busy machine may be
slow; a test never waits longer than its condition takes to hold."""


async def until(
    pilot: Pilot[None], condition: Callable[[], object], what: str, limit_s: float = WAIT_LIMIT_S
) -> None:
    """Let the app run until ``condition()`` holds (polled every 10 ms), or fail naming ``what``."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        await pilot.pause(0.01)


LoadProgressFn = Callable[[int, int, int], None]
"""A loader's progress callback: bytes read, total bytes, messages so far."""

HOLD_LIMIT_S = 5.0
"""How long a held worker waits at most (a test that never lets it go still ends)."""


def _hold(release: threading.Event, cancel: threading.Event | None = None) -> None:
    """Wait (in a worker thread) until ``release`` or ``cancel`` is set, the worker is cancelled
    (the app is closing) or :data:`HOLD_LIMIT_S` has passed."""
    worker = get_current_worker()
    deadline = time.monotonic() + HOLD_LIMIT_S
    while not release.is_set() and not worker.is_cancelled and time.monotonic() < deadline:
        if cancel is not None and cancel.is_set():
            return
        time.sleep(0.005)


def screen_text(app: App[Any]) -> str:
    """What the terminal shows, as plain text (one line per row)."""
    lines = []
    for strip in app.screen._compositor.render_strips():
        lines.append("".join(segment.text for segment in strip))
    return "\n".join(lines)


def quiet_app() -> CtxscopeApp:
    """The ctxscope app with discovery off (no picker rows from this machine)."""
    return CtxscopeApp(discover=lambda: [])


async def open_session(
    pilot: Pilot[None], session: Session, policy: Policy | None = None
) -> SessionScreen:
    """Push a session screen for ``session`` (no live tail), wait until it is replayed."""
    pilot.app.push_screen(SessionScreen(session=session, live=False, policy=policy))
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    assert screen.state is not None
    return screen


async def wait_for(pilot: Pilot[None], event: threading.Event, what: str) -> None:
    """Let the app run until ``event`` is set (a held worker got there)."""
    await until(pilot, event.is_set, what)


class HeldReplay:
    """Holds the next replay (:meth:`Replayer.run`) half-way until it is cancelled or let go.

    The held run reports half its progress, then waits; it records whether it saw its cancel
    event set, and then runs for real (a cancelled run then stops at once).
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, armed: bool = True) -> None:
        self.armed = armed
        """Hold the next run (the ones before :meth:`arm` run as usual)."""
        self.started = threading.Event()
        self.release = threading.Event()
        self.saw_cancel: list[bool] = []
        """For each held run: was its cancel event set when it stopped waiting?"""
        real_run = Replayer.run
        held = self

        def run(
            replayer: Replayer,
            policy: Policy,
            *args: Any,
            progress: Any = None,
            cancel: threading.Event | None = None,
            **kwargs: Any,
        ) -> ReplayResult:
            if held.armed:
                held.armed = False
                held._hold(progress, cancel)
            return real_run(replayer, policy, *args, progress=progress, cancel=cancel, **kwargs)

        monkeypatch.setattr(Replayer, "run", run)

    def arm(self) -> None:
        self.armed = True

    def _hold(self, progress: Any, cancel: threading.Event | None) -> None:
        if progress is not None:
            progress(43, 86)
        self.started.set()
        _hold(self.release, cancel)
        self.saw_cancel.append(cancel is not None and cancel.is_set())


class HeldLoad:
    """Holds the session screen's whole read of a file until let go (then it reads, or raises
    ``fail``); ``report``: the progress it reports first (bytes read, total, messages).

    With ``first_part_bytes`` set, any file bigger than twice that opens in two steps (its first
    part is shown while the rest is read), as a big file does.
    """

    def __init__(
        self,
        monkeypatch: pytest.MonkeyPatch,
        *,
        report: tuple[int, int, int] | None = None,
        fail: Exception | None = None,
        first_part_bytes: int | None = None,
    ) -> None:
        self.release = threading.Event()
        held = self

        def load(*args: Any, progress: LoadProgressFn | None = None, **kwargs: Any) -> Session:
            if progress is not None and report is not None:
                progress(*report)
            _hold(held.release)
            if fail is not None:
                raise fail
            return load_session(*args, progress=progress, **kwargs)

        monkeypatch.setattr("tui.screens.session.loading.load_session", load)
        if first_part_bytes is not None:
            monkeypatch.setattr(session_module, "PREVIEW_MIN_BYTES", 2 * first_part_bytes)
            monkeypatch.setattr(session_module, "PREVIEW_BYTES", first_part_bytes)


class HeldSummarizer:
    """Streams the start of a summary, then waits until cancelled."""

    name = "slow"

    def __init__(self) -> None:
        self.cancelled = False

    async def summarize(
        self,
        messages: Sequence[ChatMessage],
        prompt: str,
        max_tokens: int,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> SummaryResult:
        if on_delta is not None:
            on_delta("## Goal\n\n- fix the ")
            on_delta("parser\n")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return SummaryResult(text="never", usage=LLMUsage(), model="slow")
