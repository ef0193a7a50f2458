"""The session screen's top line: the session's name, its format and model, the window (where it
comes from, how it changes; the evidence for it as the window's tooltip) and the active policy."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Label

from core.insights.estimate_calibration import calibration, calibration_note, prompts_estimated
from tui.figures import call_label, window_changes, window_label
from tui.screen_state import SessionState
from tui.widgets.title_bar import LineLabel, TitleBar, set_label


class SessionHeader(TitleBar):
    """Session name, format, model, window and the active policy."""

    DEFAULT_CSS = """
    SessionHeader .hdr-field {
        color: $text-muted;
    }
    SessionHeader #hdr-window.-unknown {
        color: $warning;
        text-style: bold;
    }
    SessionHeader #hdr-policy {
        color: $text-accent;
    }
    """

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield LineLabel("", id="hdr-policy", classes="hdr-field")
        yield LineLabel("", id="hdr-window", classes="hdr-field")
        yield LineLabel("", id="hdr-model", classes="hdr-field")
        yield LineLabel("", id="hdr-format", classes="hdr-field")

    def show(self, state: SessionState | None, name: str) -> None:
        set_label(self.query_one("#hdr-name", Label), name)
        if state is None:
            for field in ("#hdr-format", "#hdr-model", "#hdr-window", "#hdr-policy"):
                set_label(self.query_one(field, Label), "")
            return
        session = state.session
        fmt = self.query_one("#hdr-format", Label)
        fmt_text = str(session.format)
        fmt.tooltip = None
        result = state.result
        calibrated = None
        if result is not None and prompts_estimated(session):
            calibrated = calibration(
                session, result.points, lambda: [m.tokens for m in result.messages]
            )
        if calibrated is not None:
            error = calibrated.largest_error
            off = f", off by up to {error:.0%} where measured" if error is not None else ""
            fmt_text = f"{session.format} · prompts estimated{off}"
            fmt.tooltip = calibration_note(calibrated)
        set_label(fmt, fmt_text)
        set_label(self.query_one("#hdr-model", Label), session.model or "model unknown")
        window = state.window
        window_label = self.query_one("#hdr-window", Label)
        window_label.tooltip = state.window_evidence
        if window:
            set_label(window_label, self._window_text(state, window))
            window_label.remove_class("-unknown")
        else:
            set_label(window_label, "window unknown (w to set)")
            window_label.add_class("-unknown")
        set_label(self.query_one("#hdr-policy", Label), f"policy {state.policy.name}")

    @staticmethod
    def _window_text(state: SessionState, window: int) -> str:
        """``window 1,000,000 (inferred)``; when it changes during the session, each value and
        the call it starts at (``window 258,400 → 353,400 at call 120 (recorded)``)."""
        changes = window_changes(state.result) if state.result is not None else []
        if not changes:
            return window_label(window, state.window_source)
        values = " → ".join(f"{w:,}" if w else "?" for _call, w in changes[:3])
        more = " …" if len(changes) > 3 else ""
        return f"window {values}{more} at {call_label(changes[1][0])} ({state.window_source})"
