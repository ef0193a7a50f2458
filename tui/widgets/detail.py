"""The detail pane: everything about the selected message.

Sections, top to bottom: what the message is; its tokens (recorded / counted / estimated, and
what the policy would send); the policy's decision about it (truncated, pruned, protected, head
or tail of a compaction) with the reason; at a compaction, why it ran, what it cost and what its
summary forgot; what the model would see under the active policy for
a tool output (the truncated preview, its marker and the would-be spill path); and the full
message, paged so a 50 MB tool output shows its first page at once (``m`` shows more).

Like the message list, the pane is drawn with the line API: ``render_line`` hands out
:class:`~textual.strip.Strip` rows, so moving through messages never re-lays-out the screen (a
tall auto-height widget would, at every key). The rows come from a
:class:`~tui.widgets.strip_window.StripWindow`, a window onto the sections: a key press renders
only the rows the pane shows, the rest is measured in short steps after that frame, and at most
:data:`~tui.widgets.strip_window.CACHE_ROWS` rendered rows are kept whatever the size of the
message (see :meth:`DetailPane._render_sections`).
The cheap parts are drawn the moment the cursor moves; the tiktoken count and the truncation
preview run in a thread worker (group ``detail``) once the cursor rests.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from rich.console import Console, Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message as TextualMessage
from textual.strip import Strip
from textual.timer import Timer
from textual.worker import get_current_worker

from core.model.session import Message, Role
from core.model.tokens import (
    arguments_text,
    estimate_chars4,
    get_counter,
    load_encoding,
    message_text,
)
from core.policy import TruncationPolicy
from tui.figures import (
    call_label,
    check_line,
    not_replayed_reason,
    recorded_compaction_figures,
    recorded_trigger,
)
from tui.malloc_arenas import release_free_memory
from tui.screen_state import SessionState
from tui.widgets.forgotten_view import ForgottenStyles, describe
from tui.widgets.message_list import (
    PROVENANCE_MARKS,
    StyledScrollView,
    blended_component_style,
    fit_strip,
    role_label,
)
from tui.widgets.strip_window import Piece, StripWindow, flatten, text_pieces
from tui.widgets.token_grid import TokenGrid

BODY_PAGE_LINES = 200
"""Lines of the full message shown per page."""
BODY_PAGE_CHARS = 24_000
"""Characters shown per page (a single huge line is cut here)."""
COUNT_ENCODING = "tiktoken:cl100k_base"
"""The tokenizer of the "counted" figure when the policy's estimator is not a tokenizer."""
_LOADED_TOKENIZERS: set[str] = set()
"""The tokenizers a count in this process has used."""
SLOW_FACTS_DELAY_S = 0.12
"""The tokenizer count and the truncation preview start once the cursor has rested this long."""
COUNT_PIECE_CHARS = 32_768
"""A longer text is counted this many characters at a time (cut at a line break or a space when
there is one), uncached: the tokenizer never holds a huge text's tokens at once, the worker
gives the UI thread the interpreter between pieces and stops at the next one once cancelled."""
MEASURE_STEP_S = 0.015
"""Longest step of measuring the rest of a message after its first rows are shown (the UI
handles keys between two steps)."""
FIRST_MEASURE_S = 0.05
"""Longest a redraw measures before its first frame: a pane scrolled far into a long message
shows the rows it has, and the rest as the steps reach them."""
ROW_MEASURE_S = 0.02
"""Longest a frame measures to reach rows the pane was scrolled to before they were measured
(the steps after the frame do the rest)."""


@dataclass(frozen=True, slots=True)
class SlowFacts:
    """What the worker computed for one message."""

    message_index: int
    counted: int | None
    counted_with: str
    counted_note: str | None
    preview: RenderableType | None
    basis: FactsBasis | None = None
    """What they were computed from (None: unknown, computed again after a replay)."""


@dataclass(frozen=True, slots=True)
class FactsBasis:
    """What a message's slow facts depend on: the message (of the session shown), the counting
    encoding and, for a tool output (whose preview is its truncation), the truncation limits. A
    replay under a policy that keeps these (a change of the protected turns, of the reserve, of
    the truncation with another message shown …) leaves the count and the preview as they are."""

    session: object
    message_index: int
    estimator: str
    truncation: TruncationPolicy | None
    """None: the message has no tool output, so no preview (nothing depends on the limits)."""

    def same(self, other: FactsBasis) -> bool:
        return (
            self.session is other.session
            and self.message_index == other.message_index
            and self.estimator == other.estimator
            and self.truncation == other.truncation
        )


