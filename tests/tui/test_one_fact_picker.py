"""The picker: its footer offers S and x; a filter puts the session it names
exactly first."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from core.formats.discovery import DiscoveredSession
from core.model.session import SourceFormat
from tests.support.tui_harness import settle
from tui.app import CtxscopeApp
from tui.screens.picker import PickerScreen
from tui.screens.picker_view import PickerView


def _found(title: str, modified: float) -> DiscoveredSession:
    return DiscoveredSession(
        path=f"/nowhere/{modified:.0f}.jsonl",
        format=SourceFormat.CLAUDE_CODE,
        project="/home/dev/app",
        modified=modified,
        size_bytes=10,
        title=title,
    )


def test_an_exact_title_match_comes_first() -> None:
    sessions = [
        _found("fix the parser tests again", 3_000),
        _found("parser fixes", 2_000),
        _found("fix the parser", 1_000),
    ]
    view = PickerView(query="fix the parser")
    shown = view.visible(sessions, {})
    assert [s.title for s in shown][:2] == ["fix the parser", "fix the parser tests again"]


async def test_the_footer_offers_reverse_and_stop() -> None:
    app = CtxscopeApp(discover=lambda: [], live=False)
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        app.screen.query_one("#sessions").focus()
        await settle(pilot)
        keys = {key.key for key in app.screen.query(FooterKey)}
        assert {"S", "x"} <= keys, keys
