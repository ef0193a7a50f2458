"""A limit change re-shows the header and the status line: a label whose text is the same is not
updated (an update lays the whole screen out again), one whose text changed is."""

from __future__ import annotations

import pytest
from textual.widgets import Label

from tests.support.views_fixtures import Host
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
