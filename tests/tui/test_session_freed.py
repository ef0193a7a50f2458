"""A closed session screen lets its session go: the session, its replay result and its insights
are freed once the screen is gone, although the app froze them out of the cyclic collector's
sight while they were shown (:func:`tui.screens.session.heap.freeze_heap`).

A frozen object in a reference cycle is never collected: the screen's widgets all hold one
another (parent, children, bound methods), so a session that a widget of a closed screen still
held stayed in memory for the rest of the run (a 100 MB session: some 300 MB)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.model.session import Session
from tests.support.claude_jsonl import write_claude_session
from tests.support.sessions import read_bash_turns
from tests.support.tui_harness import settle, until
from tui.app import CtxscopeApp
from tui.screens.picker import PickerScreen
from tui.screens.session import SessionScreen


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    """The app freezes the heap and raises the collector's thresholds: put them back after."""
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


async def _opened(app: CtxscopeApp, pilot, path: Path) -> weakref.ref[Session]:  # type: ignore[no-untyped-def]
    app.open_session(str(path))
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, SessionScreen) and screen.state is not None
    assert screen.state.result is not None, screen.state.replay_error
    await until(
        pilot, lambda: screen.state is not None and screen.state.insights is not None, "insights"
    )
    assert gc.get_freeze_count() > 0  # what the screen shows is frozen (as in every run)
    return weakref.ref(screen.state.session)


FREED_WAIT_S = 30.0
"""A worker told to stop may still be in its thread for a while (it holds its screen until it
ends): the session is freed once it has."""


def _collected(session: weakref.ref[Session]) -> bool:
    gc.collect()  # (what is frozen is not looked at: only what the app unfroze)
    return session() is None


async def _closed(app: CtxscopeApp, pilot, session: weakref.ref[Session]) -> None:  # type: ignore[no-untyped-def]
    """Close the session screen; wait for the session to be freed (fail if it never is)."""
    await pilot.press("escape")
    await settle(pilot)
    assert isinstance(app.screen, PickerScreen)
    await until(pilot, lambda: _collected(session), "the closed session freed", FREED_WAIT_S)


async def test_a_closed_session_is_freed(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    write_claude_session(path, exchanges=6)
    app = CtxscopeApp(discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        session = await _opened(app, pilot, path)
        await _closed(app, pilot, session)


async def test_a_session_closed_with_its_panels_open_is_freed(tmp_path: Path) -> None:
    """The policy panel (the result's evidence) and the breakdown band (the insights) hold
    what they show too."""
    path = tmp_path / "session.jsonl"
    write_claude_session(path, exchanges=6)
    app = CtxscopeApp(discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        session = await _opened(app, pilot, path)
        await pilot.press("b")
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        await pilot.press("escape")  # (closes the policy panel)
        await settle(pilot)
        await _closed(app, pilot, session)


async def test_the_next_session_opens_after_one_is_freed(tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    write_claude_session(first, exchanges=6)
    write_claude_session(second, exchanges=3)
    app = CtxscopeApp(discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        session = await _opened(app, pilot, first)
        await _closed(app, pilot, session)
        again = await _opened(app, pilot, second)
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.state is not None
        assert again() is screen.state.session
        assert screen.state.message_count == len(screen.state.session.messages) > 0


async def test_a_session_whose_replay_compacted_is_freed() -> None:
    """A replay that compacts runs the compaction on an event loop of the replay's thread, kept
    for the thread's life: the loop must not keep the worker (and its session) that made it."""
    app = CtxscopeApp(discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        shown = read_bash_turns(30, 2_500)  # (past a 60k window: the replay compacts)
        session = weakref.ref(shown)
        app.push_screen(SessionScreen(session=shown, live=False))
        del shown
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.state is not None
        assert screen.state.result is not None and screen.state.result.summary.compactions > 0
        del screen
        await _closed(app, pilot, session)
