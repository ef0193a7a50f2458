"""The overflow view: the biggest contributor, Enter/g/Esc dismissals, the no-overflow case."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from core.model.session import Session
from core.replay import ReplayResult, replay
from tests.support.sessions import growing_session
from tests.support.views_fixtures import Host, compacting_policy
from tui.screens.overflow import OverflowScreen, share_bar

HUGE_TURN = 3
HUGE_MESSAGE = HUGE_TURN * 4 + 2  # user, call, result: the result of turn 3


@asynccontextmanager
async def opened(
    session: Session, result: ReplayResult | None, size: tuple[int, int] = (100, 34)
) -> AsyncIterator[tuple[Host, Pilot[None], OverflowScreen, list[int | None]]]:
    """A host app with the overflow screen pushed and its diagnosis done."""
    app = Host(Static("behind"))
    dismissed: list[int | None] = []
    async with app.run_test(size=size) as pilot:
        screen = OverflowScreen(session, result)
        app.push_screen(screen, dismissed.append)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        yield app, pilot, screen, dismissed


def _table_rows(screen: OverflowScreen) -> list[list[str]]:
    table = screen.query_one("#ov-table", DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def test_share_bar_fills_in_eighths() -> None:
    assert share_bar(0.0, 4) == "    "
    assert share_bar(1.0, 4) == "████"
    assert share_bar(0.5, 4) == "██  "
    assert share_bar(1 / 32, 4) == "▏   "
    assert len(share_bar(0.37)) == len(share_bar(2.0))


async def test_the_huge_tool_output_tops_the_table_and_enter_jumps_to_it() -> None:
    session = growing_session(huge_at=HUGE_TURN)
    huge = session.messages[HUGE_MESSAGE].tool_result
    assert huge is not None and huge.tool_name == "bash"
    result = replay(session, compacting_policy())
    async with opened(session, result) as (app, pilot, screen, dismissed):
        diagnosis = screen.diagnosis
        assert diagnosis is not None and diagnosis.overflowed
        rows = _table_rows(screen)
        assert rows[0][0] == f"#{HUGE_MESSAGE}"
        assert rows[0][1] == "tool"
        assert rows[0][2] == "bash"
        assert int(rows[0][3].replace(",", "")) > int(rows[1][3].replace(",", ""))
        headline = str(screen.query_one("#ov-headline", Static).render())
        assert f"Call {diagnosis.call_index}" in headline and "overflowed" in headline
        table = screen.query_one("#ov-table", DataTable)
        assert table.has_focus and table.cursor_row == 0
        await pilot.press("enter")
        await pilot.pause()
        assert dismissed == [HUGE_MESSAGE]
        assert not isinstance(app.screen, OverflowScreen)


async def test_enter_on_another_row_and_g_for_the_call() -> None:
    session = growing_session(huge_at=HUGE_TURN)
    result = replay(session, compacting_policy())
    async with opened(session, result) as (app, pilot, screen, dismissed):
        second = int(_table_rows(screen)[1][0].lstrip("#"))
        await pilot.press("down", "enter")
        await pilot.pause()
        assert dismissed == [second]
        screen = OverflowScreen(session, result)
        app.push_screen(screen, dismissed.append)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("g")
        await pilot.pause()
        assert screen.diagnosis is not None
        assert dismissed[-1] == screen.diagnosis.message_index


async def test_no_overflow_is_said_plainly_and_escape_returns_none() -> None:
    session = growing_session(turns=3, window=1_000_000)
    async with opened(session, None) as (_app, pilot, screen, dismissed):  # diagnose replays itself
        assert screen.diagnosis is not None and screen.diagnosis.call_index is None
        assert "No overflow" in str(screen.query_one("#ov-headline", Static).render())
        assert screen.query_one("#ov-table", DataTable).row_count == 0
        await pilot.press("g")  # nothing to go to
        await pilot.pause()
        assert dismissed == []
        await pilot.press("escape")
        await pilot.pause()
        assert dismissed == [None]


async def test_fits_an_80_by_24_terminal() -> None:
    session = growing_session(huge_at=HUGE_TURN)
    result = replay(session, compacting_policy())
    async with opened(session, result, size=(80, 24)) as (_app, _pilot, screen, _dismissed):
        hint = screen.query_one("#ov-hint")
        table = screen.query_one("#ov-table", DataTable)
        dialog = screen.query_one("#ov-dialog")
        assert hint.region.bottom <= dialog.content_region.bottom
        assert table.region.height >= 4


async def test_when_it_checks_what_it_saw_and_what_it_should_have_done_are_said_whole() -> None:
    # Regression: the explanation was cut mid-sentence ("…of 255,616; 97,069")
    from core.policy import get_preset
    from tests.support.builders import SessionBuilder, text_of_tokens

    session = (
        SessionBuilder()
        .user("first")
        .call("read", context=10_000)
        .result("ok")
        .reply("done", context=11_000)
        .user("second")
        .call("read", context=30_000)
        .result(text_of_tokens(30_000, "a"))
        .call("grep", context=62_000)
        .result(text_of_tokens(30_000, "b"))
        .call("grep", context=92_000)
        .result(text_of_tokens(10_000, "c"))
        .reply("too big", context=102_100)
        .session(window=100_000)
    )
    result = replay(session, get_preset("pi"))
    async with opened(session, result, size=(80, 30)) as (_app, _pilot, screen, _dismissed):
        d = screen.diagnosis
        assert d is not None and d.verdict and d.schedule
        console = Console(width=76, record=True, file=io.StringIO())
        console.print(screen.query_one("#ov-facts", Static).content)
        facts = " ".join(console.export_text().split())
        assert "only between prompts" in facts
        assert d.last_check_tokens is not None
        saw = f"right before call 2: {d.last_check_tokens:,} against 83,616 — did not fire"
        assert saw in facts
        assert " ".join(d.verdict.split()) in facts  # whole, not cut


async def test_the_compaction_the_growth_starts_at_is_named_with_its_trigger() -> None:
    # the overflow view shows triggers with their evidence
    from core.policy import get_preset
    from tests.support.builders import SessionBuilder, text_of_tokens

    session = (
        SessionBuilder()
        .user()
        .call(context=60_000)
        .result(text_of_tokens(30_000, "o"))
        .reply(context=91_000)
        .compaction(tokens_before=91_000)
        .user("go on")
        .call(context=5_000)
        .result(text_of_tokens(500, "n"))
        .reply(context=101_000)
        .session(window=100_000)
    )
    result = replay(session, get_preset("pi"))
    row = result.fidelity[0]
    async with opened(session, result) as (_app, _pilot, screen, _dismissed):
        d = screen.diagnosis
        assert d is not None and d.since_message_index == 4
        console = Console(width=90, record=True, file=io.StringIO())
        console.print(screen.query_one("#ov-facts", Static).content)
        facts = " ".join(console.export_text().split())
        since = f"recorded compaction #0 at message #4, {row.trigger}"
        assert since in facts
        assert " ".join(row.trigger_evidence.split()) in facts
