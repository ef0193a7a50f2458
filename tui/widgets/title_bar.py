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
    ``replaying 11,000/52,372…``), which fits on one line where the label is, leaves the
    label's size as it is: it is repainted without laying out the screen (a full-screen layout
    takes ~7 ms with a big session's widgets). So does a text of another width in a label whose
    width does not follow its text (``width: 1fr``), where both texts fit on one line."""
    if label.content == text:
        return
    old = one_line_width(label.visual)
    label.update(text, layout=False)
    new = one_line_width(label.visual)
    room = label.content_size.width
    if new is None or old is None or new > room or old > room:
        label.refresh(layout=True)  # (lines wrap or end where the label is: its height may change)
    elif new != old and not _fixed_width(label):
        label.refresh(layout=True)


def _fixed_width(label: Label) -> bool:
    """The label's width does not follow its text (a width in cells, a fraction, a percentage)."""
    width = label.styles.width
    return width is not None and not width.is_auto


def one_line_width(visual: object) -> int | None:
    """The width in cells of ``visual`` (a label's) when it is one line of text (else None)."""
    if isinstance(visual, Content) and "\n" not in visual.plain:
        return visual.cell_length
    return None
