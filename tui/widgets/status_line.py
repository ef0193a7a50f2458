"""The session screen's bottom line: the peak context against the window (the recorded one leads
where the session has usage, as in the overflow view), what the replay found, what the session
cost (:func:`core.cost.cost_label`, as ``ctxscope breakdown`` prints it), and what is running."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label

from core.cost import cost_label
from core.units import compact_tokens, counted
from tui.figures import call_label, peaks
from tui.state import SessionState


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

    def compose(self) -> ComposeResult:
        yield Label("", id="status-peak")
        yield Label("", id="status-info")
        yield Label("", id="status-activity")

    def show(self, state: SessionState | None) -> None:
        peak_label = self.query_one("#status-peak", Label)
        info_label = self.query_one("#status-info", Label)
        peak_label.set_classes("")
        if state is None:
            peak_label.update("")
            info_label.update("")
            return
        result = state.result
        window = state.window
        if result is None:
            peak_label.update(f"{state.message_count:,} messages")
            info_label.update(state.replay_error or "")
            return
        summary = result.summary
        recorded, simulated = peaks(summary)
        lead = recorded or simulated  # the recording's own figure leads where it has one
        if window:
            text = f"peak {lead.tokens:,} / {window:,} · {lead.tokens / window:.0%} {lead.label}"
            if recorded is not None and simulated.tokens != recorded.tokens:
                text += f" (simulated {simulated.tokens:,} · {simulated.tokens / window:.0%})"
        else:
            text = f"peak {lead.tokens:,} {lead.label} · window unknown (w)"
            if recorded is not None and simulated.tokens != recorded.tokens:
                text += f" (simulated {simulated.tokens:,})"
        peak_label.update(text)
        if window:
            share = lead.tokens / window
            peak_label.add_class("-over" if share > 1 else "-near" if share >= 0.85 else "-ok")
        parts = [f"{state.message_count:,} msgs", f"{summary.calls:,} calls"]
        if state.insights is not None and state.insights.cost.calls:
            # early in the line: a long peak figure must not push it off a 120-column terminal
            parts.insert(0, f"cost {cost_label(state.insights.cost)}")
        overflow = state.first_overflow()
        if overflow is not None:
            call, _message, simulated_overflow = overflow
            if simulated_overflow:
                parts.append(f"overflows at {call_label(call)} (o)")
            else:
                parts.append(f"rec. overflow at {call_label(call)} avoided (o)")
        if summary.compactions:
            parts.append(f"{counted(summary.compactions, 'compaction')} ([ ])")
        if summary.tokens_truncated:
            parts.append(f"✂ {compact_tokens(summary.tokens_truncated)}")
        if summary.tokens_pruned:
            parts.append(f"× {compact_tokens(summary.tokens_pruned)}")
        if state.matches:
            parts.append(f"{len(state.matches):,} matches (n/N)")
        info_label.update(" · ".join(parts))

    def activity(self, text: str, *, busy: bool = False) -> None:
        label = self.query_one("#status-activity", Label)
        label.update(text)
        label.set_class(busy, "-busy")
