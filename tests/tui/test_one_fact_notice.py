"""A folder that holds no session, given to the TUI, is reported once."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.paths import REPO
from tests.support.tui_harness import settle
from tui.app import CtxscopeApp
from tui.screens.picker import PickerScreen

PI = REPO / "tests" / "fixtures" / "pi" / "v3-tree.jsonl"


async def test_a_folder_that_is_no_session_is_reported_once(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copyfile(PI, folder / "a.jsonl")
    shutil.copyfile(PI, folder / "b.jsonl")
    app = CtxscopeApp(path=str(folder), live=False, discover=lambda: [])
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(100):
            await settle(pilot)
            if isinstance(app.screen, PickerScreen) and app._notifications:
                break
        assert isinstance(app.screen, PickerScreen)
        await settle(pilot)
        notices = [n.message for n in app._notifications]
        assert len(notices) == 1, notices
        assert str(folder) in notices[0]
        assert str(folder) in app.screen.error_text
