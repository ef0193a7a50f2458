"""The overflow view: why the window overflowed (or nearly did), and what filled it.

A modal over the session screen. It asks :func:`core.insights.diagnosis.diagnose` (in a thread: without a
replay result it replays the session under its agent's preset first) and shows the first call that overflowed — or the
closest call within the margin, or plainly that nothing overflowed — the growth since the last
compaction, whether the threshold fired too late, and the top contributors with their share of that
growth. Enter on a contributor dismisses with its message index (the session screen selects it);
``g`` dismisses with the overflowing call's message; Esc dismisses with None.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from core.model.session import Session
from tui.figures import call_label, fidelity_row, recorded_compaction_figures, recorded_trigger

if TYPE_CHECKING:
    from core.insights.diagnosis import OverflowDiagnosis
    from core.replay import ReplayResult

BAR_CELLS = 12
"""Width of the share bar in the contributors table."""

_EIGHTHS = " ▏▎▍▌▋▊▉█"


def share_bar(share: float, cells: int = BAR_CELLS) -> str:
    """A horizontal bar ``cells`` wide filled to ``share`` (0..1), in eighths of a cell."""
    eighths = round(max(0.0, min(share, 1.0)) * cells * 8)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (_EIGHTHS[part] if part else "")
    return bar.ljust(cells)


class _Diagnosed(Message):
    def __init__(self, diagnosis: OverflowDiagnosis | None, error: str | None) -> None:
        super().__init__()
        self.diagnosis = diagnosis
        self.error = error


class OverflowScreen(ModalScreen[int | None]):
    """First overflow + top contributors; Enter on a row dismisses with its message_index."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="overflow.close"),
        Binding("g", "go_to_call", "Go to the call", id="overflow.go-to-call"),
        Binding(
            "enter", "choose", "Jump to message", show=True, priority=False, id="overflow.jump"
        ),
        # a modal screen does not pass keys on to the app: its own keys are repeated here
        Binding("q", "app.quit", "Quit", id="app.quit"),
        Binding("question_mark", "app.help", "Help", key_display="?", id="app.help"),
    ]

    CSS_PATH = Path(__file__).with_name("overflow.tcss")
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]  # noqa: RUF012 (Screen declares it)

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "overflow-screen--bar",
        "overflow-screen--bar-top",
        "overflow-screen--tool",
    }

    def __init__(self, session: Session, result: ReplayResult | None) -> None:
        super().__init__()
        self.session = session
        self.result = result
        self.diagnosis: OverflowDiagnosis | None = None
        """The diagnosis, once the worker has produced it."""

    def compose(self) -> ComposeResult:
        with Vertical(id="ov-dialog"):
            with Horizontal(id="ov-title-row"):
                yield Label("Overflow", id="ov-title")
                yield Label("", id="ov-badge")
            with VerticalScroll(id="ov-text"):
                yield Static("Diagnosing…", id="ov-headline")
                yield Static("", id="ov-facts")
            yield Label("Top contributors since the last compaction", id="ov-table-title")
            table: DataTable[str | Text] = DataTable(
                id="ov-table", cursor_type="row", zebra_stripes=True
            )
            yield table
            yield Static("", id="ov-by-tool")
            yield Label(
                "Enter: jump to the message · g: jump to the call · Esc: close · q: quit · ?: help",
                id="ov-hint",
            )

    def on_mount(self) -> None:
        table = self.query_one("#ov-table", DataTable)
        table.add_column("msg", key="msg")
        table.add_column("role", key="role")
        table.add_column("tool", key="tool")
        table.add_column("tokens", key="tokens")
        table.add_column("share", key="share")
        table.loading = True
        self._diagnose()

    @work(thread=True, exclusive=True, group="overflow", exit_on_error=False)
    def _diagnose(self) -> None:
        try:
            from core.insights.diagnosis import diagnose
            from core.replay import native_policy, replay

            result = self.result or replay(self.session, native_policy(self.session))
            diagnosis = diagnose(self.session, result)
            self.result = result  # (the facts drawn with the diagnosis read it)
        except Exception as exc:  # a diagnosis bug must not take the UI down
            self.post_message(_Diagnosed(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(_Diagnosed(diagnosis, None))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``g`` is offered once there is a call to go to."""
        if action == "go_to_call":
            return self.diagnosis is not None and self.diagnosis.message_index is not None
        return True

    def on__diagnosed(self, event: _Diagnosed) -> None:
        table = self.query_one("#ov-table", DataTable)
        table.loading = False
        if event.diagnosis is None:
            self.query_one("#ov-headline", Static).update(f"The diagnosis failed: {event.error}")
            self.app.notify(f"Overflow diagnosis failed: {event.error}", severity="error")
            return
        self.diagnosis = event.diagnosis
        self.refresh_bindings()
        self._show(event.diagnosis)

    # -- drawing ---------------------------------------------------------------------------------

    def _show(self, d: OverflowDiagnosis) -> None:
        badge = self.query_one("#ov-badge", Label)
        headline = self.query_one("#ov-headline", Static)
        if d.call_index is None:
            badge.update("no overflow")
            badge.set_classes("-ok")
            headline.update(Text("No overflow. ", style="bold") + Text(d.explanation))
            facts = self._nearest_facts(d)
            facts_view = self.query_one("#ov-facts", Static)
            facts_view.display = facts.row_count > 0
            facts_view.update(facts)
        else:
            window = d.window or 0
            tokens = f"{d.tokens:,}" if d.tokens is not None else "?"
            notes = []
            if window and d.tokens is not None:
                notes.append(f"{d.tokens / window:.1%}")
            if d.tokens_provenance:
                notes.append(d.tokens_provenance)
            share = f" ({', '.join(notes)})" if notes else ""
            provenance = ""
            where = f"{call_label(d.call_index).capitalize()} (message #{d.message_index})"
            if d.overflowed:
                badge.update(f"overflowed · {d.overflow_reason or 'over-window'}")
                badge.set_classes("-over")
                line = f"{where} overflowed: {tokens} of {window:,} tokens{share}{provenance}."
            else:
                badge.update(f"within {d.margin:.0%} of the window")
                badge.set_classes("-near")
                line = (
                    f"No call overflowed; the closest, {where}, came within {d.margin:.0%} of "
                    f"the window: {tokens} of {window:,} tokens{share}{provenance}."
                )
            headline.update(Text(line, style="bold"))
            self.query_one("#ov-facts", Static).update(self._facts(d))
        self._fill_table(d)

    def _facts(self, d: OverflowDiagnosis) -> Table:
        """What filled the window, when the agent checks, what its last check saw, and what it
        should have done: one labelled line each, wrapped, never cut."""
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        since = "the start" if d.since_message_index == 0 else f"message #{d.since_message_index}"
        growth = f"+{d.growth_tokens:,} tokens of messages since {since} (estimated)"
        if d.growth_recorded_tokens is not None:
            growth += f"; the recorded context grew by {d.growth_recorded_tokens:,}"
        grid.add_row("Growth", growth)
        since_compaction = self._compaction_at(d.since_message_index)
        if since_compaction:
            grid.add_row("Since", since_compaction)
        if d.threshold is None:
            grid.add_row("Check", "no threshold: the window is unknown (w sets it)")
            return grid
        grid.add_row("Checks", d.schedule.removeprefix("The ").replace(" policy checks", " checks"))
        threshold = f"{d.threshold:,}"
        if d.threshold_source == "inferred":
            rule = f"; its rule gives {d.rule_threshold:,}" if d.rule_threshold is not None else ""
            threshold += f" (inferred from the recording{rule})"
        if d.last_check_call_index is None:
            saw = f"no check since the last compaction; threshold {threshold}"
        else:
            seen = f"{d.last_check_tokens:,}" if d.last_check_tokens is not None else "nothing"
            fired = "crossed it: it should fire" if d.last_check_crossed else "did not fire"
            saw = (
                f"right before {call_label(d.last_check_call_index)}: {seen} against "
                f"{threshold} — {fired}"
            )
        grid.add_row("Saw", saw)
        if d.verdict:
            grid.add_row("Verdict", d.verdict)
        return grid

    def _nearest_facts(self, d: OverflowDiagnosis) -> Table:
        """Where nothing overflowed: how close the context came to the window, and why each
        recorded compaction ran (one labelled line each)."""
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        summary = self.result.summary if self.result is not None else None
        if summary is not None and summary.peak_call_index is not None:
            peak = summary.peak_recorded if summary.peak_recorded is not None else None
            label = "recorded" if peak is not None else "simulated"
            tokens = peak if peak is not None else summary.peak_simulated
            share = f" ({tokens / d.window:.1%} of {d.window:,})" if d.window else ""
            grid.add_row(
                "Nearest",
                f"{tokens:,} tokens {label}{share}: the fullest the context got "
                f"(at {call_label(summary.peak_call_index)})",
            )
        for k, event in enumerate(self.session.compactions):
            if event.rewound:
                continue
            trigger, evidence = recorded_trigger(self.session, self.result, k)
            named = recorded_compaction_figures(self.session, self.result, k)
            figures = f", {named}" if named != "no recorded figures" else ""
            because = f": {evidence}" if evidence else ""
            grid.add_row(
                f"Compaction #{k}",
                f"at message #{event.message_index}, {trigger}{figures}{because}"
                f"{self._check_crossed(k)}",
            )
        return grid

    def _check_crossed(self, recorded_index: int) -> str:
        """Why an automatic compaction ran, as the replay's check of the agent saw it: its check
        figure against the threshold before the call it came before ("" for the user's)."""
        row = fidelity_row(self.result, recorded_index)
        if row is None or not row.automatic or row.check_tokens is None or row.threshold is None:
            return ""
        crossed = "reached" if row.check_tokens >= row.threshold else "stayed below"
        call = (
            f" before {call_label(row.recorded_call_index)}"
            if row.recorded_call_index is not None
            else ""
        )
        return (
            f"; the check{call} measured {row.check_tokens:,}, which {crossed} the "
            f"threshold {row.threshold:,}"
        )

    def _compaction_at(self, message_index: int) -> str:
        """The recorded compaction the growth starts at, its trigger and the evidence for it
        ("" when the growth starts at the start)."""
        if not message_index:
            return ""
        k = next(
            (k for k, c in enumerate(self.session.compactions) if c.message_index == message_index),
            None,
        )
        if k is None:
            return ""
        trigger, evidence = recorded_trigger(self.session, self.result, k)
        because = f": {evidence}" if evidence else ""
        return f"recorded compaction #{k} at message #{message_index}, {trigger}{because}"

    def _fill_table(self, d: OverflowDiagnosis) -> None:
        table: DataTable[str | Text] = self.query_one("#ov-table", DataTable)
        table.clear()
        bar_style = self.get_component_rich_style("overflow-screen--bar", partial=True)
        top_style = self.get_component_rich_style("overflow-screen--bar-top", partial=True)
        muted = Style(dim=True)  # a partial colour with alpha does not blend in table cells
        tool_style = self.get_component_rich_style("overflow-screen--tool", partial=True)
        for rank, c in enumerate(d.contributors):
            bar = Text(share_bar(c.share), style=top_style if rank == 0 else bar_style)
            bar.append(f" {c.share:>4.0%}", style=muted)
            table.add_row(
                Text(f"#{c.message_index}", justify="right"),
                c.role,
                Text(c.tool_name or "—", style=tool_style if c.tool_name else muted),
                Text(f"{c.tokens:,}", justify="right"),
                bar,
                key=str(c.message_index),
            )
        title = self.query_one("#ov-table-title", Label)
        by_tool = self.query_one("#ov-by-tool", Static)
        if not d.contributors:
            title.update("No contributors to show")
            table.display = False
            by_tool.display = False
            return
        since = "start" if d.since_message_index == 0 else f"message #{d.since_message_index}"
        title.update(f"Top contributors since the {since} (share of the growth)")
        if d.by_tool:
            parts = [
                f"{t.tool_name} {t.tokens:,} in {t.outputs} output{'s' if t.outputs != 1 else ''}"
                f" ({t.share:.0%})"
                for t in d.by_tool[:4]
            ]
            by_tool.update("By tool: " + " · ".join(parts))
        else:
            by_tool.display = False
        table.focus()

    # -- actions ---------------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#ov-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.dismiss(int(event.row_key.value))

    def action_choose(self) -> None:
        """Enter outside the table: the highlighted contributor, else the overflowing call."""
        table = self.query_one("#ov-table", DataTable)
        if table.row_count and table.cursor_row is not None:
            key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
            if key is not None:
                self.dismiss(int(key))
                return
        self.action_go_to_call()

    def action_go_to_call(self) -> None:
        """Dismiss with the message of the call that overflowed (or came closest)."""
        if self.diagnosis is not None and self.diagnosis.message_index is not None:
            self.dismiss(self.diagnosis.message_index)

    def action_close(self) -> None:
        self.dismiss(None)
