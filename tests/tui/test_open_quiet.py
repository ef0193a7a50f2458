"""While a session opens, the interface thread does only what the screen needs: every wake-up and
every restyle of it is time the loader's and the replay's threads wait for the interpreter."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.dom import DOMNode
from textual.pilot import Pilot
from textual.widgets import ProgressBar

from tests.support.tui_harness import settle, until
from tests.support.views_fixtures import Host
from tui.app import CtxscopeApp
from tui.screens.session import SessionScreen
from tui.widgets.load_progress import LoadProgress


async def _opened(pilot: Pilot[None], app: CtxscopeApp) -> SessionScreen:
    """The session screen ``app`` opened, once its session is shown and it is idle."""
    await until(pilot, lambda: isinstance(app.screen, SessionScreen), "the session screen")
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    await until(pilot, lambda: screen.state is not None, "the session shown")
    await settle(pilot)
    return screen


def _running_timers(widget: DOMNode) -> list[object]:
    return [timer for timer in widget._timers if timer._task is not None]


async def test_the_progress_bar_holds_no_timer() -> None:
    """Textual's bar refreshes its ETA every second while it is mounted; the progress box stays
    mounted, hidden, under the session it opened, and shows no ETA."""
    progress = LoadProgress()
    async with Host(progress).run_test() as pilot:
        progress.start("big.jsonl", 100_000_000)
        progress.update_progress(25_000_000, 100_000_000, 10_000)
        bar = progress.query_one("#load-bar", ProgressBar)
        await until(pilot, lambda: bar.percentage == 0.25, "the bar shows the progress")
        assert _running_timers(bar) == []
        progress.display = False  # (as under an opened session)
        await settle(pilot)
        assert _running_timers(bar) == []


async def test_the_first_resize_of_a_session_screen_restyles_nothing(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The screen's breakpoint classes (``-wide``, ``-tall``) are set before its widgets are
    styled: its first resize, which would set them, restyled every widget of the screen."""
    changed: list[tuple[set[str], set[str]]] = []
    update_classes = DOMNode.update_classes

    def counted(node: DOMNode, classes: Mapping[str, bool], *args: Any, **kwargs: Any) -> Any:
        before = set(node.classes)
        done = update_classes(node, classes, *args, **kwargs)
        if isinstance(node, SessionScreen) and set(node.classes) != before:
            changed.append((before, set(node.classes)))
        return done

    monkeypatch.setattr(DOMNode, "update_classes", counted)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _opened(pilot, app)
        assert screen.has_class("-wide") and screen.has_class("-tall")
        assert not screen.has_class("-narrow") and not screen.has_class("-short")
        assert changed == []
        await pilot.resize_terminal(100, 34)  # (a real change of breakpoint still restyles)
        await until(pilot, lambda: screen.has_class("-narrow"), "the narrow class")
        assert not screen.has_class("-wide")


async def test_a_session_screen_shown_is_restyled_only_when_shown_again(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its widgets are styled as they are mounted: Textual's restyle of the whole screen when it
    is shown is left out the first time, and kept when the screen is shown again."""
    restyled: list[DOMNode] = []
    update_node_styles = DOMNode.update_node_styles

    def counted(node: DOMNode, animate: bool = True) -> None:
        if isinstance(node, SessionScreen):
            restyled.append(node)
        update_node_styles(node, animate)

    monkeypatch.setattr(DOMNode, "update_node_styles", counted)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _opened(pilot, app)
        assert restyled == []
        screen.post_message(events.ScreenResume())  # (as Textual shows a screen again)
        await until(pilot, lambda: restyled == [screen], "the session screen restyled")
