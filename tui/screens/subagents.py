"""The sub-agents of a session: a list to pick one from, opened as a session screen of its own.

A modal over the session screen (``a``). Each row is one sub-agent the session started
(:func:`core.formats.subagents.child_paths`): its id, and where it ran among the parent's calls. The
figures are not computed here (opening one replays it on its own screen, with its own gauge).
Enter dismisses with the sub-agent's path (the session screen pushes a session screen for it;
Escape there comes back to the parent); Esc dismisses with None.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from core.formats.subagents import (
    calls_during,
    child_paths,
    child_times,
    compaction_run_of,
    is_compaction_run,
)
from core.model.session import Session

if TYPE_CHECKING:
    from textual.screen import Screen


def child_label(path: str, parent: Session | None = None) -> str:
    """A sub-agent's row: its name as its path gives it, what kind of run it is and, with its
    ``parent``, where it ran (the parent's calls; for a compaction's run, which compaction)."""
    name = path.rpartition("#")[2] if "#" in Path(path).name else Path(path).stem
    agent = name.removeprefix("agent-")
    if parent is None:
        kind = "the run of a compaction" if is_compaction_run(agent) else "sub-agent"
        return f"{agent}  ({kind})"
    started, ended = child_times(parent, path)
    if is_compaction_run(agent):
        number = compaction_run_of(parent, ended)
        kind = f"the run of compaction {number + 1}" if number is not None else "a compaction's run"
        started = ended
    else:
        kind = "sub-agent"
    span = calls_during(parent, started, ended)
    where = f", between calls {span[0]} and {span[1]}" if span is not None else ""
    return f"{agent}  ({kind}{where})"


class SubagentsScreen(ModalScreen[str | None]):
    """The session's sub-agents; Enter on one dismisses with its path."""

    DEFAULT_CSS = """
    SubagentsScreen { align: center middle; background: $background 60%; }
    #sa-dialog { width: 80; max-width: 95%; height: auto; max-height: 80%; padding: 0 1;
                 border: thick $accent 70%; background: $surface; }
    #sa-title { text-style: bold; margin-bottom: 1; }
    #sa-list { height: auto; max-height: 20; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="subagents.close"),
    ]

    def __init__(self, session: Session, paths: list[str]) -> None:
        super().__init__()
        self.session = session
        self.paths = paths

    def compose(self) -> ComposeResult:
        with Vertical(id="sa-dialog"):
            yield Label(
                f"Sub-agents of {self.session.id} ({len(self.paths)}): Enter opens one",
                id="sa-title",
            )
            yield OptionList(
                *(
                    Option(child_label(path, self.session), id=f"child-{n}")
                    for n, path in enumerate(self.paths)
                ),
                id="sa-list",
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.paths[event.option_index])

    def action_close(self) -> None:
        self.dismiss(None)


def open_subagents(screen: Screen[Any], session: Session) -> None:
    """From ``screen`` (a session screen): list ``session``'s sub-agents; the one chosen opens
    on a session screen of its own (Escape there comes back to ``screen``)."""
    from tui.screens.session import SessionScreen

    app = screen.app

    def closed(error: str | None) -> None:
        if error:
            app.notify(error, title="Cannot open the sub-agent", severity="error")

    def open_child(path: str | None) -> None:
        if path is not None:
            app.push_screen(SessionScreen(path, live=False), closed)

    app.push_screen(SubagentsScreen(session, child_paths(session)), open_child)
