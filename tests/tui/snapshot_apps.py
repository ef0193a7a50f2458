"""App factories for the SVG snapshot tests (and for anyone who wants the same screens).

Every app here is deterministic: fixed sessions (the committed samples or sessions built in
code), a fixed discovered-session list with fixed times, no live tail, and :func:`prepare`
waits for every worker, turns cursor blink off and clears notifications before the picture.
``app`` at the bottom is the picker, so ``textual run tests/tui/snapshot_apps.py`` works too.
"""

from __future__ import annotations

from pathlib import Path

from sessions import claude_like_session
from textual.pilot import Pilot
from textual.widgets import Input
from tui_harness import settle

from core.discovery import DiscoveredSession
from core.models import SourceFormat
from core.policy import get_preset
from tui.app import CtxscopeApp
from tui.screens.session import SessionScreen

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_sessions"
OVERFLOW_SAMPLE = SAMPLES / "claude-code" / "overflow.jsonl"
FIXED_TIME = 1_773_480_000.0  # 2026-03-14, so the picker's dates never change

_PICKER_ROWS = [
    ("claude-code/overflow.jsonl", SourceFormat.CLAUDE_CODE, "fix the flaky webhook test"),
    ("claude-code/compacted.jsonl", SourceFormat.CLAUDE_CODE, "per-app delivery cache"),
    ("claude-code/long.jsonl", SourceFormat.CLAUDE_CODE, "a long day of small requests"),
    (
        "codex/rollout-2026-03-14T09-12-33-019ceb67-7968-7c30-9ae9-f3a029d24123.jsonl",
        SourceFormat.CODEX,
        "add filters to the orders API",
    ),
    ("pi/session.jsonl", SourceFormat.PI, "config refactor"),
    ("opencode/export.json", SourceFormat.OPENCODE, 'fix "Invalid Date" in the dashboard'),
]


def discovered_samples() -> list[DiscoveredSession]:
    """The committed samples, as discovery would list them (fixed times, newest first)."""
    found = []
    for k, (relative, fmt, title) in enumerate(_PICKER_ROWS):
        path = SAMPLES / relative
        if not path.exists():
            continue
        found.append(
            DiscoveredSession(
                path=str(path),
                format=fmt,
                project="/home/dev/src/parcelhub",
                modified=FIXED_TIME - k * 5400,
                size_bytes=path.stat().st_size,
                title=title,
            )
        )
    return found


async def prepare(pilot: Pilot[object]) -> None:
    """Wait for every worker, stop cursors blinking, drop notifications (their timing varies)."""
    await settle(pilot)
    for field in pilot.app.query(Input):
        field.cursor_blink = False
    for screen in pilot.app.screen_stack:
        for field in screen.query(Input):
            field.cursor_blink = False
    pilot.app.clear_notifications()
    await pilot.pause()


def picker_app() -> CtxscopeApp:
    """The session picker over the samples."""
    return CtxscopeApp(discover=discovered_samples, live=False)


def sample_app(path: Path = OVERFLOW_SAMPLE, policy: str | None = None) -> CtxscopeApp:
    """A session screen on a sample file (the main one: the Claude Code overflow)."""
    return CtxscopeApp(
        str(path),
        discover=lambda: [],
        live=False,
        policy=get_preset(policy) if policy else None,
    )


class BuiltSessionApp(CtxscopeApp):
    """A session screen on a session built in code (no file)."""

    def __init__(self, *, policy: str = "opencode", window: int | None = 120_000) -> None:
        super().__init__(discover=lambda: [], live=False)
        self._session = claude_like_session(8, window=window, big_lines=200)
        self._policy_name = policy

    def on_mount(self) -> None:
        self.push_screen(
            SessionScreen(session=self._session, live=False, policy=get_preset(self._policy_name))
        )


app = picker_app()
