"""While a session opens, what can wait does, so that the load and the first replay (and the
frame that shows their result) have the interpreter to themselves.

The thresholds of a two-step open are lowered for the test (a few kilobytes instead of
megabytes), and the whole load and the first replay are held back on events, so that what the
screen does meanwhile can be looked at.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input

import tui.screens.session.loading as loading_module
import tui.screens.session.replaying as replaying_module
import tui.widgets.detail as detail_module
from core.formats import load_session
from core.formats.discovery import DiscoveredSession
from core.model.session import SourceFormat
from core.model.tokens import get_counter, message_text
from tests.support.claude_jsonl import write_claude_session
from tests.support.tui_harness import HeldLoad, HeldReplay, settle, until, wait_for
from tui.app import CtxscopeApp
from tui.screens.session import SessionScreen
from tui.screens.session.worker_messages import PROGRESS_INTERVAL_S, ReplayDone, Throttle


def _screen(app: CtxscopeApp) -> SessionScreen:
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    return screen


def _counted(text: str) -> int | None:
    found = re.search(r"counted\s+([\d,]+) C", text)
    return int(found.group(1).replace(",", "")) if found else None


async def test_the_detail_count_waits_until_the_session_is_read_and_replayed(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counters: list[str] = []

    def counter(spec: str) -> Any:
        counters.append(spec)
        return get_counter(spec)

    monkeypatch.setattr(detail_module, "get_counter", counter)
    load = HeldLoad(monkeypatch)
    replay = HeldReplay(monkeypatch)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = _screen(app)
        await until(pilot, lambda: screen.state is not None, "the first part shown")
        await pilot.pause()
        assert screen.partial and screen.detail.message_index == 0
        # the message selected at open is drawn, but its tokenizer count is not started yet
        assert "counted" in screen.detail.as_text() and _counted(screen.detail.as_text()) is None
        assert screen.detail._slow_timer is None
        assert screen.opening() and not screen.user_selected

        load.release.set()
        await wait_for(pilot, replay.started, "the first replay running")
        assert not screen.partial and screen.replaying and screen.opening()
        assert screen.detail._slow_timer is None and counters == []

        replay.release.set()
        await settle(pilot)
        assert not screen.opening()
        await until(pilot, lambda: _counted(screen.detail.as_text()) is not None, "the count shown")
        state = screen.state
        assert state is not None and state.result is not None
        counter = get_counter(detail_module.COUNT_ENCODING)
        assert _counted(screen.detail.as_text()) == counter.count(message_text(state.message(0)))


async def test_a_message_the_user_picks_while_the_session_opens_is_counted_at_once(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load = HeldLoad(monkeypatch)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = _screen(app)
        await until(pilot, lambda: screen.state is not None, "the first part shown")
        await pilot.press("down", "down")
        assert screen.partial and screen.reading and screen.detail.message_index == 2
        assert screen.user_selected and screen.detail._slow_timer is not None
        await until(pilot, lambda: _counted(screen.detail.as_text()) is not None, "the count shown")
        state = screen.state
        assert state is not None and screen.partial  # (still reading the rest)
        counter = get_counter(detail_module.COUNT_ENCODING)
        assert _counted(screen.detail.as_text()) == counter.count(message_text(state.message(2)))
        load.release.set()
        await settle(pilot)


async def test_the_inferred_threshold_is_worked_out_after_the_first_result_is_painted(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loading_module, "PREVIEW_MIN_BYTES", 10 * big_file.stat().st_size)
    monkeypatch.setattr(replaying_module, "RESULT_PAINT_WAIT_S", 120.0)  # (never the reason)
    done: list[ReplayDone] = []
    seen: list[tuple[bool, bool]] = []
    real_init = ReplayDone.__init__

    def init(self: ReplayDone, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        done.append(self)

    real_infer = replaying_module.ReplayRunner._infer_later

    def infer_later(runner: Any, replayer: Any, session: Any) -> None:
        state = runner.view.state
        seen.append((done[-1].painted.is_set(), state is not None and state.result is not None))
        real_infer(runner, replayer, session)

    monkeypatch.setattr(ReplayDone, "__init__", init)
    monkeypatch.setattr(replaying_module.ReplayRunner, "_infer_later", infer_later)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        screen = _screen(app)
        await until(pilot, lambda: screen.inferred is not None, "the inferred threshold")
        # it waited for the result to be on screen (and painted) before walking the session
        assert seen == [(True, True)]
        assert screen.state is not None and screen.state.result is not None


async def test_under_a_first_part_the_rest_reports_its_progress_less_often(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intervals: list[float] = []

    class Recorded(Throttle):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            intervals.append(self.interval_s)

    monkeypatch.setattr(loading_module, "Throttle", Recorded)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        screen = _screen(app)
        assert screen.state is not None
        assert screen.state.message_count == len(load_session(big_file).messages)
        assert screen.preview_seconds is not None  # (it did open in two steps)
    assert intervals == [loading_module.PART_PROGRESS_INTERVAL_S]
    assert loading_module.PART_PROGRESS_INTERVAL_S > PROGRESS_INTERVAL_S

    # a file read in one go has only the progress box to show: the usual interval
    intervals.clear()
    monkeypatch.setattr(loading_module, "PREVIEW_MIN_BYTES", 10 * big_file.stat().st_size)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
    assert intervals == [PROGRESS_INTERVAL_S]


async def test_the_picker_under_a_session_opened_at_start_is_built_once_uncovered(
    tmp_path: Path,
) -> None:
    path = tmp_path / "opened.jsonl"
    write_claude_session(path, 3)
    other = tmp_path / "other.jsonl"
    write_claude_session(other, 2)
    found = [
        DiscoveredSession(
            path=str(other),
            format=SourceFormat.CLAUDE_CODE,
            project="/home/dev/src/parcelhub",
            modified=1_772_000_000.0,
            size_bytes=other.stat().st_size,
            title="bump the lockfile",
        )
    ]
    discovered: list[bool] = []

    def discover() -> list[DiscoveredSession]:
        discovered.append(True)
        return found

    app = CtxscopeApp(str(path), discover=discover, live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        _screen(app)
        picker = app.picker
        assert picker is not None
        # while the session is on top, the picker under it has no widgets and looks for nothing
        assert not picker.built and not list(picker.query(DataTable)) and discovered == []

        await pilot.press("escape")
        await until(pilot, lambda: picker.built and picker.table.row_count == 1, "the list")
        assert app.screen is picker and discovered == [True]
        assert app.focused is picker.query_one("#picker-filter", Input)  # typing filters at once
        assert picker.error_text == ""
