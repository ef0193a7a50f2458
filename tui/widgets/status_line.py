"""The session screen's bottom line: the peak context against the window (the recorded one leads
where the session has usage, as in the overflow view), what the replay found, what the session
cost (:func:`core.insights.cost.cost_label`, as ``ctxscope breakdown`` prints it), and what is running."""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label

from core.insights.cost import cost_label
from core.insights.named_figures import context_measure
from core.model.write_numbers import compact_tokens, counted
from tui.figures import call_label, peaks
from tui.screen_state import SessionState
from tui.widgets.title_bar import LineLabel, set_label


def fitting(
    parts: list[str], room: int, separator: str = " · ", ranks: list[int] | None = None
) -> list[str]:
    """The ``parts`` whose join fits ``room`` cells, in their order: the part of the largest
    rank (by default the last) is left out first, whole, until the rest fit (none, when not
    even one does)."""
    order = ranks if ranks is not None else list(range(len(parts)))
    kept = list(range(len(parts)))

    def width() -> int:
        return sum(cell_len(parts[i]) for i in kept) + len(separator) * max(0, len(kept) - 1)

    for index in sorted(kept, key=lambda i: (-order[i], -i)):
        if width() <= room:
            break
        kept.remove(index)
    return [parts[i] for i in kept]


class StatusLine(Horizontal):
    """Peak context against the window, what the replay found, and what is running."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        background: $panel;
    }
    StatusLine Label {
        width: auto;
        height: 1;
        padding: 0 1;
    }
    StatusLine #status-peak.-ok { color: $success; text-style: bold; }
    StatusLine #status-peak.-near { color: $warning; text-style: bold; }
    StatusLine #status-peak.-over { background: $error; color: $text; text-style: bold; }
    StatusLine #status-info { color: $text-muted; }
    StatusLine #status-activity { color: $text-muted; }
    StatusLine #status-activity.-busy { color: $accent; text-style: bold; }
    """

    _parts: tuple[tuple[int, str], ...] = ()
    """The info's parts, each with its rank (see :func:`fitting`)."""
    _peak_text = ""
    _activity_text = ""

    def compose(self) -> ComposeResult:
        yield LineLabel("", id="status-peak")
        yield LineLabel("", id="status-info")
        yield LineLabel("", id="status-activity")

    def show(self, state: SessionState | None) -> None:
        peak_label = self.query_one("#status-peak", Label)
        info_label = self.query_one("#status-info", Label)
        self._parts = ()
        if state is None:
            self._peak_text = ""
            _set_zone(peak_label, None)
            set_label(peak_label, "")
            set_label(info_label, "")
            return
        result = state.result
        window = state.window
        if result is None:
            self._peak_text = f"{state.message_count:,} messages"
            _set_zone(peak_label, None)
            set_label(peak_label, self._peak_text)
            self._parts = ((1, state.replay_error),) if state.replay_error else ()
            set_label(info_label, state.replay_error or "")
            return
        summary = result.summary
        recorded, simulated = peaks(summary)
        lead = recorded or simulated  # the recording's own figure leads where it has one
        if recorded is not None and context_measure(state.session) != "prompt":
            lead = lead._replace(label="recorded, prompt + reply")
        if window:
            text = f"peak {lead.tokens:,} / {window:,} · {lead.tokens / window:.0%} {lead.label}"
            if recorded is not None and simulated.tokens != recorded.tokens:
                text += f" (simulated {simulated.tokens:,} · {simulated.tokens / window:.0%})"
        else:
            text = f"peak {lead.tokens:,} {lead.label} · window unknown (w)"
            if recorded is not None and simulated.tokens != recorded.tokens:
                text += f" (simulated {simulated.tokens:,})"
        set_label(peak_label, text)
        self._peak_text = text
        zone = None
        if window:
            share = lead.tokens / window
            zone = "-over" if share > 1 else "-near" if share >= 0.85 else "-ok"
        _set_zone(peak_label, zone)
        # (rank, text): where the line is too narrow, the largest rank is left out first
        parts = [(5, f"{state.message_count:,} msgs"), (5, f"{summary.calls:,} calls")]
        if state.insights is not None and state.insights.cost.calls:
            # early in the line: a long peak figure must not push it off a 120-column terminal
            parts.insert(0, (3, f"cost {cost_label(state.insights.cost)}"))
        overflow = state.first_overflow()
        if overflow is not None:
            call, _message, simulated_overflow = overflow
            if simulated_overflow:
                parts.append((1, f"overflows at {call_label(call)} (o)"))
            else:
                parts.append((1, f"rec. overflow at {call_label(call)} avoided (o)"))
        if summary.compactions:
            parts.append((2, f"{counted(summary.compactions, 'compaction')} ([ ])"))
        if summary.tokens_truncated:
            parts.append((4, f"✂ {compact_tokens(summary.tokens_truncated)}"))
        if summary.tokens_pruned:
            parts.append((4, f"× {compact_tokens(summary.tokens_pruned)}"))
        if state.matches:
            parts.append((1, f"{counted(len(state.matches), 'match', 'matches')} (n/N)"))
        self._parts = tuple(parts)
        self._fit_info()

    def on_resize(self) -> None:
        self._fit_info()

    def _fit_info(self) -> None:
        """Show the parts of the info that fit the line whole: a part that does not fit is
        left out, never cut ("… 2 compactions ([")."""
        info_label = self.query_one("#status-info", Label)
        parts = self._parts
        texts = [text for _rank, text in parts]
        if self.size.width <= 0:
            set_label(info_label, " · ".join(texts))
            return
        used = sum(cell_len(text) + 2 for text in (self._peak_text, self._activity_text))
        room = self.size.width - used - 2  # the info label's own padding
        ranks = [rank for rank, _text in parts]
        set_label(info_label, " · ".join(fitting(texts, room, ranks=ranks)))

    def activity(self, text: str, *, busy: bool = False) -> None:
        label = self.query_one("#status-activity", Label)
        set_label(label, text)
        self._activity_text = text
        self._fit_info()
        label.set_class(busy, "-busy")


def _set_zone(label: Label, zone: str | None) -> None:
    """Give the peak ``label`` the class of its share of the window (``-ok``, ``-near``,
    ``-over``; None: none), touching its classes only when that changes."""
    wanted = {zone} if zone else set()
    if set(label.classes) != wanted:
        label.set_classes(wanted)
