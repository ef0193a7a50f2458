"""The help screen (``?``): every key, what the row glyphs mean, and the token markers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from tui.keymap import format_keys, keymap_of, keys_in_force, project_bindings
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
"""The keys of every screen, grouped (kept in step with the BINDINGS of the screens; a test checks
that every id names a binding)."""

ROW_BINDINGS: dict[tuple[str, str], tuple[str, ...]] = {
    ("↑ ↓  j k", "previous / next message"): ("messages.up", "messages.down"),
    ("PgUp PgDn", "a page up / down"): ("messages.page-up", "messages.page-down"),
    ("g G  Home End", "first / last message"): ("messages.first", "messages.last"),
    ("[ ]", "previous / next compaction (shows its head/tail split)"): (
        "session.prev-compaction",
        "session.next-compaction",
    ),
    ("/  n N", "search messages, next / previous match"): (
        "session.search",
        "session.next-match",
        "session.prev-match",
    ),
    ("← →", "previous / next model call (shift on the gauge: exactly one call)"): (
        "messages.prev-call",
        "messages.next-call",
    ),
    ("tab", "move focus: list, detail (or the policy panel), gauge"): ("session.focus-next",),
    ("o", "overflow view: the first overflow and its top contributors"): ("session.overflow",),
    ("c", "compaction screen: compaction now on the context at the selected message"): (
        "session.compaction",
    ),
    ("r  [ ]", "in it: run again; step through the replay's compactions"): (
        "compaction.run-now",
        "compaction.prev",
        "compaction.next",
    ),
    ("b", "breakdown: what fills the window at every call, the selected call beside it"): (
        "session.breakdown",
    ),
    ("p", "policy panel: edit any limit, switch preset (the replay re-runs)"): ("session.policy",),
    ("w", "set the context window (when the session does not record it)"): ("session.window",),
    ("m", "in the detail pane: show more of a long message"): ("detail.more",),
    ("x", "cancel a running replay or compaction"): ("session.cancel",),
    ("f", "follow the end of a file that is still being written"): ("session.follow",),
    ("/  ctrl+o  ctrl+r", "filter (fuzzy), open a path, scan for sessions again"): (
        "picker.filter",
        "picker.path",
        "picker.rescan",
    ),
    ("s  S", "sort by the next column (last message, %, peak …); reverse the order"): (
        "picker.sort",
        "picker.reverse-sort",
    ),
    ("a", "agent: all, claude-code, codex, opencode, pi"): ("picker.agent",),
    ("n", "near overflow: sessions within the diagnosis margin (5%) of their window"): (
        "picker.near-overflow",
    ),
    ("x", "stop analysing the sessions (ctrl+r starts again)"): ("picker.stop",),
    ("t", "toggle light / dark theme"): ("app.toggle-theme",),
    ("?", "this help"): ("app.help",),
    ("esc", "back (close search, panel, screen)"): ("session.back",),
    ("q", "quit (from every screen; in a text field it types: esc first)"): ("app.quit",),
}
"""The ids of the bindings each row of :data:`KEYS` is about (its keys change with the keymap)."""


PROVENANCE_HELP = {
    "R": "recorded: reported by the provider in the file",
    "C": "counted: counted here with a tokenizer (tiktoken)",
    "~": "estimated: a characters/bytes-per-token rule",
}


def row_keys(row: tuple[str, str], keymap: Mapping[str, str]) -> str:
    """The keys of a help row as they are in force: the default text, unless the user's keymap
    changes one of its bindings (then each binding's keys, the changed ones as mapped)."""
    key_text = row[0]
    ids = ROW_BINDINGS.get(row, ())
    if not any(binding_id in keymap for binding_id in ids):
        return key_text
    defaults = default_key_displays()
    return "  ".join(keys_in_force(i, keymap) or defaults.get(i, "") for i in ids)


def default_key_displays() -> dict[str, str]:
    """Binding id → its default keys as the footer shows them (``[``, ``↑ k``)."""
    shown: dict[str, str] = {}
    for _cls, binding in project_bindings():
        if binding.id and binding.id not in shown:
            shown[binding.id] = binding.key_display or format_keys(binding.key)
    return shown


def help_renderable(keymap: Mapping[str, str] | None = None) -> Table:
    """Everything the help screen shows, as one Rich table (with the keys of ``keymap``, the
    user's, in force)."""
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, style="bold")
    table.add_column()
    for title, rows in KEYS:
        table.add_row(Text(title, style="bold underline"), "")
        for row in rows:
            table.add_row(row_keys(row, keymap or {}), row[1])
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
        Binding("escape,question_mark", "dismiss(None)", "Close", id="help.close"),
        Binding(
            "q", "app.quit", "Quit", id="app.quit"
        ),  # as everywhere (a modal screen passes no key on)
        Binding("t", "app.toggle_theme", "Theme", id="app.toggle-theme"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog", classes="dialog"):
            yield Label("ctxscope — keys", classes="dialog-title")
            yield Static(help_renderable(keymap_of(self.app)), id="help-body")
            yield Label("Esc or ? closes this help.", classes="dialog-hint")
