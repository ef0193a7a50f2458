"""The one-line bar at the top of the picker and of a session: the app's name, then a title."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Label


class LineLabel(Label):
    """A label of the chrome (a one-line bar): shown as a :class:`Label` is, laid out once per
    change of its width.

    A Label whose width changed is laid out, and then, its virtual size having changed with it,
    laid out again (Textual lays the screen out on any change of a widget's virtual size, for
    the scrollbars of a container). A label scrolls nothing: its virtual size is its size, so
    the second full-screen layout changes nothing and is not asked for."""

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)


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
        yield LineLabel("ctxscope", id="hdr-app")
        yield LineLabel(self._title, id="hdr-name")


def set_label(label: Label, text: str) -> None:
    """Show ``text`` in ``label``, unless it shows it already (an update lays the screen out
    again: a limit change re-shows the header and the status line with mostly the same texts).

    A new text of one line as wide as the shown one (``replaying 12,000/52,372…`` after
    ``replaying 11,000/52,372…``) leaves the label's size as it is: it is repainted without
    laying out the screen (a full-screen layout takes ~7 ms with a big session's widgets)."""
    if label.content == text:
        return
    old = label.visual
    label.update(text, layout=False)
    if not same_size(old, label.visual):
        label.refresh(layout=True)


def same_size(old: object, new: object) -> bool:
    """``old`` and ``new`` (a label's visuals) are single lines of the same width in cells."""
    return (
        isinstance(old, Content)
        and isinstance(new, Content)
        and "\n" not in old.plain
        and "\n" not in new.plain
        and old.cell_length == new.cell_length
    )
