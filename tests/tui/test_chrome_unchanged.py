"""A limit change re-shows the header and the status line: a label whose text is the same is not
updated (an update lays the whole screen out again), one whose text changed is; the re-run it
starts says "replaying…" only once it has run ``RERUN_QUIET_S`` (most end before)."""

from __future__ import annotations

import pytest
from textual.widgets import Label

from core.policy import Policy, get_preset
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import HeldReplay, open_session, quiet_app, settle, until, wait_for
from tests.support.views_fixtures import Host
from tui.screens.session import replaying
from tui.widgets.status_line import StatusLine
from tui.widgets.title_bar import set_label


def _counted(label: Label, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    shown: list[str] = []
    update = label.update

    def counted(content: str = "", *, layout: bool = True) -> None:
        shown.append(content)
        update(content, layout=layout)

    monkeypatch.setattr(label, "update", counted)
    return shown


async def test_a_label_is_updated_only_when_its_text_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    label = Label("policy seed")
    async with Host(label).run_test() as pilot:
        shown = _counted(label, monkeypatch)
        set_label(label, "policy seed")
        assert shown == []
        set_label(label, "policy codex")
        set_label(label, "policy codex")
        await pilot.pause()
        assert shown == ["policy codex"]
        assert label.content == "policy codex"


async def test_the_status_activity_is_updated_once_per_new_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    status = StatusLine()
    async with Host(status).run_test() as pilot:
        label = status.query_one("#status-activity", Label)
        shown = _counted(label, monkeypatch)
        for text in ("replaying… (x: cancel)", "replaying… (x: cancel)", ""):
            status.activity(text, busy=bool(text))
        await pilot.pause()
        assert shown == ["replaying… (x: cancel)", ""]
        assert not label.has_class("-busy")


def _lines(max_lines: int) -> Policy:
    policy = get_preset("seed")
    policy.truncation.max_lines = max_lines
    return policy


async def test_a_rerun_says_replaying_only_after_its_quiet_period(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(replaying, "RERUN_QUIET_S", 3600.0)  # (never reached in this test)
    app = quiet_app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await open_session(pilot, claude_like_session(3, big_lines=200), _lines(2000))
        assert screen.state is not None and screen.state.result is not None
        label = screen.status.query_one("#status-activity", Label)
        shown = _counted(label, monkeypatch)
        held = HeldReplay(monkeypatch)  # (the re-run waits until let go: it is surely running)
        screen.set_policy(_lines(5))
        await wait_for(pilot, held.started, "the re-run under the new policy started")
        assert screen.replaying
        held.release.set()
        await settle(pilot)
        assert screen.state.result.policy == _lines(5)
        assert not any("replaying" in text for text in shown)  # neither said nor taken back


async def test_a_long_rerun_says_replaying_and_stops_saying_it_when_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(replaying, "RERUN_QUIET_S", 0.01)
    app = quiet_app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await open_session(pilot, claude_like_session(3, big_lines=200), _lines(2000))
        label = screen.status.query_one("#status-activity", Label)
        held = HeldReplay(monkeypatch)
        screen.set_policy(_lines(5))
        await wait_for(pilot, held.started, "the re-run under the new policy started")
        await until(pilot, lambda: "replaying" in str(label.content), "replaying… said")
        held.release.set()
        await settle(pilot)
        assert not screen.replaying
        assert "replaying" not in str(label.content)
