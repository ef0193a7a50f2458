"""What the interface thread does while a session opens: only what the user sees needs it (the
loader and the replay threads share one interpreter with it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.css.stylesheet import Stylesheet
from textual.geometry import Size
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget

from core.formats import load_session
from tests.support.tui_harness import HeldLoad, HeldReplay, settle, until
from tui.app import CtxscopeApp
from tui.screens.session import SessionScreen
from tui.screens.session.view import SessionView
from tui.widgets.message_list import MessageList

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


async def _first_part_shown(pilot: Pilot[None], app: CtxscopeApp) -> SessionScreen:
    """The session screen once the big file's first part is on it."""
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    await until(pilot, lambda: screen.state is not None, "the first part shown")
    return screen


async def test_the_replay_of_a_big_file_starts_as_soon_as_the_whole_of_it_is_read(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first part's frame is out: the whole file's replay starts when the whole is shown,
    not after a frame of the whole list (the interpreter stayed idle in between)."""
    waits: list[Callable[[], None]] = []
    load = HeldLoad(monkeypatch)
    replay = HeldReplay(monkeypatch)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _first_part_shown(pilot, app)
        assert screen.partial
        # (from here: the first part's frame, which the rest of the read waits for, is out)
        monkeypatch.setattr(
            SessionView, "after_list_painted", lambda _view, then: waits.append(then)
        )
        load.release.set()
        await until(pilot, replay.started.is_set, "the replay started", limit_s=10)
        assert not screen.partial and waits == []
        replay.release.set()
        for then in waits:
            then()
        await until(
            pilot,
            lambda: screen.state is not None and screen.state.result is not None,
            "the result",
        )
        assert screen.state is not None and screen.state.message_count == len(
            load_session(big_file).messages
        )


async def test_a_resize_to_the_same_size_does_not_lay_the_screen_out_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A screen hears its size again as it opens (from the app's first resize): the full
    layout that Textual does for it is skipped; a real resize still lays it out, with the
    breakpoints' classes."""
    app = CtxscopeApp(str(SAMPLE), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        layouts: list[Size] = []
        real = Screen._refresh_layout

        def counted(self: Screen[object], size: Size | None = None, scroll: bool = False) -> None:
            layouts.append(size or app.size)
            real(self, size, scroll)

        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        screen.post_message(events.Resize(Size(120, 34), Size(120, 34)))
        await settle(pilot)
        assert layouts == []
        await pilot.resize_terminal(90, 34)
        await settle(pilot)
        assert Size(90, 34) in layouts and screen.has_class("-narrow")


async def test_while_the_file_is_read_no_other_thread_waits_on_it(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load's worker awaits its reading thread in the event loop: no thread of the
    executor waits (and wakes, taking the interpreter from the loader) meanwhile; cancelling
    the worker still lets go of the read at once."""
    before = set(threading.enumerate())  # (threads an earlier test's event loop left)
    load = HeldLoad(monkeypatch)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _first_part_shown(pilot, app)
        await pilot.pause()
        assert screen.reading
        started = [t.name for t in threading.enumerate() if t not in before]
        assert [name for name in started if name.startswith("asyncio")] == []
        (worker,) = [w for w in app.workers if w.group == "load"]
        assert not worker._thread_worker
        await pilot.press("x")
        await until(pilot, lambda: worker.is_finished, "the load's worker ended")
        assert screen.partial is False and not screen.reading
        load.release.set()


async def test_the_list_has_the_focus_from_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """No widget but the list takes the focus while a session opens (Textual's default focus,
    the gauge, handed it to the list once the session was shown: both restyled, the footer's
    keys looked at again, while the file was read)."""
    focused: list[str] = []
    real = Screen.set_focus

    def recorded(screen: Screen[object], widget: Widget | None, *args: Any, **kwargs: Any) -> None:
        if isinstance(screen, SessionScreen) and widget is not None:
            focused.append(type(widget).__name__)
        real(screen, widget, *args, **kwargs)

    monkeypatch.setattr(Screen, "set_focus", recorded)
    app = CtxscopeApp(str(SAMPLE), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen) and app.screen.state is not None
        assert focused and set(focused) == {"MessageList"}
        assert isinstance(app.focused, MessageList)
