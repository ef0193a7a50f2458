"""The message list: rows, flags, cursor, markers and scale (state is asserted, not pixels)."""

from __future__ import annotations

import pytest

from core.model.session import Message, Role, ToolResult
from core.model.write_numbers import compact_tokens
from core.policy import get_preset
from tests.support.decoded import spy_on_decoding
from tests.support.sessions import claude_like_session, many_messages
from tests.support.tui_harness import settle
from tui.app import CtxscopeApp
from tui.screen_state import RowFlag, SessionState
from tui.screens.session import SessionScreen
from tui.widgets.message_list import (
    PREVIEW_SCAN_CHARS,
    MessageList,
    message_preview,
    role_label,
)


def _app() -> CtxscopeApp:
    return CtxscopeApp(discover=lambda: [])


def test_the_token_column_fits_six_cells() -> None:
    assert compact_tokens(0) == "0"
    assert compact_tokens(9_999) == "9,999"
    assert compact_tokens(12_345) == "12.3k"
    assert compact_tokens(123_456) == "123k"
    assert compact_tokens(1_234_567) == "1.23M"
    assert all(len(compact_tokens(n)) <= 6 for n in (0, 999, 99_999, 999_999, 12_345_678))


def test_preview_is_one_line_and_names_the_tool() -> None:
    session = claude_like_session(1)
    user, call, result = session.messages[0], session.messages[1], session.messages[2]
    assert message_preview(user).startswith("Turn 0: please look")
    assert "→ bash(cat module_0.py)" in message_preview(call)
    preview = message_preview(result)
    assert preview.startswith("bash ▸ ")
    assert "\n" not in preview
    assert role_label(result) == "tool"


def test_the_preview_of_a_long_output_held_as_utf8_decodes_only_its_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "\n  " + "→ one line of a long output\n" * 2_000
    result = Message(
        index=0, id="t", role=Role.TOOL, tool_result=ToolResult(call_id="c", output=text)
    )
    decoded = spy_on_decoding(monkeypatch)
    preview = message_preview(result)
    assert decoded == []
    assert preview == "tool ▸ " + " ".join(text[:PREVIEW_SCAN_CHARS].split())


def test_state_rows_put_a_rule_above_a_recorded_compaction() -> None:
    session = claude_like_session(4, with_compaction=True)
    state = SessionState(session, get_preset("seed"))
    boundary = session.compactions[0].message_index
    assert len(state.rows) == session_len(state) + 1
    row = state.row_of_message(boundary)
    assert state.rows[row] == boundary
    assert state.rows[row - 1] < 0  # the rule row
    assert state.markers[-1 - state.rows[row - 1]].kind == "boundary"
    assert state.flags(boundary) & RowFlag.BOUNDARY
    assert state.flags(boundary) & RowFlag.SUMMARY


def session_len(state: SessionState) -> int:
    return state.message_count


async def test_cursor_moves_and_skips_rule_rows() -> None:
    session = claude_like_session(4, with_compaction=True)
    boundary = session.compactions[0].message_index
    app = _app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(SessionScreen(session=session, live=False, policy=get_preset("seed")))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        listing = screen.message_list
        assert listing.selected_message == 0
        await pilot.press("down", "down", "j")
        assert listing.selected_message == 3
        await pilot.press("k")
        assert listing.selected_message == 2
        screen.select_message(boundary - 1)
        await pilot.press("down")
        assert listing.selected_message == boundary  # the rule row in between is skipped
        await pilot.press("up")
        assert listing.selected_message == boundary - 1
        await pilot.press("G")
        assert listing.selected_message == session_len(screen.state) - 1  # type: ignore[arg-type]
        assert listing.at_end
        await pilot.press("g")
        assert listing.selected_message == 0


async def test_click_selects_the_row_under_the_mouse() -> None:
    session = claude_like_session(3)
    app = _app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(SessionScreen(session=session, live=False))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        listing = screen.message_list
        await pilot.click(MessageList, offset=(10, 4))
        await settle(pilot)
        assert listing.selected_message == 4
        assert screen.detail.message_index == 4


async def test_a_hundred_thousand_messages_scroll_to_the_end() -> None:
    session = many_messages(100_000)
    app = _app()
    async with app.run_test(size=(120, 34)) as pilot:
        app.push_screen(SessionScreen(session=session, live=False))
        await settle(pilot, ignore=("replay",))  # the list is usable while the replay runs
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press("x")  # cancel a replay still running: this test is about scrolling
        await settle(pilot)
        assert not screen.replaying
        listing = screen.message_list
        assert listing.virtual_size.height == 100_000
        await pilot.press("end")
        await pilot.pause()
        assert listing.selected_message == 99_999
        assert listing.scroll_y >= 100_000 - listing.scrollable_content_region.height
        await pilot.press("pageup")
        await pilot.pause()
        assert listing.selected_message < 99_999
        # only the rows on screen were painted and cached
        assert len(listing._strip_cache) <= 4 * listing.scrollable_content_region.height


@pytest.mark.parametrize("count", [0, 1])
async def test_tiny_sessions(count: int) -> None:
    session = many_messages(count)
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(SessionScreen(session=session, live=False))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press("down", "end", "pagedown", "up", "home")
        listing = screen.message_list
        assert listing.selected_message == (0 if count else None)
        assert listing.row_count == count
