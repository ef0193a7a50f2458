"""A chrome label's new text lays the screen out only when the label's width changes, and then
once: a full-screen layout takes milliseconds with a big session's widgets, and the header, the
status line and the load progress change their texts many times while a session opens."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.screen import Screen

from core.replay import Replayer, ReplayResult
from tests.support.tui_harness import settle, until
from tests.support.views_fixtures import Host
from tui.app import CtxscopeApp
from tui.screens.session import SessionScreen
from tui.screens.session.view import replay_progress_text
from tui.screens.session.worker_messages import ReplayProgressed
from tui.widgets.load_progress import LoadProgress
from tui.widgets.status_line import StatusLine
from tui.widgets.title_bar import LineLabel, set_label


def _layouts(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every full-screen layout from now on (each with whether it was a scroll-only reflow)."""
    done: list[bool] = []
    refresh_layout = Screen._refresh_layout

    def counted(screen: Screen[object], size: object = None, scroll: bool = False) -> None:
        done.append(scroll and not screen._layout_widgets)
        refresh_layout(screen, size, scroll)  # type: ignore[arg-type]

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    return done


async def test_a_text_as_wide_as_the_shown_one_lays_nothing_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    label = LineLabel("replaying 11,000/52,372… (x: cancel)")
    async with Host(label).run_test() as pilot:
        await settle(pilot)
        layouts = _layouts(monkeypatch)
        set_label(label, "replaying 12,000/52,372… (x: cancel)")
        await settle(pilot)
        assert label.content == "replaying 12,000/52,372… (x: cancel)"
        assert layouts == []
        assert "12,000" in str(label.render())  # (repainted with the new text)


async def test_a_wider_text_lays_the_screen_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    label = LineLabel("replaying 512/52,372… (x: cancel)")
    async with Host(label).run_test() as pilot:
        await settle(pilot)
        layouts = _layouts(monkeypatch)
        set_label(label, "replaying 15,360/52,372… (x: cancel)")
        await settle(pilot)
        assert layouts == [False]  # one full layout, not a second for its virtual size
        assert label.size.width == len("replaying 15,360/52,372… (x: cancel)")


async def test_the_status_activity_during_a_replay_lays_out_once_per_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    status = StatusLine()
    async with Host(status).run_test() as pilot:
        status.activity("replaying… (x: cancel)", busy=True)
        await settle(pilot)
        layouts = _layouts(monkeypatch)
        for done in (11_264, 12_288, 13_312, 14_336):  # as wide as each other
            status.activity(f"replaying {done:,}/104,744… (x: cancel)", busy=True)
            await settle(pilot)
        assert len(layouts) == 1


async def test_the_load_progress_line_lays_out_only_when_its_width_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    progress = LoadProgress()
    async with Host(progress).run_test() as pilot:
        progress.start("big.jsonl", 100_000_000)
        progress.update_progress(10_000_000, 100_000_000, 10_000)
        await settle(pilot)
        layouts = _layouts(monkeypatch)
        for step in (2, 3, 4):  # "20.0 MB of 100.0 MB · 20,000 messages", … as wide
            progress.update_progress(step * 10_000_000, 100_000_000, step * 10_000)
            await settle(pilot)
        assert layouts == []
        assert "40,000 messages" in str(progress.query_one("#load-detail", LineLabel).content)


async def test_a_text_as_wide_that_wraps_where_the_label_is_is_laid_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    label = LineLabel("aaa bbb ccc ddd")
    label.styles.width = 8  # (the text wraps: another one as wide may wrap to more lines)
    async with Host(label).run_test() as pilot:
        await settle(pilot)
        assert label.size.height == 2
        layouts = _layouts(monkeypatch)
        set_label(label, "aaaaa bbbbb c d")  # as wide, three lines at 8 cells
        await settle(pilot)
        assert layouts
        assert label.size.height == 3


async def test_load_progress_reports_of_other_widths_lay_nothing_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The progress line is as wide as its box: a report whose text is wider or narrower than
    the last (10 MB read, 10,000 messages, the read done) is repainted, the screen not laid out."""
    progress = LoadProgress()
    async with Host(progress).run_test(size=(120, 34)) as pilot:
        progress.start("big.jsonl", 100_000_000)
        progress.update_progress(1_000_000, 100_000_000, 1_000)
        await settle(pilot)
        layouts = _layouts(monkeypatch)
        for read, messages in (
            (4_200_000, 4_402),
            (12_600_000, 13_150),
            (96_500_000, 101_030),
            (100_000_000, 104_744),
        ):
            progress.update_progress(read, 100_000_000, messages)
            await settle(pilot)
        assert layouts == []
        detail = progress.query_one("#load-detail", LineLabel)
        shown = str(detail.render())
        assert "100.0 MB of 100.0 MB · 104,744 messages · putting the session together…" in shown


def test_a_replay_with_no_total_yet_says_no_count() -> None:
    """A replay begun before the screen has a state has nothing to count yet: the status line
    says it is replaying, without a ``0/0``."""
    assert replay_progress_text(0, 0) == "replaying… (x: cancel)"
    assert replay_progress_text(0, 3) == "replaying 0/3… (x: cancel)"


async def test_a_replay_s_progress_keeps_the_status_line_as_wide(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The count done is as wide as the total: from 512 to 104,448 of 104,744 the status line
    keeps its width, and the screen is not laid out again."""
    status = StatusLine()
    async with Host(status).run_test() as pilot:
        status.activity(replay_progress_text(512, 104_744), busy=True)
        await settle(pilot)
        layouts = _layouts(monkeypatch)
        for done in (5_632, 12_800, 104_448):
            status.activity(replay_progress_text(done, 104_744), busy=True)
            await settle(pilot)
        assert layouts == []
        label = status.query_one("#status-activity", LineLabel)
        assert "replaying 104,448/104,744… (x: cancel)" in str(label.render())


SAMPLE = Path(__file__).parents[2] / "sample_sessions" / "claude-code" / "overflow.jsonl"


async def test_a_first_replay_says_its_progress_from_the_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first replay of a session says from its start how many of the session's messages it
    has walked (none yet), as wide as each report after: its first report is repainted, the
    screen not laid out (``replaying…`` then ``replaying 512/104,744…`` was a full layout and
    its frame, ~15 ms of the interface thread at 100,000 messages, while the replay runs)."""
    started, release = threading.Event(), threading.Event()
    real_run = Replayer.run

    def held(replayer: Replayer, *args: Any, **kwargs: Any) -> ReplayResult:
        started.set()
        release.wait(60)
        return real_run(replayer, *args, **kwargs)

    monkeypatch.setattr(Replayer, "run", held)
    app = CtxscopeApp(str(SAMPLE), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        try:
            await until(pilot, started.is_set, "the replay started")
            screen = app.screen
            assert isinstance(screen, SessionScreen) and screen.state is not None
            count = screen.state.message_count
            label = screen.status.query_one("#status-activity", LineLabel)
            await until(pilot, lambda: label.content == replay_progress_text(0, count), "0 done")
            for _ in range(3):
                await pilot.pause()
            layouts = _layouts(monkeypatch)
            generation = screen.replays._generation
            screen.post_message(ReplayProgressed(generation, count // 2, count))
            await until(
                pilot, lambda: label.content == replay_progress_text(count // 2, count), "half"
            )
            for _ in range(3):
                await pilot.pause()
            assert layouts == []
        finally:
            release.set()
        state = screen.state
        await until(pilot, lambda: state.result is not None, "the result")
