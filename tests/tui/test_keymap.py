"""Keys that can be remapped: every binding has an id, and ``[keymap]`` in the config file
(``$XDG_CONFIG_HOME/ctxscope/config.toml``) gives a binding other keys, which the footer and the
help screen then show. A wrong entry is a notification, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App

from tests.support.paths import REPO
from tests.support.sessions import late_overflow_session
from tests.support.tui_harness import open_session, quiet_app, screen_text
from tools.scenes import press, settle
from tui.keymap import binding_ids, config_path, project_bindings, read_keymap
from tui.screens.help import KEYS, ROW_BINDINGS, HelpScreen, row_keys
from tui.screens.overflow import OverflowScreen
from tui.screens.session import SessionScreen

SIZE = (120, 36)


def _write_config(root: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root))
    path = root / "ctxscope" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def _footer_keys(app: App[None]) -> set[str]:
    return {
        binding.key
        for (_node, binding, _enabled, _tip) in app.screen.active_bindings.values()
        if binding.show
    }


def test_every_binding_has_an_id() -> None:
    bindings = list(project_bindings())
    assert len(bindings) > 50  # the app, the screens and the widgets were all found
    missing = [f"{cls.__qualname__}: {binding.key}" for cls, binding in bindings if not binding.id]
    assert missing == []


def test_every_help_row_names_bindings_that_exist() -> None:
    rows = {row for _title, group in KEYS for row in group}
    assert set(ROW_BINDINGS) <= rows
    named = {binding_id for ids in ROW_BINDINGS.values() for binding_id in ids}
    assert named - binding_ids() == set()


def test_the_config_file_is_under_xdg_config_home() -> None:
    assert config_path({"XDG_CONFIG_HOME": "/x"}) == Path("/x/ctxscope/config.toml")
    assert config_path({"XDG_CONFIG_HOME": ""}) == Path.home() / ".config/ctxscope/config.toml"


def test_a_keymap_is_read_and_bad_entries_are_problems(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[keymap]\n"
        '"session.overflow" = "v"\n'
        '"messages.down" = ["down", "ctrl+n"]\n'
        '"no.such.binding" = "z"\n'
        '"session.follow" = 3\n'
        '"session.search" = "a b"\n',
        encoding="utf-8",
    )
    keymap = read_keymap(path)
    assert keymap.keys == {"session.overflow": "v", "messages.down": "down,ctrl+n"}
    assert len(keymap.problems) == 3
    assert any("'no.such.binding'" in p for p in keymap.problems)
    assert any("session.follow = 3" in p for p in keymap.problems)


def test_a_file_that_is_not_toml_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[keymap\n", encoding="utf-8")
    keymap = read_keymap(path)
    assert keymap.keys == {} and len(keymap.problems) == 1
    assert "not valid TOML" in keymap.problems[0]
    assert read_keymap(tmp_path / "absent.toml").problems == []


async def test_a_remapped_key_works_and_the_footer_and_help_show_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_config(tmp_path, '[keymap]\n"session.overflow" = "v"\n', monkeypatch)
    app = quiet_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_session(pilot, late_overflow_session())
        footer = _footer_keys(app)
        assert "v" in footer and "o" not in footer
        footer_line = screen_text(app).splitlines()[-1]
        assert "v Overflow" in footer_line and "o Overflow" not in footer_line
        await press(pilot, "o")
        assert app.screen is screen  # the old key does nothing now
        await press(pilot, "v")
        assert isinstance(app.screen, OverflowScreen)
        await press(pilot, "escape")
        assert isinstance(app.screen, SessionScreen)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        lines = screen_text(app).splitlines()
        overflow_row = next(line for line in lines if "overflow view:" in line)
        assert overflow_row.split("overflow view:")[0].split()[-1] == "v"


async def test_bad_keymap_entries_are_notifications(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_config(
        tmp_path, '[keymap]\n"session.overflow" = 7\n"picker.rescan" = "ctrl+y"\n', monkeypatch
    )
    app = quiet_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        said = [n.message for n in app._notifications]
        assert any("session.overflow = 7" in m for m in said)
        assert "ctrl+y" in _footer_keys(app)  # the good entry still applies
        assert app.is_running


def test_the_readme_names_every_binding_id() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert sorted(i for i in binding_ids() if f"`{i}`" not in readme) == []


def test_a_help_row_shows_each_of_its_bindings_keys_once_one_is_remapped() -> None:
    moving = ("↑ ↓  j k", "previous / next message")
    assert row_keys(moving, {}) == "↑ ↓  j k"  # as written, while nothing is remapped
    assert row_keys(moving, {"messages.down": "ctrl+n"}) == "↑ k  ^n"
