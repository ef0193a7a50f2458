"""The message list: one row per message, drawn with Textual's line API.

Like toolong's ``LogLines``, this is a :class:`~textual.scroll_view.ScrollView` that paints only
the rows on screen (``render_line``) and keeps the painted rows in an LRU cache of
:class:`~textual.strip.Strip` objects, so 100,000 messages scroll as smoothly as 100. Row states
(pruned, protected, head, tail, the split line, recorded compaction boundaries, summaries,
synthetic messages, truncated outputs, the call that overflowed, search matches) are component
classes styled in its ``DEFAULT_CSS``.

The list reads a :class:`~tui.screen_state.SessionState`; it never computes a decision itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Self

from rich.cells import cell_len, get_character_cell_size, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message as TextualMessage
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from core.model.session import Message, Provenance, Role
from core.model.write_numbers import compact_tokens
from tui.screen_state import RowFlag, SessionState

PREVIEW_SCAN_CHARS = 400
"""A row preview never looks further into a message than this."""

STRIP_CACHE_ROWS = 160
"""Painted rows kept (a few screens' worth; a row with and without the cursor count apart).
Every cached row is a few dozen objects the cyclic garbage collector walks at each full
collection: a cache of thousands of rows made those collections (and the key press they land in)
several ms slower, while repainting a row that fell out costs ~0.1 ms."""

PROVENANCE_MARKS = {
    Provenance.RECORDED: "R",
    Provenance.COUNTED: "C",
    Provenance.ESTIMATED: "~",
}
"""One-character provenance marker shown after each token figure."""

_FLAG_GLYPHS: tuple[tuple[int, str, str], ...] = (
    (RowFlag.OVERFLOW, "!", "overflow"),
    (RowFlag.COMPACTED_HERE, "⚑", "compacted"),
    (RowFlag.TRUNCATED, "✂", "truncated"),
    (RowFlag.PRUNED, "×", "pruned"),
    (RowFlag.PROTECTED, "◆", "protected"),
    (RowFlag.SUMMARY, "Σ", "summary"),
    (RowFlag.SYNTHETIC, "↻", "synthetic"),
    (RowFlag.BOUNDARY, "⇤", "boundary"),
)
"""Glyphs of the flags column, most important first (at most three are shown)."""

FLAG_LEGEND: tuple[tuple[str, str], ...] = (
    ("!", "the window overflowed at this call"),
    ("⚑", "the policy would compact here"),
    ("✂", "tool output truncated by the policy"),
    ("×", "tool output pruned by the policy"),
    ("◆", "protected from pruning"),
    ("Σ", "compaction summary"),
    ("↻", "synthetic (injected) message"),
    ("⇤", "first message after a recorded compaction"),
    ("▌", "gutter: head (summarised) / tail (kept) of the selected compaction"),
)
"""What each glyph means (the help screen shows this)."""


def _one_line(text: str) -> str:
    head = text[:PREVIEW_SCAN_CHARS].strip()
    if not head:
        return ""
    return " ".join(head.split())


def message_preview(message: Message) -> str:
    """One line that says what a message is (its first words, or the tool and its arguments)."""
    if message.role is Role.TOOL and message.tool_result is not None:
        result = message.tool_result
        name = result.tool_name or "tool"
        prefix = f"{name} ✗ " if result.is_error else f"{name} ▸ "
        # (the output's start only: one held as UTF-8 is not decoded whole)
        start = result.output_ends(PREVIEW_SCAN_CHARS)[0]
        return prefix + (_one_line(start) or "(empty output)")
    text = _one_line(message.text)
    if message.tool_calls:
        calls = []
        for call in message.tool_calls[:3]:
            args = call.arguments
            if isinstance(args, dict):
                first = next(iter(args.values()), "")
                detail = _one_line(str(first))[:60]
            else:
                detail = _one_line(str(args or ""))[:60]
            calls.append(f"{call.name}({detail})")
        more = f" +{len(message.tool_calls) - 3}" if len(message.tool_calls) > 3 else ""
        joined = "→ " + ", ".join(calls) + more
        return f"{text} {joined}" if text else joined
    if not text and message.reasoning:
        return "(thinking) " + _one_line(message.reasoning)
    return text or "(empty)"


def role_label(message: Message) -> str:
    """The role column: the role, or what kind of injected message it is."""
    if message.summary:
        return "summary"
    if message.synthetic:
        return "continue"
    if message.meta:
        return "meta"
    return str(message.role)


def fit_cells(text: str, total: int) -> str:
    """``rich.cells.set_cell_size(text, total)``: ``text`` cropped or padded to ``total`` cells.

    The same result, faster for the common case of text whose characters are all one cell wide
    but outside rich's short list of known ones (an arrow, a bullet): rich then measures the
    text grapheme by grapheme (~0.2 ms for a 400-character preview, for every row painted).
    """
    if total > 0 and all(get_character_cell_size(char) == 1 for char in set(text)):
        # one character per cell (no wide, zero-width or joining characters): cut by length
        size = len(text)
        return text + " " * (total - size) if size < total else text[:total]
    return set_cell_size(text, total)


def fit_strip(strip: Strip, width: int, style: Style | None) -> Strip:
    """``strip`` cropped or padded (with ``style``) to ``width`` cells.

    Unlike ``Strip.crop_extend``, a strip that already fits is returned as it is: ``crop_extend``
    stores its result in the strip's own cache, and when the result is the strip itself that is a
    reference cycle, which only the cyclic garbage collector frees. Thousands of such strips (every
    detail line, gauge row and list row) made full collections take 30-40 ms at random key presses.
    """
    if strip.cell_length == width:
        return strip
    return strip.crop_extend(0, width, style)


def blended_component_style(widget: Widget, name: str) -> Style:
    """The Rich style of one component class, translucent colours blended onto the widget.

    (``get_component_rich_style(partial=True)`` drops the alpha channel, which would turn a
    10 % tint into a solid block and a muted text colour into a bright one.)
    """
    styles = widget.get_component_styles(name)
    base = widget.background_colors[1]
    background = None
    if styles.has_rule("background") and styles.background.a > 0:
        background = base + styles.background
    color = None
    if styles.has_rule("color") and styles.color.a > 0:
        color = (background or base) + styles.color
    return (
        Style(
            color=color.rich_color if color is not None else None,
            bgcolor=background.rich_color if background is not None else None,
        )
        + styles.text_style
    )


@dataclass(frozen=True, slots=True)
class _RowLook:
    """How the columns of a row with given flags, cursor and role are drawn."""

    gutter: str
    gutter_style: Style
    index: Style
    role: Style
    tokens: Style
    provenance: Style
    glyphs: str
    flags: Style
    text: Style


class StyledScrollView(ScrollView):
    """A line-API view that keeps its own Rich style between refreshes.

    ``rich_style`` walks every ancestor's styles; a view that asks for it once per painted line
    keeps it from one refresh (or style update) to the next instead.
    """

    _base_style: Style | None = None

    def _rich_base(self) -> Style:
        """The view's own style (kept until the next refresh or style update)."""
        style = self._base_style
        if style is None:
            style = self._base_style = self.rich_style
        return style

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        self._base_style = None
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)