def facts_basis(state: SessionState, index: int) -> FactsBasis:
    """The basis of the slow facts of message ``index`` under ``state``'s policy now."""
    policy = state.policy
    message = state.message(index)
    previewed = message.role is Role.TOOL and message.tool_result is not None
    truncation = policy.truncation.model_copy(deep=True) if previewed else None
    return FactsBasis(state.session, index, policy.estimator, truncation)


@dataclass(frozen=True, slots=True)
class PreviewStyles:
    """Theme styles for the preview, taken on the UI thread and handed to the worker."""

    heading: Style | str = "bold"
    muted: Style | str = "dim"
    error: Style | str = "red"
    path: Style | str = "underline"


@dataclass(frozen=True, slots=True)
class Section:
    """One block of the pane: a renderable, optionally drawn with a bar on its left."""

    name: str
    renderable: RenderableType
    bar: bool = False


class DetailPane(StyledScrollView, can_focus=True):
    """The selected message in full, with the policy's decision about it."""

    DEFAULT_CSS = """
    DetailPane {
        overflow-x: hidden;
        overflow-y: scroll;
        scrollbar-size-vertical: 1;
    }
    DetailPane > .detail-pane--title { color: $text-primary; text-style: bold; }
    DetailPane > .detail-pane--heading { text-style: bold; }
    DetailPane > .detail-pane--muted { color: $text-muted; }
    DetailPane > .detail-pane--label { color: $text-muted; }
    DetailPane > .detail-pane--bar { color: $warning; }
    DetailPane > .detail-pane--error { color: $text-error; text-style: bold; }
    DetailPane > .detail-pane--decision { color: $text-accent; text-style: bold; }
    DetailPane > .detail-pane--path { color: $text-secondary; text-style: underline; }
    DetailPane > .detail-pane--kept { color: $text-success; }
    DetailPane > .detail-pane--warning { color: $text-warning; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "detail-pane--title",
        "detail-pane--heading",
        "detail-pane--muted",
        "detail-pane--label",
        "detail-pane--bar",
        "detail-pane--error",
        "detail-pane--decision",
        "detail-pane--path",
        "detail-pane--kept",
        "detail-pane--warning",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "more", "More text", show=False, id="detail.more"),
        Binding("left", "screen.move_call(-1)", "Prev call", show=False, id="detail.prev-call"),
        Binding("right", "screen.move_call(1)", "Next call", show=False, id="detail.next-call"),
    ]

    class SlowFactsReady(TextualMessage):
        def __init__(self, facts: SlowFacts) -> None:
            super().__init__()
            self.facts = facts

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, classes=classes)
        self._state: SessionState | None = None
        self.message_index: int | None = None
        self._pages_shown = 1
        self._slow: SlowFacts | None = None
        self._slow_timer: Timer | None = None
        self.slow_facts_wait: Callable[[], bool] = lambda: False
        """While this answers True (the screen is opening its session, reading the file and then
        replaying it a first time, and the message shown is the one selected at open), the
        tokenizer count and the preview are not started: loading the tokenizer alone takes the
        interpreter from the load and the replay for a quarter of a second. The owner calls
        :meth:`refresh_decision` once it answers False."""
        self._sections: list[Section] = []
        self._window: StripWindow | None = None
        """The rows of the sections, rendered as they are shown (a few screens kept)."""
        self._rendered_width = -1
        self._styles: dict[str, Style] = {}

    # -- public ------------------------------------------------------------------------------

    def set_state(self, state: SessionState | None) -> None:
        self._state = state
        self.message_index = None
        self._slow = None  # (another session's: it holds that session)
        if self._slow_timer is not None:
            self._slow_timer.stop()
            self._slow_timer = None
        if state is None or not state.message_count:
            if self.is_attached:
                self._show_empty()
            else:  # (its screen closed: nothing to draw, only what showed a message to let go)
                self.message_index = None
                self._sections = []
                self._window = None

    def show(
        self, message_index: int | None, *, force: bool = False, at_once: bool = False
    ) -> None:
        """Show ``message_index`` (``force``: redraw even if it is already shown; ``at_once``:
        its count and preview start now, not once the cursor has rested)."""
        state = self._state
        if state is None or message_index is None or not 0 <= message_index < state.message_count:
            self._show_empty()
            return
        if message_index == self.message_index and not force:
            return
        if message_index != self.message_index:
            self._pages_shown = 1
            self.scroll_to(y=0, animate=False, immediate=True)
            self._slow = None
        self.message_index = message_index
        self._draw()
        if self._slow_timer is not None:
            self._slow_timer.stop()
            self._slow_timer = None
        if self.slow_facts_wait():
            return  # (started by the refresh_decision once the session is opened)
        styles = PreviewStyles(
            heading=self._style("detail-pane--heading"),
            muted=self._style("detail-pane--muted"),
            error=self._style("detail-pane--error"),
            path=self._style("detail-pane--path"),
        )
        basis = facts_basis(state, message_index)
        if at_once:
            self._compute_slow(state, basis, styles)
            return
        self._slow_timer = self.set_timer(
            SLOW_FACTS_DELAY_S, lambda: self._compute_slow(state, basis, styles)
        )

    def refresh_decision(self, *, at_once: bool = False) -> None:
        """The replay result changed: redraw the decision and the preview of the same message.

        The count and the preview are worked out again only when what they depend on changed
        (:class:`FactsBasis`): otherwise the pane is drawn once, with them, rather than with
        "…" and again once the worker has counted the same text again. ``at_once``: what waited
        for the session to open starts now (no cursor to wait for)."""
        index = self.message_index
        if index is None:
            return
        slow, state = self._slow, self._state
        if (
            slow is not None
            and slow.basis is not None
            and state is not None
            and slow.message_index == index
            and slow.basis.same(facts_basis(state, index))
        ):
            self._draw()
            return
        self._slow = None
        self.show(index, force=True, at_once=at_once)

    def section_text(self, name: str, width: int = 100) -> str:
        """One section as plain text ("" when it is not shown)."""
        for section in self._sections:
            if section.name == name:
                return _plain(section.renderable, width)
        return ""

    def as_text(self, width: int = 100) -> str:
        """Every section as plain text (for tests and for copying)."""
        return "\n".join(_plain(section.renderable, width) for section in self._sections)

    @property
    def line_count(self) -> int:
        """Lines of the pane (measuring whatever is still pending)."""
        window = self._window
        if window is None:
            return 0
        window.measure(None)
        return window.rows

    @property
    def measured(self) -> bool:
        """Every row of the sections is measured (the scroll range is the whole of them)."""
        return self._window is None or self._window.complete

    @property
    def held_rows(self) -> int:
        """Rendered rows the pane keeps right now (bounded, whatever the message's size)."""
        return 0 if self._window is None else self._window.held_rows

    def all_rows(self) -> list[Strip]:
        """Every row of the pane, rendered (for tests: keeps no more than a screen does)."""
        return [] if self._window is None else self._window.all_rows()

    def action_more(self) -> None:
        self._pages_shown += 1
        self._draw()

    # -- sections ------------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = blended_component_style(self, name)
        return style

    def _show_empty(self) -> None:
        self.message_index = None
        self._sections = [
            Section("head", Text("No message selected.", style=self._style("detail-pane--muted")))
        ]
        self._render_sections()

    def _draw(self) -> None:
        state = self._state
        index = self.message_index
        if state is None or index is None:
            return
        message = state.message(index)
        sections = [
            Section("head", self._head(state, message)),
            Section("tokens", self._tokens(state, message)),
            Section("decision", self._decision(state, message)),
        ]
        forgotten = self._forgotten(state, message)
        if forgotten is not None:
            sections.append(Section("forgotten", forgotten, bar=True))
        if message.role is Role.TOOL and message.tool_result is not None:
            slow = self._slow
            if slow is not None and slow.message_index == index and slow.preview is not None:
                preview = slow.preview
            else:
                preview = Group(
                    Text("What the model sees", style=self._style("detail-pane--heading")),
                    Text("…", style=self._style("detail-pane--muted")),
                )
            sections.append(Section("model-sees", preview, bar=True))
        sections.append(Section("body", self._body(message)))
        self._sections = sections
        self._render_sections()

    def _head(self, state: SessionState, message: Message) -> Text:
        muted = self._style("detail-pane--muted")
        text = Text(style=self._style("detail-pane--title"))
        text.append(f"#{message.index} {role_label(message)}")
        if message.role is Role.TOOL and message.tool_result is not None:
            text.append(f" · {message.tool_result.tool_name or 'tool'}")
            if message.tool_result.is_error:
                text.append(" · error", style=self._style("detail-pane--error"))
        if message.model:
            text.append(f" · {message.model}", style=muted)
        if message.timestamp:
            text.append(f" · {message.timestamp}", style=muted)
        call = state.call_for_message(message.index)
        if call is not None and state.call_count:
            at = state.message_for_call(call)
            where = call_label(call)
            if at is not None and at != message.index:
                where = f"{'after' if message.index > at else 'before'} {where}"
            text.append(f" · {where}", style=muted)
        if message.source_line is not None:
            text.append(f" · line {message.source_line}", style=muted)
        return text

    def _tokens(self, state: SessionState, message: Message) -> RenderableType:
        muted = self._style("detail-pane--muted")
        table = TokenGrid(self._style("detail-pane--label"), muted)
        message_state = state.message_state(message.index)
        if message_state is not None:
            mark = PROVENANCE_MARKS.get(message_state.provenance, "?")
            table.add_row(
                "replay", f"{message_state.tokens:,} {mark}", str(message_state.provenance)
            )
            if message_state.truncated:
                table.add_row(
                    "after truncation",
                    f"{message_state.tokens_after_truncation:,} {mark}",
                    "what the policy would send",
                )
        text = message_text(message)
        slow = self._slow
        if slow is not None and slow.message_index == message.index:
            if slow.counted is not None:
                table.add_row("counted", f"{slow.counted:,} C", slow.counted_with)
            if slow.counted_note:
                table.add_row("", "", slow.counted_note)
        else:
            table.add_row("counted", "…", "tokenizer")
        table.add_row("estimated", f"{estimate_chars4(text):,} ~", "chars/4")
        if message.usage is not None:
            usage = message.usage
            parts = [f"input {usage.input:,}"]
            if usage.cache_read:
                parts.append(f"cache read {usage.cache_read:,}")
            if usage.cache_write:
                parts.append(f"cache write {usage.cache_write:,}")
            parts.append(f"output {usage.output:,}")
            table.add_row(
                "recorded call",
                f"{usage.context_tokens:,} R",
                "context of this call: " + ", ".join(parts),
            )
        return Group(Text("Tokens", style=self._style("detail-pane--heading")), table)

    def _decision(self, state: SessionState, message: Message) -> RenderableType:
        heading = self._style("detail-pane--heading")
        key = self._style("detail-pane--decision")
        muted = self._style("detail-pane--muted")
        lines: list[Text] = [Text(f"Under policy “{state.policy.name}”", style=heading)]
        message_state = state.message_state(message.index)
        point = state.point_of_message(message.index)
        if point is not None:  # the check log of this call (analyze --json: checks[])
            line = check_line(point, state.policy)
            lines.append(Text(line, style=key if point.check_fired else muted))
        if state.result is None:
            waiting = (
                "replayed once the whole file is read"
                if state.session.metadata.get("partial") and not state.replay_error
                else "replaying…"
            )
            lines.append(Text(state.replay_error or waiting, style=muted))
            return Group(*lines)
        if message_state is None:
            lines.append(Text("not in the replay (the session grew since)", style=muted))
            return Group(*lines)
        if message_state.truncated:
            lines.append(
                Text.assemble(("✂ truncated", key), f"  {message_state.truncation_note or ''}")
            )
        if message_state.pruned:
            lines.append(Text.assemble(("× pruned", key), f"  {message_state.prune_reason or ''}"))
        elif message_state.protected:
            lines.append(
                Text.assemble(
                    ("◆ protected", key),
                    f"  {message_state.prune_reason or 'protected from pruning'}",
                )
            )
        elif message_state.prune_reason:
            lines.append(Text.assemble(("kept", key), f"  {message_state.prune_reason}"))
        from core.insights.named_figures import compaction_at  # (with the replay: loaded)

        event = state.event(message_state.summarised_by)
        if event is not None:
            at = compaction_at(state.session, event, None)
            lines.append(
                Text.assemble(
                    ("▌ head", key),
                    f"  summarised by the compaction at message {at}: {event.reason}",
                )
            )
        event = state.event(message_state.kept_by)
        if event is not None:
            at = compaction_at(state.session, event, None)
            lines.append(
                Text.assemble(("▌ tail", key), f"  kept verbatim by the compaction at message {at}")
            )
        for event in state.result.events:
            if event.message_index == message.index and event.kind in ("compact", "overflow"):
                lines.append(Text.assemble((f"⚑ {event.kind}", key), f"  {event.reason}"))
        lines.extend(self._unapplied(state, message))
        lines.append(
            Text(
                "in context at the end"
                if message_state.in_context_at_end
                else "not in context at the end",
                style=muted,
            )
        )
        return Group(*lines)

    def _unapplied(self, state: SessionState, message: Message) -> list[Text]:
        """The recorded compactions drawn above this message that the replay did not apply:
        told as recorded, with their own figures, and why the replay did not make them."""
        key = self._style("detail-pane--decision")
        muted = self._style("detail-pane--muted")
        lines: list[Text] = []
        for stop in state.unapplied_at(message.index):
            k = stop.recorded_index
            if k is None:
                continue
            compaction = state.session.compactions[k]
            trigger, evidence = recorded_trigger(state.session, state.result, k)
            figures = recorded_compaction_figures(state.session, state.result, k)
            lines.append(
                Text.assemble(
                    (f"⚑ recorded compaction #{k}", key),
                    f"  {trigger} · {figures} (recorded)",
                )
            )
            lines.append(Text(f"  {not_replayed_reason(compaction, state.policy)}", style=muted))
            if evidence:
                lines.append(Text(f"  {evidence}", style=muted))
        return lines

    def _forgotten(self, state: SessionState, message: Message) -> RenderableType | None:
        """At a compaction: why it ran, what it cost and what its summary forgot (the compaction
        screen's text, :func:`~tui.widgets.forgotten_view.describe`)."""
        result = state.result
        if result is None:
            return None
        heading = Text("What the compaction forgot", style=self._style("detail-pane--heading"))
        for stop in state.compaction_stops():
            if stop.message_index != message.index:
                continue
            insights = state.insights
            if insights is None or insights.reports is None:
                muted = self._style("detail-pane--muted")
                return Group(heading, Text("working it out…", style=muted))
            report = (
                insights.report_for(stop.event_id, stop.event)
                if stop.event is not None
                else insights.report_for_recorded(stop.recorded_index)
            )
            if report is None:
                continue
            styles = ForgottenStyles(
                title=self._style("detail-pane--heading"),
                muted=self._style("detail-pane--muted"),
                kept=self._style("detail-pane--kept"),
                dropped=self._style("detail-pane--error"),
                warning=self._style("detail-pane--warning"),
            )
            return Group(heading, describe(report, styles))
        return None

    def _body(self, message: Message) -> RenderableType:
        return message_body(
            message,
            self._pages_shown,
            heading=self._style("detail-pane--heading"),
            muted=self._style("detail-pane--muted"),
            error=self._style("detail-pane--error"),
        )

    # -- painting ------------------------------------------------------------------------------

    def _content_width(self) -> int:
        return max(10, self.scrollable_content_region.width)

    def _render_sections(self) -> None:
        """Show the sections: the rows the pane shows at once, the rest measured after the frame.

        A key press pays only for the visible rows (a tool output of 200 wrapped lines would
        otherwise be laid out in full at every cursor move); the rest is measured in steps of at
        most :data:`MEASURE_STEP_S` after the next screen update (on demand, if the pane is
        scrolled first), and the scroll range grows as it goes. Rendered rows are kept for a few
        screens only: whatever the size of the message, the pane holds a window onto it.
        """
        if not self.is_mounted:
            return
        width = self._content_width()
        self._base_style = None
        self._rendered_width = width
        window = self._window = StripWindow(self._pieces(width), self._render_piece)
        window.measure(
            int(self.scroll_y) + self.scrollable_content_region.height, budget_s=FIRST_MEASURE_S
        )
        if window.complete:
            self._set_height(window.rows)
        else:
            self.call_after_refresh(self._measure_more, window)
        self.refresh()

    def _measure_more(self, window: StripWindow) -> None:
        """One step of measuring the rest of the rows, then the next step (as a new message)."""
        if window is not self._window or self._rendered_width != self._content_width():
            return  # another message (or width) was drawn since
        top = int(self.scroll_y)
        waiting = top + self.scrollable_content_region.height > window.rows  # rows not shown yet
        window.measure(budget_s=MEASURE_STEP_S)
        self._set_height(window.rows)
        if waiting:
            self.refresh()
        if not window.complete:
            self.call_later(self._measure_more, window)

    def _pieces(self, width: int) -> Iterator[Piece]:
        """The sections as a stream of small renderables, in drawing order."""
        for k, section in enumerate(self._sections):
            if k:
                yield Piece(None)
            inner = max(1, width - 2) if section.bar else width
            for part in flatten(section.renderable):
                for chunk in text_pieces(part, inner):
                    yield Piece(chunk, section.bar)

    def _render_piece(self, piece: Piece) -> list[Strip]:
        """The rows of one piece at the width the sections are drawn for."""
        width = self._rendered_width
        console = self.app.console
        base = self._rich_base()
        if piece.renderable is None:
            return [Strip.blank(width, base)]
        if piece.bar:
            bar_style = base + self._style("detail-pane--bar")
            options = console.options.update(width=max(1, width - 2), height=None)
            return [
                Strip([Segment("▌ ", bar_style), *line], width)
                for line in console.render_lines(piece.renderable, options, style=base, pad=True)
            ]
        options = console.options.update(width=width, height=None)
        return [
            Strip(line, width)
            for line in console.render_lines(piece.renderable, options, style=base, pad=True)
        ]

    def _set_height(self, height: int) -> None:
        size = Size(self._content_width(), height)
        if size == self.virtual_size:
            return
        # The scrollbar is always shown (overflow-y: scroll in DEFAULT_CSS), so the content width
        # never changes with the height: update the scroll range without a screen re-layout.
        self.set_reactive(DetailPane.virtual_size, size)
        self._scroll_update(size)

    def render_line(self, y: int) -> Strip:
        width = self._content_width()
        base = self._rich_base()
        window = self._window
        # measured on demand when scrolled before the rest was measured
        row = window.row(int(self.scroll_y) + y, budget_s=ROW_MEASURE_S) if window else None
        if row is not None:
            return fit_strip(row, width, base)
        return Strip.blank(width, base)

    def on_resize(self, event: events.Resize) -> None:
        if self._content_width() != self._rendered_width:
            self._render_sections()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._base_style = None
        if self.is_mounted:
            self.call_later(self._redraw_after_style)

    def _redraw_after_style(self) -> None:
        if self.message_index is not None:
            self._draw()
        else:
            self._show_empty()

    # -- slow facts --------------------------------------------------------------------------------

    @work(
        thread=True,
        exclusive=True,
        group="detail",
        exit_on_error=False,
        description="Counting the selected message",
    )
    def _compute_slow(self, state: SessionState, basis: FactsBasis, styles: PreviewStyles) -> None:
        worker = get_current_worker()
        index = basis.message_index
        message = state.message(index)
        text = message_text(message)
        estimator = basis.estimator
        spec = estimator if estimator.startswith("tiktoken:") else COUNT_ENCODING
        counted: int | None = None
        note: str | None = None
        try:
            counter = get_counter(spec)
            note = counter.note
            if len(text) <= COUNT_PIECE_CHARS:
                counted = counter.count_alone(text)  # (no tokenizer loaded for a short text)
            else:
                counted = count_in_pieces(text, spec, lambda: worker.is_cancelled)
        except Exception as exc:  # no tokenizer available offline: say so, keep the rest
            note = f"cannot count: {exc}"
        if spec not in _LOADED_TOKENIZERS:  # (its first count loaded it, or its token table)
            _LOADED_TOKENIZERS.add(spec)
            release_free_memory()  # (what its tables were built from)
        if worker.is_cancelled:
            return
        preview: RenderableType | None = None
        if message.role is Role.TOOL and message.tool_result is not None:
            preview = model_sees(state, message, styles, basis.truncation)
        if worker.is_cancelled:
            return
        self.post_message(
            self.SlowFactsReady(
                SlowFacts(index, counted, spec.removeprefix("tiktoken:"), note, preview, basis)
            )
        )

    def on_detail_pane_slow_facts_ready(self, event: SlowFactsReady) -> None:
        event.stop()
        if event.facts.message_index != self.message_index:
            return
        self._slow = event.facts
        self._draw()


def count_in_pieces(text: str, spec: str, cancelled: Callable[[], bool]) -> int | None:
    """Tokens of ``text`` counted :data:`COUNT_PIECE_CHARS` characters at a time (None when
    ``cancelled()`` says so between two pieces). A cut falls on a line break or a space where
    there is one, where the tokenizer would split the text anyway."""
    encoding, _note = load_encoding(spec.removeprefix("tiktoken:"))
    total = 0
    start = 0
    size = len(text)
    while start < size:
        if cancelled():
            return None
        stop = min(size, start + COUNT_PIECE_CHARS)
        if stop < size:
            newline = text.rfind("\n", start, stop)
            space = text.rfind(" ", start, stop)
            if newline > start:
                stop = newline + 1  # after the break
            elif space > start:
                stop = space  # before the space, which goes with the word after it

        total += len(encoding.encode_ordinary(text[start:stop]))
        start = stop
    return total


def _plain(renderable: RenderableType, width: int) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def model_sees(
    state: SessionState,
    message: Message,
    styles: PreviewStyles | None = None,
    truncation: TruncationPolicy | None = None,
) -> RenderableType:
    """The tool output as the active policy would send it (simulated: nothing is written), by
    the very call the replay makes (:func:`core.replay.sent_output`); ``truncation``: these
    limits in place of the policy's."""
    from core.replay import sent_output  # (the replay package: on first use, in the worker)

    styles = styles or PreviewStyles()
    assert message.tool_result is not None
    title = Text("What the model sees", style=styles.heading)
    try:
        result = sent_output(message, truncation or state.policy.truncation)
    except Exception as exc:  # a bad policy value must not break the pane
        return Group(title, Text(f"cannot simulate truncation: {exc}", style=styles.error))
    explain = Text(result.explain(), style=styles.muted)
    if not result.truncated:
        return Group(title, explain)
    parts: list[RenderableType] = [title, explain]
    if result.output_path:
        parts.append(
            Text.assemble(("would spill to ", styles.muted), (result.output_path, styles.path))
        )
    shown, more = _page(result.content, 1)
    body = Text(shown)
    if more:
        body.append(f"\n… {more}", style=styles.muted)
    parts.append(body)
    return Group(*parts)


def _page(text: str, pages: int) -> tuple[str, str]:
    """The first ``pages`` pages of ``text`` and a note about what is left ("" when nothing)."""
    max_lines = BODY_PAGE_LINES * pages
    max_chars = BODY_PAGE_CHARS * pages
    cut = text[:max_chars]
    end = -1
    newlines = 0
    pos = 0
    while newlines < max_lines:
        nxt = cut.find("\n", pos)
        if nxt < 0:
            break
        newlines += 1
        end = nxt
        pos = nxt + 1
    if newlines >= max_lines and end >= 0:
        cut = cut[:end]
    if len(cut) >= len(text):
        return text, ""
    # counted in place: a copy of the rest of a 50 MB output would cost more than the page
    more_lines = text.count("\n", len(cut))
    more_chars = len(text) - len(cut)
    return cut, f"{more_lines:,} more lines, {more_chars:,} more characters (m: more)"


def message_body(
    message: Message,
    pages: int = 1,
    *,
    heading: Style | str = "bold",
    muted: Style | str = "dim",
    error: Style | str = "red",
) -> RenderableType:
    """The full message, paged."""
    parts: list[RenderableType] = [Text("Message", style=heading)]
    if message.reasoning:
        shown, more = _page(message.reasoning, pages)
        parts.append(Text("thinking", style=muted))
        parts.append(Text(shown + (f"\n… {more}" if more else ""), style="italic"))
    if message.text:
        shown, more = _page(message.text, pages)
        body = Text(shown)
        if more:
            body.append(f"\n… {more}", style=muted)
        parts.append(body)
    for call in message.tool_calls:
        shown, more = _page(arguments_text(call.arguments), pages)
        parts.append(Text.assemble((f"→ {call.name}", heading), f" ({call.id})"))
        parts.append(Text(shown + (f"\n… {more}" if more else ""), style=muted))
    if message.tool_result is not None:
        output = message.tool_result.output
        shown, more = _page(output, pages)
        lines = output.count("\n") + 1 if output else 0
        parts.append(Text(f"output · {lines:,} lines · {len(output):,} characters", style=muted))
        body = Text(shown)
        if more:
            body.append(f"\n… {more}", style=muted)
        parts.append(body)
    if message.error:
        parts.append(Text(f"error: {message.error}", style=error))
    if message.stop_reason:
        parts.append(Text(f"stop reason: {message.stop_reason}", style=muted))
    if len(parts) == 1:
        parts.append(Text("(empty)", style=muted))
    return Group(*parts)
