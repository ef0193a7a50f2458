"""The detail pane: everything about the selected message.

Sections, top to bottom: what the message is; its tokens (recorded / counted / estimated, and
what the policy would send); the policy's decision about it (truncated, pruned, protected, head
or tail of a compaction) with the reason; what the model would see under the active policy for
a tool output (the truncated preview, its marker and the would-be spill path); and the full
message, paged so a 50 MB tool output shows its first page at once.

The cheap parts are drawn on the UI thread the moment the cursor moves; the tiktoken count and
the truncation preview of the selected message run in a thread worker (group ``detail``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message as TextualMessage
from textual.widgets import Static
from textual.worker import get_current_worker

from core.models import Message, Role
from core.tokens import estimate_chars4, get_counter, message_text
from tui.state import SessionState
from tui.widgets.message_list import PROVENANCE_MARKS, role_label

BODY_PAGE_LINES = 200
"""Lines of the full message shown per page."""
BODY_PAGE_CHARS = 24_000
"""Characters shown per page (a single huge line is cut here)."""
COUNT_ENCODING = "tiktoken:cl100k_base"
"""The tokenizer of the "counted" figure when the policy's estimator is not a tokenizer."""


@dataclass(frozen=True, slots=True)
class SlowFacts:
    """What the worker computed for one message."""

    message_index: int
    counted: int | None
    counted_with: str
    counted_note: str | None
    preview: RenderableType | None