@dataclass(frozen=True, slots=True)
class _DrawnRow:
    """A row's strip, with what it shows and the result it was drawn (or checked) under."""

    result_number: int
    shows: tuple[object, ...]
    strip: Strip


class MessageList(StyledScrollView, can_focus=True):
    """Every message of a session, one row each, with the policy's decisions as row styles."""

    DEFAULT_CSS = """
    MessageList {
        overflow-x: hidden;
        scrollbar-size-vertical: 1;
        background: $surface;
    }
    MessageList:focus {
        background-tint: $foreground 3%;
    }
    MessageList > .message-list--index { color: $text-muted; }
    MessageList > .message-list--tokens { color: $text-muted; }
    MessageList > .message-list--provenance { color: $text-muted; text-style: italic; }
    MessageList > .message-list--flags { color: $warning; text-style: bold; }
    MessageList > .message-list--role-user { color: $text-primary; text-style: bold; }
    MessageList > .message-list--role-assistant { color: $text-success; }
    MessageList > .message-list--role-tool { color: $text-secondary; }
    MessageList > .message-list--role-system { color: $text-muted; }

    MessageList > .message-list--pruned { color: $text-disabled; text-style: strike; }
    MessageList > .message-list--protected { color: $accent; }
    MessageList > .message-list--head { color: $warning; }
    MessageList > .message-list--tail { color: $success; }
    MessageList > .message-list--split {
        color: $warning;
        background: $warning 15%;
        text-style: bold;
    }
    MessageList > .message-list--boundary-rule {
        color: $accent;
        background: $accent 12%;
        text-style: bold;
    }
    MessageList > .message-list--boundary { text-style: underline; }
    MessageList > .message-list--summary { background: $accent 10%; text-style: italic; }
    MessageList > .message-list--synthetic { color: $text-muted; text-style: italic; }
    MessageList > .message-list--meta { color: $text-muted; }
    MessageList > .message-list--truncated { background: $warning 8%; }
    MessageList > .message-list--overflow { background: $error 30%; text-style: bold; }
    MessageList > .message-list--compacted { color: $warning; }
    MessageList > .message-list--match { background: $secondary 25%; }
    MessageList > .message-list--empty { color: $text-muted; text-style: italic; }

    MessageList > .message-list--cursor {
        background: $block-cursor-blurred-background;
    }
    MessageList:focus > .message-list--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "message-list--cursor",
        "message-list--index",
        "message-list--tokens",
        "message-list--provenance",
        "message-list--role-user",
        "message-list--role-assistant",
        "message-list--role-tool",
        "message-list--role-system",
        "message-list--pruned",
        "message-list--protected",
        "message-list--head",
        "message-list--tail",
        "message-list--split",
        "message-list--boundary",
        "message-list--boundary-rule",
        "message-list--summary",
        "message-list--synthetic",
        "message-list--meta",
        "message-list--truncated",
        "message-list--overflow",
        "message-list--compacted",
        "message-list--match",
        "message-list--flags",
        "message-list--empty",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False, id="messages.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="messages.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="messages.page-up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="messages.page-down"),
        Binding("home,g", "first", "First", show=False, id="messages.first"),
        Binding("end,G", "last", "Last", show=False, id="messages.last"),
        # ← / → step through the model calls wherever the focus is (the session screen's)
        Binding("left", "screen.move_call(-1)", "Prev call", show=False, id="messages.prev-call"),
        Binding("right", "screen.move_call(1)", "Next call", show=False, id="messages.next-call"),
    ]

    class Highlighted(TextualMessage):
        """The cursor moved to another message."""

        def __init__(self, message_list: MessageList, message_index: int) -> None:
            super().__init__()
            self.message_list = message_list
            self.message_index = message_index

        @property
        def control(self) -> MessageList:
            return self.message_list

    def __init__(
        self,
        state: SessionState | None = None,
        *,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's keyword
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._state = state
        self.cursor_row = 0
        self.cursor_moved: Callable[[int], None] | None = None
        """Called at once (in the same pass as the key) with the new message index.

        The owner uses it to redraw the detail pane in the same frame as the list; a posted
        message would arrive after the next screen update and cost a second frame.
        """
        self._strip_cache: LRUCache[tuple[int, int, bool], _DrawnRow] = LRUCache(STRIP_CACHE_ROWS)
        self._result_number = 0
        """Counts the results of the same session shown (:meth:`rows_changed` ``same_session``):
        a row drawn under an earlier one is checked (:meth:`_row_shows`) before it is kept."""
        self._index_width = 4
        self.painted = False
        """Rows of the current state have been painted (the first frame is out)."""
        self._when_painted: list[Callable[[], None]] = []
        self._blended_styles: dict[str, Style] = {}
        self._looks: dict[tuple[Style, int, bool, Role], _RowLook] = {}

    # -- state ---------------------------------------------------------------------------------

    @property
    def state(self) -> SessionState | None:
        return self._state

    def set_state(self, state: SessionState | None) -> None:
        """Show another session (or none)."""
        self._state = state
        self.painted = False
        self.cursor_row = self._first_message_row(0, 1) if state is not None else 0
        self.rows_changed()

    @property
    def row_count(self) -> int:
        return len(self._state.rows) if self._state is not None else 0

    @property
    def selected_message(self) -> int | None:
        """Index of the message under the cursor (None when the list is empty)."""
        state = self._state
        if state is None or not state.rows:
            return None
        row = min(self.cursor_row, len(state.rows) - 1)
        value = state.rows[row]
        if value >= 0:
            return value
        return self._row_message(self._first_message_row(row, 1))

    def _row_message(self, row: int) -> int | None:
        state = self._state
        if state is None or not 0 <= row < len(state.rows):
            return None
        value = state.rows[row]
        return value if value >= 0 else None

    def rows_changed(self, *, same_session: bool = False) -> None:
        """The rows or their flags changed (new result, search, selection of a compaction).

        ``same_session``: a new result of the session shown (a limit change): a row drawn before
        is kept where what it shows (:meth:`_row_shows`) is the same, not drawn again."""
        if same_session:
            self._result_number += 1
        else:
            self._strip_cache.clear()
        count = self.row_count
        state = self._state
        if state is not None:
            self._index_width = max(3, len(str(max(state.message_count - 1, 0))))
        self.virtual_size = Size(0, count)
        if count and self.cursor_row >= count:
            self.cursor_row = count - 1
        self.refresh()

    def restyle(self) -> None:
        """Flags changed but not the rows: repaint from scratch."""
        self._strip_cache.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._blended_styles.clear()
        self._base_style = None
        self._looks.clear()
        self._strip_cache.clear()

    # -- cursor --------------------------------------------------------------------------------

    def _first_message_row(self, row: int, step: int) -> int:
        """The nearest row at or after ``row`` (in direction ``step``) that shows a message."""
        state = self._state
        if state is None or not state.rows:
            return 0
        rows = state.rows
        row = max(0, min(row, len(rows) - 1))
        probe = row
        while 0 <= probe < len(rows):
            if rows[probe] >= 0:
                return probe
            probe += step
        probe = row
        while 0 <= probe < len(rows):
            if rows[probe] >= 0:
                return probe
            probe -= step
        return row

    def move_cursor_to_row(self, row: int, *, step: int = 1, post: bool = True) -> None:
        """Put the cursor on ``row`` (or the nearest message row) and scroll it into view."""
        if not self.row_count:
            return
        row = self._first_message_row(row, step)
        old = self.cursor_row
        self.cursor_row = row
        if old != row:
            self._refresh_row(old)
            self._refresh_row(row)
        self.scroll_cursor_visible()
        message_index = self._row_message(row)
        if post and message_index is not None:
            if self.cursor_moved is not None:
                self.cursor_moved(message_index)
            self.post_message(self.Highlighted(self, message_index))

    def select_message(
        self, message_index: int, *, post: bool = False, center: bool = False
    ) -> None:
        """Move the cursor to a message (``post``: also announce it with :class:`Highlighted`)."""
        state = self._state
        if state is None or not state.message_count:
            return
        message_index = max(0, min(message_index, state.message_count - 1))
        self.move_cursor_to_row(state.row_of_message(message_index), post=post)
        if center:
            self.scroll_to(
                y=max(0, self.cursor_row - self.scrollable_content_region.height // 2),
                animate=False,
                immediate=True,
            )

    def scroll_cursor_visible(self) -> None:
        height = self.scrollable_content_region.height
        if height <= 0:
            return
        top = int(self.scroll_y)
        row = self.cursor_row
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False, immediate=True)

    @property
    def at_end(self) -> bool:
        """The cursor is on the last message (live tail follows only then)."""
        state = self._state
        if state is None or not state.message_count:
            return True
        return self.selected_message == state.message_count - 1

    def _refresh_row(self, row: int) -> None:
        # The cache key holds the cursor flag, so both looks of a row stay valid: just repaint.
        self.refresh_line(row)

    def action_cursor_up(self) -> None:
        self.move_cursor_to_row(self.cursor_row - 1, step=-1)

    def action_cursor_down(self) -> None:
        self.move_cursor_to_row(self.cursor_row + 1, step=1)

    def action_page_up(self) -> None:
        page = max(1, self.scrollable_content_region.height - 1)
        self.move_cursor_to_row(self.cursor_row - page, step=-1)

    def action_page_down(self) -> None:
        page = max(1, self.scrollable_content_region.height - 1)
        self.move_cursor_to_row(self.cursor_row + page, step=1)

    def action_first(self) -> None:
        self.move_cursor_to_row(0, step=1)

    def action_last(self) -> None:
        self.move_cursor_to_row(self.row_count - 1, step=-1)

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        row = int(self.scroll_y) + offset.y
        if 0 <= row < self.row_count:
            self.focus()
            self.move_cursor_to_row(row)

    # -- painting --------------------------------------------------------------------------------

    def when_painted(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` right after the list's next frame is out (for work that would
        otherwise share the interpreter with that frame: a load, a replay's next step).

        A list laid out with no row on screen (a terminal too small for it), or hidden, paints
        no line, so there is no frame to wait for: the callback runs after the current refresh.
        (Before its first layout a list has no width either: it waits for that frame.)"""
        laid_out = self.size.width > 0
        if not self.display or (laid_out and self.scrollable_content_region.height <= 0):
            self.call_after_refresh(callback)
            return
        self.painted = False
        self._when_painted.append(callback)

    def release_waiting(self) -> None:
        """Run now the callbacks waiting for a frame that will not come (the screen is left)."""
        waiting, self._when_painted = self._when_painted, []
        for callback in waiting:
            callback()

    def render_line(self, y: int) -> Strip:
        if not self.painted:
            self.painted = True
            waiting, self._when_painted = self._when_painted, []
            for callback in waiting:  # (run once the frame being drawn is out)
                self.call_after_refresh(callback)
        row = int(self.scroll_y) + y
        width = self.scrollable_content_region.width
        state = self._state
        if state is None or row >= len(state.rows):
            if state is not None and not state.rows and y == 0:
                style = self.rich_style + self._style("message-list--empty")
                return Strip([Segment(" no messages in this session".ljust(width), style)])
            return Strip.blank(width, self.rich_style)
        is_cursor = row == self.cursor_row
        key = (row, width, is_cursor)
        drawn = self._strip_cache.get(key)
        number = self._result_number
        if drawn is not None and drawn.result_number != number:
            shows = self._row_shows(state, row)
            drawn = _DrawnRow(number, shows, drawn.strip) if shows == drawn.shows else None
            if drawn is not None:
                self._strip_cache[key] = drawn
        if drawn is None:
            # Cache the strip with its selection offsets applied: the plain one is dropped at once
            # (a cached row is then one strip for the garbage collector to walk, not two).
            strip = self._render_row(state, row, width, is_cursor).apply_offsets(0, row)
            drawn = _DrawnRow(number, self._row_shows(state, row), strip)
            self._strip_cache[key] = drawn
        return drawn.strip

    def _row_shows(self, state: SessionState, row: int) -> tuple[object, ...]:
        """What :meth:`_render_row` draws of row ``row`` that a new result of the same session
        can change (the message itself, its role and its text, stay)."""
        base = self._rich_base()
        value = state.rows[row]
        if value < 0:
            marker = state.markers[-1 - value]
            return (value, marker.kind, marker.text, base)
        message_state = state.message_state(value)
        tokens = (
            None
            if message_state is None
            else (
                message_state.tokens_after_truncation
                if message_state.truncated
                else message_state.tokens,
                message_state.provenance,
            )
        )
        return (value, state.flags(value), tokens, self._index_width, base)

    def _style(self, name: str) -> Style:
        style = self._blended_styles.get(name)
        if style is None:
            style = self._blended_styles[name] = blended_component_style(self, name)
        return style

    def _render_row(self, state: SessionState, row: int, width: int, is_cursor: bool) -> Strip:
        base = self._rich_base()
        value = state.rows[row]
        if value < 0:
            marker = state.markers[-1 - value]
            style = base + self._style(
                "message-list--split" if marker.kind == "split" else "message-list--boundary-rule"
            )
            text = f"── {marker.text} "
            text = set_cell_size(text + "─" * max(0, width - cell_len(text)), width)
            return Strip([Segment(text, style)], width)

        message = state.message(value)
        flags = state.flags(value)
        message_state = state.message_state(value)
        look = self._row_look(base, flags, is_cursor, message.role)

        index_text = f"{value:>{self._index_width}} "
        role = role_label(message)
        if message_state is not None:
            tokens = (
                message_state.tokens_after_truncation
                if message_state.truncated
                else message_state.tokens
            )
            tokens_text = f"{compact_tokens(tokens):>6}"
            mark = PROVENANCE_MARKS.get(message_state.provenance, "?")
        else:
            tokens_text = f"{'·':>6}"
            mark = " "

        segments = [
            Segment(look.gutter, look.gutter_style),
            Segment(index_text, look.index),
            Segment(f"{role:<9} ", look.role),
            Segment(tokens_text, look.tokens),
            Segment(f" {mark} ", look.provenance),
            Segment(look.glyphs, look.flags),
        ]
        used = sum(cell_len(s.text) for s in segments)
        remaining = width - used
        if remaining > 0:
            preview = message_preview(message)
            segments.append(Segment(fit_cells(preview, remaining), look.text))
        return fit_strip(Strip(segments), width, look.text)

    def _row_look(self, base: Style, flags: int, is_cursor: bool, role: Role) -> _RowLook:
        """The styles of a row's columns for its flags (computed once per combination)."""
        key = (base, flags, is_cursor, role)
        look = self._looks.get(key)
        if look is not None:
            return look
        row_style = base
        for flag, component in (
            (RowFlag.SUMMARY, "message-list--summary"),
            (RowFlag.SYNTHETIC, "message-list--synthetic"),
            (RowFlag.META, "message-list--meta"),
            (RowFlag.BOUNDARY, "message-list--boundary"),
            (RowFlag.PROTECTED, "message-list--protected"),
            (RowFlag.TRUNCATED, "message-list--truncated"),
            (RowFlag.PRUNED, "message-list--pruned"),
            (RowFlag.MATCH, "message-list--match"),
            (RowFlag.OVERFLOW, "message-list--overflow"),
        ):
            if flags & flag:
                row_style += self._style(component)
        # the cursor goes on top of every column's own colour, as in Textual's lists
        cursor = self._style("message-list--cursor") if is_cursor else Style()

        def styled(component: str) -> Style:
            return row_style + self._style(component) + cursor

        if flags & RowFlag.HEAD:
            gutter, gutter_style = "▌", row_style + cursor + self._style("message-list--head")
        elif flags & RowFlag.TAIL:
            gutter, gutter_style = "▌", row_style + cursor + self._style("message-list--tail")
        else:
            gutter, gutter_style = " ", row_style + cursor
        glyphs = "".join(g for flag, g, _ in _FLAG_GLYPHS if flags & flag)[:3]
        look = self._looks[key] = _RowLook(
            gutter=gutter,
            gutter_style=gutter_style,
            index=styled("message-list--index"),
            role=styled(f"message-list--role-{role}"),
            tokens=styled("message-list--tokens"),
            provenance=styled("message-list--provenance"),
            glyphs=f"{glyphs:<3} ",
            flags=styled("message-list--flags"),
            text=row_style + cursor,
        )
        return look
