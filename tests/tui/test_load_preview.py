"""A big file opens in two steps: its first part is usable at once, the whole replaces it.

The thresholds are lowered for the test (a few kilobytes instead of megabytes) and the whole
load is held back on an event, so the first part can be looked at and used before it ends.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

import tui.screens.session.loading as loading_module
from core.formats import LoadError, load_session, load_session_head
from core.model.session import Session
from tests.support.tui_harness import HeldLoad, settle, until
from tui.app import CtxscopeApp
from tui.screens.session import SessionScreen
from tui.widgets.load_progress import LoadProgress


def _session_screen(app: CtxscopeApp) -> SessionScreen:
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    return screen


async def _wait_for(pilot: Pilot[None], condition: Callable[[], bool]) -> None:
    await until(pilot, condition, "the condition")


async def test_first_part_is_usable_while_the_rest_loads(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = load_session(big_file)
    release = HeldLoad(monkeypatch).release
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await _wait_for(pilot, lambda: screen.state is not None)
        await pilot.pause()
        state = screen.state
        assert state is not None
        assert screen.partial and screen.reading
        assert 0 < state.message_count < len(whole.messages)
        assert state.session.metadata["partial"]["total_bytes"] == big_file.stat().st_size
        # the list and the detail pane work on the first part; the progress bar stays, as a strip
        assert screen.message_list.row_count > 0
        progress = screen.query_one(LoadProgress)
        assert progress.display and progress.has_class("-strip")
        assert progress.shown == state.message_count
        assert screen.query_one("#body").display
        await pilot.press("down", "down", "down")
        assert screen.message_list.selected_message == 3
        assert screen.detail.message_index == 3
        # what needs the whole session waits for it: no replay, overflow and compaction greyed
        assert state.result is None and not screen.replaying
        assert "replayed once the whole file is read" in screen.detail.as_text()
        assert screen.check_action("overflow", ()) is None
        assert screen.check_action("compaction", ()) is None

        release.set()
        await settle(pilot)
        state = screen.state
        assert state is not None
        assert not screen.partial and not screen.reading
        assert state.message_count == len(whole.messages)
        assert state.session.metadata.get("partial") is None
        assert not progress.display
        # the selection survived the swap, and the replay ran on the whole session
        assert screen.message_list.selected_message == 3
        assert screen.detail.message_index == 3
        assert state.result is not None and len(state.result.messages) == len(whole.messages)
        assert screen.check_action("overflow", ()) is True
        await pilot.press("end")
        assert screen.message_list.selected_message == len(whole.messages) - 1


async def test_a_small_file_opens_in_one_step(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loading_module, "PREVIEW_MIN_BYTES", big_file.stat().st_size)
    previews: list[tuple[object, ...]] = []

    def load_head(*args: Any, **kwargs: Any) -> Session | None:
        previews.append(args)
        return load_session_head(*args, **kwargs)

    monkeypatch.setattr(loading_module, "load_session_head", load_head)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.state is not None
        assert previews == [] and screen.preview_seconds is None
        assert screen.state.message_count == len(load_session(big_file).messages)


async def test_a_failed_whole_load_keeps_the_first_part(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = HeldLoad(monkeypatch, fail=LoadError("disk went away")).release
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    notes: list[str] = []
    real_notify = app.notify

    def notify(message: str, **kwargs: Any) -> None:
        notes.append(str(message))
        real_notify(message, **kwargs)

    monkeypatch.setattr(app, "notify", notify)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = _session_screen(app)
        await _wait_for(pilot, lambda: screen.state is not None)
        shown = screen.state.message_count if screen.state else 0
        release.set()
        await settle(pilot)
        assert screen is app.screen  # not dismissed: the first part is still there
        assert screen.state is not None and screen.state.message_count == shown
        assert not screen.partial and not screen.query_one(LoadProgress).display
        assert any("disk went away" in n and f"first {shown:,} messages" in n for n in notes)
        # it is replayed as what it is, so the gauge and highlights work on it
        assert screen.state.result is not None
