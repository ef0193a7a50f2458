"""The help screen (``?``): every key, what the row glyphs mean, and the token markers."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from tui.widgets.message_list import FLAG_LEGEND, PROVENANCE_MARKS

KEYS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Moving",
        (
            ("↑ ↓  j k", "previous / next message"),
            ("PgUp PgDn", "a page up / down"),
            ("g G  Home End", "first / last message"),
            ("[ ]", "previous / next compaction (shows its head/tail split)"),
            ("/  n N", "search messages, next / previous match"),
            ("click", "select a message; click the gauge to select a call"),
            ("← →", "previous / next model call (shift on the gauge: exactly one call)"),
            ("tab", "move focus: list, detail (or the policy panel), gauge"),
        ),
    ),
    (
        "Views",
        (
            ("o", "overflow view: the first overflow and its top contributors"),
            ("c", "compaction screen: compaction now on the context at the selected message"),
            ("r  [ ]", "in it: run again; step through the replay's compactions"),
            ("", "each with its cost, what its summary forgot and why it ran"),
            ("b", "breakdown: what fills the window at every call, the selected call beside it"),
            ("p", "policy panel: edit any limit, switch preset (the replay re-runs)"),
            ("w", "set the context window (when the session does not record it)"),
            ("m", "in the detail pane: show more of a long message"),
            ("x", "cancel a running replay or compaction"),
            ("f", "follow the end of a file that is still being written"),
        ),
    ),
    (
        "Picker",
        (
            ("Enter", "open the selected session (↓ from the filter goes to the list)"),
            ("/  ctrl+o  ctrl+r", "filter (fuzzy), open a path, scan for sessions again"),
            ("s  S", "sort by the next column (last message, %, peak …); reverse the order"),
            ("click a header", "sort by that column; click again to reverse"),
            ("a", "agent: all, claude-code, codex, opencode, pi"),
            ("n", "near overflow: sessions within the diagnosis margin (5%) of their window"),
            ("x", "stop analysing the sessions (ctrl+r starts again)"),
        ),
    ),
    (
        "App",
        (
            ("ctrl+p", "command palette (presets, jump to call N, theme …)"),
            ("", "calls, messages and recorded compactions are numbered from 0, as in the JSON"),
            ("t", "toggle light / dark theme"),
            ("?", "this help"),
            ("esc", "back (close search, panel, screen)"),
            ("q", "quit (from every screen; in a text field it types: esc first)"),
        ),
    ),
)
"""The keys of every screen, grouped (kept in step with the BINDINGS of the screens)."""

PROVENANCE_HELP = {
    "R": "recorded: reported by the provider in the file",
    "C": "counted: counted here with a tokenizer (tiktoken)",
    "~": "estimated: a characters/bytes-per-token rule",
}


def help_renderable() -> Table:
    """Everything the help screen shows, as one Rich table."""
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, style="bold")
    table.add_column()
    for title, rows in KEYS:
        table.add_row(Text(title, style="bold underline"), "")
        for key, what in rows:
            table.add_row(key, what)
        table.add_row("", "")
    table.add_row(Text("Row glyphs", style="bold underline"), "")
    for glyph, what in FLAG_LEGEND:
        table.add_row(glyph, what)
    table.add_row("", "")
    table.add_row(Text("Token markers", style="bold underline"), "")
    for mark in PROVENANCE_MARKS.values():
        table.add_row(mark, PROVENANCE_HELP[mark])
    return table


class HelpScreen(ModalScreen[None]):
    """Keys and legends."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark", "dismiss(None)", "Close"),
        Binding("q", "app.quit", "Quit"),  # as everywhere (a modal screen passes no key on)
        Binding("t", "app.toggle_theme", "Theme"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog", classes="dialog"):
            yield Label("ctxscope — keys", classes="dialog-title")
            yield Static(help_renderable(), id="help-body")
            yield Label("Esc or ? closes this help.", classes="dialog-hint")
