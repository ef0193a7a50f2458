"""KeysFooter: rebuilt when the keys it shows change, not on every focus change."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Button
from textual.widgets._footer import FooterKey

from tests.support.sessions import claude_like_session
from tests.support.tui_harness import open_session, quiet_app, screen_text, until
from tui.widgets.footer import KeysFooter, keys_to_hide


class _Keys(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "alpha", "Alpha"),
        Binding("b", "beta", "Beta"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.beta_shown = False
        self.alpha_enabled = True

    def compose(self) -> ComposeResult:
        yield Button("one", id="one")
        yield Button("two", id="two")
        yield KeysFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "beta":
            return self.beta_shown
        if action == "alpha":
            return True if self.alpha_enabled else None  # (None: shown, greyed)
        return True

    def action_alpha(self) -> None:
        pass

    def action_beta(self) -> None:
        pass


def _labels(app: _Keys) -> list[str]:
    return [key.description for key in app.query(FooterKey)]


async def test_footer_is_rebuilt_only_when_its_keys_change() -> None:
    app = _Keys()
    async with app.run_test() as pilot:
        await pilot.pause()
        footer = app.query_one(KeysFooter)
        assert "Alpha" in _labels(app) and "Beta" not in _labels(app)
        built = footer.rebuilds
        assert built >= 1

        # focus moves and bindings are refreshed, but the keys shown stay the same
        app.query_one("#two", Button).focus()
        await pilot.pause()
        app.query_one("#one", Button).focus()
        app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert footer.rebuilds == built

        # a key appears: one rebuild, and it is shown
        app.beta_shown = True
        app.refresh_bindings()
        app.refresh_bindings()  # several notices before the next refresh: still one rebuild
        await pilot.pause()
        await pilot.pause()
        assert footer.rebuilds == built + 1
        assert "Beta" in _labels(app)


async def test_a_key_greyed_or_enabled_is_restyled_in_place() -> None:
    app = _Keys()
    async with app.run_test() as pilot:
        await pilot.pause()
        footer = app.query_one(KeysFooter)
        built = footer.rebuilds
        alpha = next(key for key in app.query(FooterKey) if key.action == "alpha")
        assert not alpha.has_class("-disabled")

        # the key is greyed: the same key widget, restyled, and a click on it only rings
        app.alpha_enabled = False
        app.refresh_bindings()
        await until(pilot, lambda: alpha.has_class("-disabled"), "the key greyed")
        assert footer.rebuilds == built
        assert next(key for key in app.query(FooterKey) if key.action == "alpha") is alpha
        assert alpha._disabled
        rang: list[bool] = []
        app.bell = lambda: rang.append(True)  # type: ignore[method-assign]
        alpha.on_mouse_down()
        assert rang == [True]

        # and enabled again, as a rebuild would have drawn it
        app.alpha_enabled = True
        app.refresh_bindings()
        await until(pilot, lambda: not alpha.has_class("-disabled"), "the key enabled")
        assert footer.rebuilds == built and not alpha._disabled
        assert "Alpha" in _labels(app)


def test_keys_are_left_out_by_priority() -> None:
    actions = ["overflow", "search", "follow", "back", "app.quit", "help"]
    widths = [10, 8, 8, 6, 6, 6]
    assert keys_to_hide(actions, widths, 100) == set()
    assert keys_to_hide(actions, widths, 36) == {2}  # the last declared first
    assert keys_to_hide(actions, widths, 30) == {1, 2}
    assert keys_to_hide(actions, widths, 27) == {0, 1, 2}
    assert keys_to_hide(actions, widths, 12) == {0, 1, 2, 3}  # back before quit and help


async def test_at_80_columns_the_session_footer_keeps_quit_and_help() -> None:
    session = claude_like_session(4, with_compaction=True)
    app = quiet_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_session(pilot, session)
        footer = screen.query_one(KeysFooter)
        await until(pilot, lambda: bool(footer.hidden_keys), "keys left out for want of room")
        shown = {key.key: key for key in footer.query(FooterKey) if key.display}
        assert {"q", "question_mark", "escape", "o"} <= set(shown), sorted(shown)
        text = screen_text(app).splitlines()[-1]
        assert "q Quit" in text and "? Help" in text, text
        for key in shown.values():  # every key shown lies inside the footer, none cut
            assert key.region.right <= footer.region.right, (key.key, key.region)