class DetailPane(VerticalScroll, can_focus=True):
    """The selected message in full, with the policy's decision about it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "more", "More text", show=False),
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

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="detail-head", classes="detail-section")
        yield Static(id="detail-tokens", classes="detail-section")
        yield Static(id="detail-decision", classes="detail-section")
        yield Static(id="detail-model-sees", classes="detail-section")
        yield Static(id="detail-body", classes="detail-section detail-body")

    # -- public ------------------------------------------------------------------------------

    def set_state(self, state: SessionState | None) -> None:
        self._state = state
        self.message_index = None
        if state is None or not state.message_count:
            self._show_empty()

    def show(self, message_index: int | None, *, force: bool = False) -> None:
        """Show ``message_index`` (``force``: redraw even if it is already shown)."""
        state = self._state
        if state is None or message_index is None or not 0 <= message_index < state.message_count:
            self._show_empty()
            return
        if message_index == self.message_index and not force:
            return
        if message_index != self.message_index:
            self._pages_shown = 1
            self.scroll_home(animate=False)
        self.message_index = message_index
        self._slow = None
        self._draw()
        self._compute_slow(state, message_index)

    def refresh_decision(self) -> None:
        """The replay result changed: redraw the decision and the preview of the same message."""
        if self.message_index is not None:
            self.show(self.message_index, force=True)

    def as_text(self, width: int = 100) -> str:
        """The visible sections as plain text (for tests and for copying)."""
        from rich.console import Console

        console = Console(width=width, record=True, color_system=None, file=_NullFile())
        for section in self.query(".detail-section"):
            if section.display and isinstance(section, Static):
                content = section.content
                if isinstance(content, str):
                    content = Text(content)
                console.print(content)
        return console.export_text()

    def action_more(self) -> None:
        self._pages_shown += 1
        self._draw_body()

    # -- drawing --------------------------------------------------------------------------------

    def _show_empty(self) -> None:
        self.message_index = None
        if not self.is_mounted:
            return
        self.query_one("#detail-head", Static).update(Text("No message selected.", style="dim"))
        for section in ("#detail-tokens", "#detail-decision", "#detail-model-sees", "#detail-body"):
            self.query_one(section, Static).update("")
            self.query_one(section, Static).display = False

    def _draw(self) -> None:
        if not self.is_mounted:
            return
        state = self._state
        index = self.message_index
        if state is None or index is None:
            return
        message = state.message(index)
        self.query_one("#detail-head", Static).update(self._head(state, message))
        self._draw_tokens()
        decision = self.query_one("#detail-decision", Static)
        decision.update(self._decision(state, message))
        decision.display = True
        self._draw_model_sees()
        self._draw_body()

    def _head(self, state: SessionState, message: Message) -> Text:
        text = Text()
        text.append(f"#{message.index} ", style="bold")
        text.append(role_label(message), style="bold")
        if message.role is Role.TOOL and message.tool_result is not None:
            text.append(f" · {message.tool_result.tool_name or 'tool'}")
            if message.tool_result.is_error:
                text.append(" · error", style="bold red")
        if message.model:
            text.append(f" · {message.model}", style="dim")
        if message.timestamp:
            text.append(f" · {message.timestamp}", style="dim")
        call = state.call_for_message(message.index)
        if call is not None and state.call_count:
            text.append(f" · call {call}", style="dim")
        if message.source_line is not None:
            text.append(f" · line {message.source_line}", style="dim")
        return text

    def _draw_tokens(self) -> None:
        state = self._state
        index = self.message_index
        if state is None or index is None:
            return
        message = state.message(index)
        table = Table.grid(padding=(0, 2))
        table.add_column(style="dim", no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        table.add_column(style="dim")
        message_state = state.message_state(index)
        if message_state is not None:
            mark = PROVENANCE_MARKS.get(message_state.provenance, "?")
            table.add_row(
                "replay",
                f"{message_state.tokens:,} {mark}",
                f"{message_state.provenance} (the replay's figure)",
            )
            if message_state.truncated:
                table.add_row(
                    "after truncation",
                    f"{message_state.tokens_after_truncation:,} {mark}",
                    "what the policy would send",
                )
        text = message_text(message)
        slow = self._slow
        if slow is not None and slow.message_index == index:
            if slow.counted is not None:
                table.add_row("counted", f"{slow.counted:,} C", slow.counted_with)
            if slow.counted_note:
                table.add_row("", "", slow.counted_note)
        else:
            table.add_row("counted", "…", "counting")
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
                "context of this call (" + ", ".join(parts) + ")",
            )
        widget = self.query_one("#detail-tokens", Static)
        widget.update(Group(Text("Tokens", style="bold"), table))
        widget.display = True

    def _decision(self, state: SessionState, message: Message) -> RenderableType:
        lines: list[Text] = [Text(f"Under policy “{state.policy.name}”", style="bold")]
        message_state = state.message_state(message.index)
        if state.result is None:
            note = state.replay_error or "replaying…"
            lines.append(Text(note, style="dim italic"))
            return Group(*lines)
        if message_state is None:
            lines.append(Text("not in the replay (the session grew since)", style="dim"))
            return Group(*lines)
        if message_state.truncated:
            lines.append(
                Text.assemble(("✂ truncated", "bold"), f"  {message_state.truncation_note or ''}")
            )
        if message_state.pruned:
            lines.append(
                Text.assemble(("× pruned", "bold"), f"  {message_state.prune_reason or ''}")
            )
        elif message_state.protected:
            lines.append(
                Text.assemble(
                    ("◆ protected", "bold"),
                    f"  {message_state.prune_reason or 'protected from pruning'}",
                )
            )
        elif message_state.prune_reason:
            lines.append(Text.assemble(("kept", "bold"), f"  {message_state.prune_reason}"))
        event = state.event(message_state.summarised_by)
        if event is not None:
            lines.append(
                Text.assemble(
                    ("▌ head", "bold"),
                    f"  summarised by compaction at message {event.message_index}: {event.reason}",
                )
            )
        event = state.event(message_state.kept_by)
        if event is not None:
            lines.append(
                Text.assemble(
                    ("▌ tail", "bold"),
                    f"  kept verbatim by compaction at message {event.message_index}",
                )
            )
        for event_id, event in enumerate(state.result.events):
            if event.message_index == message.index and event.kind in ("compact", "overflow"):
                del event_id
                lines.append(Text.assemble((f"⚑ {event.kind}", "bold"), f"  {event.reason}"))
        lines.append(
            Text(
                "in context at the end"
                if message_state.in_context_at_end
                else "not in context at the end",
                style="dim",
            )
        )
        return Group(*lines)

    def _draw_model_sees(self) -> None:
        widget = self.query_one("#detail-model-sees", Static)
        state = self._state
        index = self.message_index
        slow = self._slow
        if state is None or index is None:
            widget.display = False
            return
        message = state.message(index)
        if message.role is not Role.TOOL or message.tool_result is None:
            widget.display = False
            return
        widget.display = True
        if slow is None or slow.message_index != index or slow.preview is None:
            widget.update(Text("What the model sees: …", style="dim"))
            return
        widget.update(slow.preview)

    def _draw_body(self) -> None:
        if not self.is_mounted:
            return
        state = self._state
        index = self.message_index
        widget = self.query_one("#detail-body", Static)
        if state is None or index is None:
            widget.display = False
            return
        widget.display = True
        message = state.message(index)
        widget.update(message_body(message, self._pages_shown))

    # -- slow facts --------------------------------------------------------------------------------

    @work(
        thread=True,
        exclusive=True,
        group="detail",
        exit_on_error=False,
        description="Counting the selected message",
    )
    def _compute_slow(self, state: SessionState, index: int) -> None:
        worker = get_current_worker()
        message = state.message(index)
        text = message_text(message)
        estimator = state.policy.estimator
        spec = estimator if estimator.startswith("tiktoken:") else COUNT_ENCODING
        counted: int | None = None
        note: str | None = None
        try:
            counter = get_counter(spec)
            counted = counter.count(text)
            note = counter.note
        except Exception as exc:  # no tokenizer available offline: say so, keep the rest
            note = f"cannot count: {exc}"
        if worker.is_cancelled:
            return
        preview: RenderableType | None = None
        if message.role is Role.TOOL and message.tool_result is not None:
            preview = model_sees(state, message)
        if worker.is_cancelled:
            return
        self.post_message(
            self.SlowFactsReady(
                SlowFacts(index, counted, spec.removeprefix("tiktoken:"), note, preview)
            )
        )

    def on_detail_pane_slow_facts_ready(self, event: SlowFactsReady) -> None:
        event.stop()
        if event.facts.message_index != self.message_index:
            return
        self._slow = event.facts
        self._draw_tokens()
        self._draw_model_sees()


class _NullFile:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def model_sees(state: SessionState, message: Message) -> RenderableType:
    """The tool output as the active policy would send it (simulated: nothing is written)."""
    from core.truncate import truncate_tool_output

    result_in = message.tool_result
    assert result_in is not None
    title = Text("What the model sees", style="bold")
    try:
        result = truncate_tool_output(
            result_in.output,
            tool_name=result_in.tool_name,
            call_id=result_in.call_id or message.id,
            policy=state.policy.truncation,
            spill=False,
            truncated_by_tool=result_in.truncated_by_tool,
        )
    except Exception as exc:  # a bad policy value must not break the pane
        return Group(title, Text(f"cannot simulate truncation: {exc}", style="red"))
    explain = Text(result.explain(), style="dim")
    if not result.truncated:
        return Group(title, explain)
    parts: list[RenderableType] = [title, explain]
    if result.output_path:
        parts.append(Text.assemble(("would spill to ", "dim"), (result.output_path, "underline")))
    content = result.content
    shown, more = _page(content, 1)
    body = Text(shown, style="")
    if more:
        body.append(f"\n… {more}", style="dim italic")
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
    rest = text[len(cut) :]
    return cut, f"{rest.count(chr(10)):,} more lines, {len(rest):,} more characters (m: more)"


def message_body(message: Message, pages: int = 1) -> RenderableType:
    """The full message, paged."""
    parts: list[RenderableType] = [Text("Message", style="bold")]
    if message.reasoning:
        shown, more = _page(message.reasoning, pages)
        parts.append(Text("thinking", style="dim italic"))
        parts.append(Text(shown + (f"\n… {more}" if more else ""), style="italic"))
    if message.text:
        shown, more = _page(message.text, pages)
        body = Text(shown)
        if more:
            body.append(f"\n… {more}", style="dim italic")
        parts.append(body)
    for call in message.tool_calls:
        from core.tokens import arguments_text

        args = arguments_text(call.arguments)
        shown, more = _page(args, pages)
        parts.append(Text.assemble((f"→ {call.name}", "bold"), f" ({call.id})", style=""))
        parts.append(Text(shown + (f"\n… {more}" if more else ""), style="dim"))
    if message.tool_result is not None:
        output = message.tool_result.output
        shown, more = _page(output, pages)
        lines = output.count("\n") + 1 if output else 0
        parts.append(Text(f"output · {lines:,} lines · {len(output):,} characters", style="dim"))
        body = Text(shown)
        if more:
            body.append(f"\n… {more}", style="dim italic")
        parts.append(body)
    if message.error:
        parts.append(Text(f"error: {message.error}", style="red"))
    if message.stop_reason:
        parts.append(Text(f"stop reason: {message.stop_reason}", style="dim"))
    if len(parts) == 1:
        parts.append(Text("(empty)", style="dim"))
    return Group(*parts)
