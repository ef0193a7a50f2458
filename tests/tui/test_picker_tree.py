"""The picker lists each sub-agent right under its parent, marked, whatever the sort."""

from __future__ import annotations

from rich.style import Style

from core.formats.discovery import DiscoveredSession
from core.model.session import SourceFormat
from tui.screens.picker_view import CHILD_MARK, Palette, PickerView, cells, grouped


def _found(sid: str, when: float, parent: str | None = None) -> DiscoveredSession:
    return DiscoveredSession(
        path=f"/s/{sid}.jsonl",
        format=SourceFormat.CLAUDE_CODE,
        modified=when,
        session_id=sid,
        parent_session_id=parent,
        title=sid,
    )


def test_children_follow_their_parent() -> None:
    parent, other = _found("p", 10), _found("o", 20)
    child, grandchild = _found("c", 30, "p"), _found("g", 40, "c")
    orphan = _found("x", 50, "missing")
    view = PickerView()  # newest first: x, g, c, o, p before grouping
    order = [s.session_id for s in view.visible([parent, other, child, grandchild, orphan], {})]
    assert order == ["x", "o", "p", "c", "g"]
    assert grouped([]) == []


def test_a_childs_title_is_marked() -> None:
    palette = Palette(Style(), Style(), Style())
    row = cells(_found("c", 1, "p"), "skipped", palette)
    assert str(row[2]).startswith(CHILD_MARK)
    assert not str(cells(_found("p", 1), "skipped", palette)[2]).startswith(CHILD_MARK)
