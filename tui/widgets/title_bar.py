"""The one-line bar at the top of the picker and of a session: the app's name, then a title."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label


class TitleBar(Horizontal):
    """``ctxscope`` on the theme's primary colour, then ``title`` in bold."""

    DEFAULT_CSS = """
    TitleBar {
        height: 1;
        background: $panel;
        color: $foreground;
    }
    TitleBar Label {
        width: auto;
        height: 1;
        padding: 0 1;
    }
    TitleBar #hdr-app {
        background: $primary;
        color: $text;
        text-style: bold;
    }
    TitleBar #hdr-name {
        text-style: bold;
    }
    """

    def __init__(self, title: str = "", *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._title = title

    def compose(self) -> ComposeResult:
        yield Label("ctxscope", id="hdr-app")
        yield Label(self._title, id="hdr-name")


def set_label(label: Label, text: str) -> None:
    """Show ``text`` in ``label``, unless it shows it already (an update lays the screen out
    again: a limit change re-shows the header and the status line with mostly the same texts)."""
    if label.content != text:
        label.update(text)
