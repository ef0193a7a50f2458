"""A load can always be cancelled and the app always quits: FIFOs, devices, a read stuck for good.

A FIFO is refused before anything opens it (opening one for reading blocks until a writer
comes). A read that does get stuck (a network mount gone away) holds only a daemon thread: ``x``
and Esc cancel it, and ``q`` quits the app — in a real process, which must end.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import REPO
from tests.support.tui_harness import screen_text, until
from tui.app import CtxscopeApp
from tui.screens.picker import PickerScreen
from tui.screens.session import SessionScreen

SAMPLE = REPO / "sample_sessions" / "pi" / "session.jsonl"
HANG_S = 30.0


def _let_readers_go(fifo: Path) -> None:
    """Should a reader be blocked in open() on ``fifo`` (the bug this guards against), let it
    go: a writer that opens and closes gives it an end of file."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


async def _wait(pilot: Any, condition: Any, what: str, limit_s: float = HANG_S) -> None:
    await until(pilot, condition, what, limit_s)


async def test_a_fifo_is_refused_at_once_in_the_picker(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    app = CtxscopeApp(str(fifo), discover=lambda: [], live=False)
    try:
        async with app.run_test() as pilot:

            def refused() -> bool:
                picker = app.picker
                return picker is not None and "not a regular file (a FIFO)" in picker.error_text

            await _wait(pilot, refused, "the FIFO refused")
            assert isinstance(app.screen, PickerScreen)
            app.exit()
    finally:
        _let_readers_go(fifo)


class StuckLoad:
    """``load_session`` blocked until released (a read stuck in the kernel)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.threads: list[threading.Thread] = []

        def load(*_args: Any, **_kwargs: Any) -> Any:
            self.threads.append(threading.current_thread())
            self.started.set()
            self.release.wait()
            raise OSError("released")

        monkeypatch.setattr("tui.screens.session.loading.load_session", load)


@pytest.mark.parametrize("key", ["x", "escape"])
async def test_a_stuck_load_is_cancelled_by_a_key(
    monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    stuck = StuckLoad(monkeypatch)
    app = CtxscopeApp(discover=lambda: [], live=False)
    try:
        async with app.run_test() as pilot:
            app.open_session(str(SAMPLE))
            await _wait(pilot, stuck.started.is_set, "the load started")
            screen = app.screen
            assert isinstance(screen, SessionScreen) and screen.reading
            await pilot.press(key)
            await _wait(pilot, lambda: isinstance(app.screen, PickerScreen), "back to the picker")
            if key == "x":  # the notice is drawn on a later frame: wait for it
                await _wait(pilot, lambda: "loading cancelled" in screen_text(app), "the notice")
            # the worker gave up at once; the read it waited on is a daemon thread's
            await _wait(pilot, lambda: not screen.workers, "the load worker ended")
            assert stuck.threads and all(thread.daemon for thread in stuck.threads)
            app.exit()
    finally:
        stuck.release.set()


QUIT_WITH_A_STUCK_LOAD = """
import threading, sys, time
import tui.screens.session.loading as loading
from tui.app import CtxscopeApp

stuck_in_read = threading.Event()

def stuck(*args, **kwargs):
    stuck_in_read.set()
    threading.Event().wait()  # forever

loading.load_session = stuck

async def press_q(pilot):
    # q once the load is stuck in its read (waited for, not a fixed time; bounded all the same)
    deadline = time.monotonic() + 60
    while not stuck_in_read.is_set() and time.monotonic() < deadline:
        await pilot.pause(0.01)
    await pilot.press("q")

CtxscopeApp(sys.argv[1], discover=lambda: [], live=False).run(headless=True, auto_pilot=press_q)
print("quit")
"""


def test_q_quits_the_app_with_a_load_stuck_for_good() -> None:
    done = subprocess.run(
        [sys.executable, "-c", QUIT_WITH_A_STUCK_LOAD, str(SAMPLE)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=HANG_S,  # the old app never returned: the executor waited for the stuck read
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("quit")


async def test_q_quits_after_a_failed_open_from_the_command_line(tmp_path: Path) -> None:
    """23 of 34 hostile runs needed Escape before q: the focus stayed in the filter field."""
    app = CtxscopeApp(str(tmp_path / "missing.jsonl"), discover=lambda: [], live=False)
    async with app.run_test() as pilot:
        picker = app.picker
        assert picker is not None
        await _wait(pilot, lambda: bool(picker.error_text), "the open failed")
        await pilot.press("q")
        await _wait(pilot, lambda: not app.is_running, "the app quit")


async def test_a_failed_open_is_said_once(tmp_path: Path) -> None:
    bad = tmp_path / "notes.jsonl"
    bad.write_text("not a session\n")
    app = CtxscopeApp(str(bad), discover=lambda: [], live=False)
    async with app.run_test(notifications=True) as pilot:
        picker = app.picker
        assert picker is not None
        await _wait(pilot, lambda: bool(picker.error_text), "the open failed")
        notices = [n for n in app._notifications if n.title == "Cannot open session"]
        assert len(notices) == 1, [n.message for n in notices]
        app.exit()
