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


async def test_at_80x24_the_footer_shows_every_key_the_picker_offers() -> None:
    from textual.binding import Binding

    from tests.support.tui_harness import screen_text
    from tui.widgets.footer import KeysFooter

    app = CtxscopeApp(discover=lambda: [], live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        app.screen.query_one("#sessions").focus()
        await settle(pilot)
        footer = app.screen.query_one(KeysFooter)
        offered = {b.key for b in PickerScreen.BINDINGS if isinstance(b, Binding) and b.show} | {
            "q",
            "question_mark",
        }
        shown = {key.key: key for key in footer.query(FooterKey) if key.display}
        assert offered <= set(shown), sorted(offered - set(shown))  # (was: a, n and x left out)
        assert not footer.hidden_keys
        lines = screen_text(app).splitlines()
        bottom = "\n".join(lines[-footer.size.height :])
        for text in ("S Reverse", "x Stop", "q Quit", "? Help", "/ Filter", "n Near"):
            assert text in bottom, bottom
        for key in shown.values():  # every key lies inside the footer, none cut or overlapping
            assert footer.region.contains_region(key.region), (key.key, key.region)
        regions = [key.region for key in shown.values()]
        assert not any(a.overlaps(b) for i, a in enumerate(regions) for b in regions[i + 1 :])
