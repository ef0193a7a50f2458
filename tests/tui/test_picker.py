"""The session picker: discovered sessions, fuzzy filter, their figures filled in by a worker, path
field (the fleet's columns, sort and views: test_picker_fleet.py)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from textual.widgets import DataTable, Input

from core.formats import load_session
from core.formats.discovery import DiscoveredSession
from core.model.session import SourceFormat
from core.model.write_numbers import compact_tokens
from tests.support.claude_jsonl import write_claude_session
from tests.support.tui_harness import settle
from tui.app import CtxscopeApp
from tui.screens.picker import PickerScreen
from tui.screens.session import SessionScreen

MODIFIED = 1_772_000_000.0  # a fixed time, so the table is the same every run


def _found(tmp_path: Path) -> list[DiscoveredSession]:
    sessions = []
    for k, (project, exchanges, title) in enumerate(
        [
            ("/home/dev/src/parcelhub", 3, "fix the flaky webhook test"),
            ("/home/dev/src/dashboard", 5, "add a date filter to the table"),
            ("/home/dev/src/parcelhub", 2, "bump the lockfile"),
        ]
    ):
        path = tmp_path / f"session-{k}.jsonl"
        write_claude_session(path, exchanges)
        sessions.append(
            DiscoveredSession(
                path=str(path),
                format=SourceFormat.CLAUDE_CODE,
                project=project,
                modified=MODIFIED - k * 3600,
                size_bytes=path.stat().st_size,
                title=title,
            )
        )
    return sessions


def _peak(path: str) -> int:
    session = load_session(path)
    return max(m.usage.context_tokens for m in session.messages if m.usage is not None)


async def test_lists_filters_and_computes_peaks(tmp_path: Path) -> None:
    found = _found(tmp_path)
    app = CtxscopeApp(discover=lambda: found, live=False)  # analysed in processes, as for real
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        table = picker.query_one("#sessions", DataTable)
        assert table.row_count == 3
        # the sessions were analysed in a worker and their peaks filled in
        for session in found:
            assert picker.rows[session.path].peak_tokens == _peak(session.path)
            assert str(table.get_cell(session.path, "peak")) == compact_tokens(_peak(session.path))

        assert picker.focused is picker.query_one("#picker-filter")  # typing filters at once
        await pilot.press(*"dashbrd")  # fuzzy
        await pilot.pause()
        assert table.row_count == 1
        assert str(table.get_cell(found[1].path, "title")).startswith("add a date filter")
        await pilot.press("down")  # from the filter into the list
        assert picker.focused is table
        await pilot.press("escape")
        await pilot.pause()
        assert table.row_count == 3
        await pilot.press("slash")
        assert picker.focused is picker.query_one("#picker-filter")


async def test_enter_opens_the_selected_session(tmp_path: Path) -> None:
    found = _found(tmp_path)
    app = CtxscopeApp(discover=lambda: found, live=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        picker.query_one("#sessions", DataTable).focus()
        await pilot.press("down", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        assert screen.path == found[1].path
        assert screen.state is not None
        assert screen.state.message_count == len(load_session(found[1].path).messages)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is picker


async def test_path_field_reports_errors_inline(tmp_path: Path) -> None:
    bad = tmp_path / "notes.md"
    bad.write_text("# not a session\n")
    app = CtxscopeApp(discover=lambda: [], live=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        field = picker.query_one("#picker-path", Input)
        field.focus()
        await pilot.press("enter")
        assert "Type the path" in picker.error_text

        field.value = str(tmp_path / "missing.jsonl")
        await pilot.press("enter")
        await settle(pilot)
        assert "no such file" in picker.error_text
        assert app.screen is picker

        field.value = str(bad)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is picker
        assert "not a session" in picker.error_text

        good = tmp_path / "good.jsonl"
        write_claude_session(good, 2)
        field.value = str(good)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        assert picker.error_text == ""  # cleared by the successful open


async def test_no_sessions_found_says_so() -> None:
    app = CtxscopeApp(discover=lambda: [], live=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        assert picker.query_one("#sessions", DataTable).row_count == 0
        assert "No sessions found" in str(picker.query_one("#picker-count").render())


async def test_discovery_failure_is_a_message_not_a_crash() -> None:
    def broken() -> list[DiscoveredSession]:
        raise PermissionError("home is not readable")

    app = CtxscopeApp(discover=broken, live=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        assert "discovery failed" in picker.error_text


async def test_the_date_is_the_sessions_own_time_else_marked(tmp_path: Path) -> None:
    # Regression: the session's own time (its last message), not the file's
    found = _found(tmp_path)
    found[0].last_active = MODIFIED - 30 * 86_400  # the session ended a month before the copy
    found[1].last_active = MODIFIED - 3600
    app = CtxscopeApp(discover=lambda: found, live=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        table = picker.query_one("#sessions", DataTable)
        dates = [str(table.get_cell(str(s.path), "date")) for s in found]
        assert dates[0] == datetime.fromtimestamp(MODIFIED - 30 * 86_400).strftime("%Y-%m-%d %H:%M")
        assert not dates[1].startswith("~")
        assert dates[2].startswith("~")  # no time of its own: the file's, marked
        count = str(picker.query_one("#picker-count").render())
        assert "~date: the file's time" in count
