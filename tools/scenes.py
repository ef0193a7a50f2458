"""The app in the states a user can reach, by name: the snapshot tests and ``make screenshots``
draw the same scenes.

A :class:`Scene` is an app factory and the steps that bring the app to one state (keys, mostly),
at a fixed terminal size and theme. Scenes are deterministic: the committed sample sessions, a
fixed list of "discovered" sessions with fixed times, no live tail, the mock LLM, and
:meth:`Scene.run` waits for every worker, stops cursors blinking and clears notifications (their
timing varies) before the picture. The dates the picker shows are local time: pin the zone with
:func:`fixed_timezone` first.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input
from textual.worker import WorkerCancelled

from core.formats import load_session
from core.formats.discovery import DiscoveredSession
from core.model.session import Session, SourceFormat
from core.policy import Policy, get_preset
from tui.app import DARK_THEME, LIGHT_THEME, CtxscopeApp
from tui.screens.compaction import CompactionScreen
from tui.screens.compaction_text import cut_of
from tui.screens.session import SessionScreen
from tui.widgets.policy_panel import PolicyPanel

ReturnT = TypeVar("ReturnT")

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_sessions"
OVERFLOW = SAMPLES / "claude-code" / "overflow.jsonl"
"""The main sample (``make run`` opens it): a session that overflows at its last call."""
COMPACTED = SAMPLES / "claude-code" / "compacted.jsonl"
"""A session the agent compacted twice (auto, then manual): it never overflows."""
CODEX = SAMPLES / "codex" / "rollout-2026-03-14T09-12-33-019ceb67-7968-7c30-9ae9-f3a029d24123.jsonl"
PI = SAMPLES / "pi" / "session.jsonl"
OPENCODE = SAMPLES / "opencode" / "export.json"

WIDE = (120, 36)
"""Terminal size of a scene (columns, rows) unless it says otherwise."""
NARROW = (80, 24)
"""The smallest terminal the layout is made for."""
FIXED_TIME = 1_773_480_000.0
"""2026-03-14: the picker's dates never change."""
ENDLESS_GROUPS = frozenset({"live"})
"""Worker groups that never finish on their own (the live-tail watcher)."""

_PICKER_ROWS = (
    ("claude-code/overflow.jsonl", SourceFormat.CLAUDE_CODE, "CI has been red on and off…"),
    ("claude-code/compacted.jsonl", SourceFormat.CLAUDE_CODE, "per-app delivery cache"),
    ("claude-code/long.jsonl", SourceFormat.CLAUDE_CODE, "a long day of small requests"),
    (str(CODEX.relative_to(SAMPLES)), SourceFormat.CODEX, "add filters to the orders API"),
    ("pi/session.jsonl", SourceFormat.PI, "config refactor"),
    ("opencode/export.json", SourceFormat.OPENCODE, 'fix "Invalid Date" in the dashboard'),
    ("ctxscope/long.jsonl", SourceFormat.CTXSCOPE, "6,000 messages"),
)


def discovered_samples() -> list[DiscoveredSession]:
    """The committed samples as the picker would list them (fixed times, newest first)."""
    found = []
    for k, (relative, fmt, title) in enumerate(_PICKER_ROWS):
        path = SAMPLES / relative
        if path.exists():
            found.append(
                DiscoveredSession(
                    path=str(path),
                    format=fmt,
                    project="/home/dev/src/parcelhub",
                    modified=FIXED_TIME - k * 5400,
                    size_bytes=path.stat().st_size,
                    title=title,
                    # the session's own time; the last row's is left out, to show the mark of
                    # a date that is only the file's
                    last_active=None if fmt is SourceFormat.CTXSCOPE else FIXED_TIME - k * 5400,
                )
            )
    return found


def fixed_timezone() -> None:
    """Dates on screen are local time: pin the zone so every machine draws the same."""
    os.environ["TZ"] = "UTC"
    if hasattr(time, "tzset"):
        time.tzset()


# -- driving the app ---------------------------------------------------------------------------


SETTLE_LIMIT_S = 300.0
"""How long :func:`settle` waits at most for the app's workers and paints (a worker that never
ends fails the scene, naming itself, instead of hanging the test run)."""


async def settle(pilot: Pilot[ReturnT], rounds: int = 50, *, ignore: tuple[str, ...] = ()) -> None:
    """Wait until every finite worker is done and the messages they posted are handled.

    ``ignore``: worker groups not to wait for (e.g. ``("replay",)`` to act while it runs).
    """
    app = pilot.app
    skip = ENDLESS_GROUPS | set(ignore)
    deadline = time.monotonic() + SETTLE_LIMIT_S
    for _ in range(rounds):
        await pilot.pause()
        while _paint_pending(app):  # a replay or its insights about to start (after a frame)
            _before(deadline, "a paint the session screen waits for")
            await pilot.pause(0.02)
        busy = [w for w in app.workers if w.group not in skip and w.is_running]
        if not busy:
            await pilot.pause()
            busy = [w for w in app.workers if w.group not in skip and w.is_running]
            if not busy:
                break
        for worker in busy:
            # a cancelled worker (superseded by a newer selection, its pane closed) is done
            # (polled: a wait given up on would cancel the worker's task)
            while worker.is_running:
                _before(deadline, f"the worker {worker.name!r} ({worker.group})")
                await pilot.pause(0.02)
            with contextlib.suppress(WorkerCancelled):
                await worker.wait()
    await pilot.pause()


def _before(deadline: float, what: str) -> float:
    """The seconds left before ``deadline``; past it, an error naming ``what`` never ended."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise AssertionError(f"{what} did not end within {SETTLE_LIMIT_S:.0f} s")
    return left


def _paint_pending(app: App[ReturnT]) -> bool:
    return any(
        isinstance(screen, SessionScreen)
        and (screen.after_paint_pending or screen.notices_pending or screen.insights_pending)
        for screen in app.screen_stack
    )


async def press(pilot: Pilot[ReturnT], *keys: str, ignore: tuple[str, ...] = ()) -> None:
    """Press ``keys`` one at a time, letting each one's work finish (but the ``ignore`` groups')."""
    for key in keys:
        await pilot.press(key)
        await settle(pilot, ignore=ignore)


async def freeze(pilot: Pilot[ReturnT]) -> None:
    """Remove what changes from run to run: blinking cursors and notifications."""
    app = pilot.app
    for screen in app.screen_stack:
        for field in screen.query(Input):
            field.cursor_blink = False
    app.clear_notifications()
    await pilot.pause()


Steps = Callable[[Pilot[None]], Awaitable[None]]


def keys(*pressed: str, ignore: tuple[str, ...] = ()) -> Steps:
    """Steps that press ``pressed`` one at a time (not waiting for the ``ignore`` groups)."""

    async def steps(pilot: Pilot[None]) -> None:
        await press(pilot, *pressed, ignore=ignore)

    return steps


async def as_opened(pilot: Pilot[None]) -> None:
    """No steps: the state the app opens in."""


@dataclass(frozen=True)
class Scene:
    """One state of the app: a name, what it shows, the app to start and how to get there."""

    name: str
    title: str
    make_app: Callable[[], App[None]]
    steps: Steps = as_opened
    size: tuple[int, int] = WIDE
    theme: str = DARK_THEME
    running: tuple[str, ...] = ()
    """Worker groups still at work in this state (not waited for)."""
    screenshot: bool = False
    """Part of ``make screenshots`` (the pictures of the README)."""

    def app(self) -> App[None]:
        """A new app for this scene, titled with what it shows (the picture's title bar)."""
        app = self.make_app()
        app.title = self.title
        return app

    async def run(self, pilot: Pilot[None]) -> None:
        """Bring the running app to this state, ready for its picture."""
        shown = CompactionScreen.SHOW_TIMINGS
        CompactionScreen.SHOW_TIMINGS = False  # how long a compaction took varies run to run
        try:
            pilot.app.theme = self.theme
            await settle(pilot, ignore=self.running)
            await self.steps(pilot)
            await freeze(pilot)
            await pilot.pause(0.1)
            await settle(pilot, ignore=self.running)
        finally:
            CompactionScreen.SHOW_TIMINGS = shown


# -- apps ----------------------------------------------------------------------------------------


def picker_app(path: str | None = None) -> CtxscopeApp:
    """The session picker over the samples (``path``: asked to open on the command line); their
    figures analysed afresh in a thread, the user's analysis cache left alone."""
    return CtxscopeApp(path, discover=discovered_samples, live=False, use_cache=False, jobs=1)


def session_app(path: Path = OVERFLOW, policy: str | None = None) -> CtxscopeApp:
    """A session screen on a sample file, opened as ``ctxscope PATH [--policy P]`` does."""
    chosen = get_preset(policy) if policy else None
    return CtxscopeApp(str(path), discover=lambda: [], live=False, policy=chosen)


class LoadedSessionApp(CtxscopeApp):
    """A session screen on a session already in memory (no file to read)."""

    def __init__(self, session: Session, policy: Policy | None = None) -> None:
        super().__init__(discover=lambda: [], live=False)
        self.session = session
        self.policy = policy

    def on_mount(self) -> None:
        self.push_screen(SessionScreen(session=self.session, live=False, policy=self.policy))


def window_unknown_app() -> LoadedSessionApp:
    """The main sample as if its model's window were not known (nor recorded)."""
    session = load_session(OVERFLOW)
    session.context_window = None
    session.window_source = "unknown"
    return LoadedSessionApp(session)


# -- steps ---------------------------------------------------------------------------------------


def _session_screen(pilot: Pilot[None]) -> SessionScreen:
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen) and screen.state is not None
    return screen


async def _first_compaction_cut(pilot: Pilot[None]) -> None:
    # the first message after the first compaction's cut: the list shows that compaction's head
    # (above) and tail (below), the gauge the call where it fired
    screen = _session_screen(pilot)
    result = screen.state.result if screen.state is not None else None
    assert result is not None
    first = next(e for e in result.events if e.kind == "compact")
    screen.select_message(cut_of(first))
    await settle(pilot)


async def _first_truncated_output(pilot: Pilot[None]) -> None:
    screen = _session_screen(pilot)
    result = screen.state.result if screen.state is not None else None
    assert result is not None
    screen.select_message(next(m.message_index for m in result.messages if m.truncated))
    await settle(pilot)


async def _until(pilot: Pilot[None], done: Callable[[], bool], seconds: float = 10.0) -> None:
    """Let the app run until ``done()`` (a mount, a timer: what no worker says), then settle."""
    for _ in range(int(seconds / 0.02)):
        if done():
            break
        await pilot.pause(0.02)
    await settle(pilot)


async def _open_policy_panel(pilot: Pilot[None]) -> PolicyPanel:
    """Press ``p`` and wait until the panel is built and its preset switcher has the focus."""
    await press(pilot, "p")
    app = pilot.app

    def ready() -> bool:
        panels = app.screen.query(PolicyPanel)
        return bool(panels) and app.focused is not None and app.focused.id == "pp-preset"

    await _until(pilot, ready)
    return app.screen.query_one(PolicyPanel)


async def _policy_field(pilot: Pilot[None], path: str, text: str) -> None:
    """Open the policy panel at the last call and type ``text`` into the field at ``path``."""
    await press(pilot, "G")
    panel = await _open_policy_panel(pilot)
    await panel.open_sections(path.partition(".")[0])
    await settle(pilot)
    panel.field_widget(path).focus()
    await settle(pilot)
    await press(pilot, "ctrl+u", *text)
    await _until(pilot, lambda: not panel.edit_pending)  # the debounce, then the replay it starts


async def _policy_panel_open(pilot: Pilot[None]) -> None:
    await _open_policy_panel(pilot)


async def _max_bytes_12000(pilot: Pilot[None]) -> None:
    await _policy_field(pilot, "truncation.max_bytes", "12000")


async def _max_bytes_zero(pilot: Pilot[None]) -> None:
    await _policy_field(pilot, "truncation.max_bytes", "0")


def _compaction_drawn(pilot: Pilot[None]) -> bool:
    """The compaction screen is up and its summary is drawn (it is drawn a little after it
    arrives)."""
    screen = pilot.app.screen
    return isinstance(screen, CompactionScreen) and screen.drawn


async def _compaction_shown(pilot: Pilot[None]) -> None:
    """Wait for the compaction screen's summary, then show its end, as streaming leaves it (a
    summary that arrives in one piece, as on a busy machine, is not scrolled while it streams)."""
    await _until(pilot, lambda: _compaction_drawn(pilot))
    screen = pilot.app.screen
    assert isinstance(screen, CompactionScreen)
    screen.query_one("#cs-summary-box").scroll_end(animate=False)
    await settle(pilot)


async def _compaction_done(pilot: Pilot[None]) -> None:
    await press(pilot, "G", "c")
    await _compaction_shown(pilot)


async def _compaction_at_the_recorded_one(pilot: Pilot[None]) -> None:
    await press(pilot, "right_square_bracket", "c")
    await _compaction_shown(pilot)


async def _compaction_replayed(pilot: Pilot[None]) -> None:
    await _compaction_done(pilot)
    await press(pilot, "left_square_bracket")


async def _breakdown_at_the_fullest_call(pilot: Pilot[None]) -> None:
    # b, then the call the first compaction fired after: the band shows what filled the window
    await press(pilot, "b")
    screen = _session_screen(pilot)
    result = screen.state.result if screen.state is not None else None
    assert result is not None
    first = next(e for e in result.events if e.kind in ("compact", "recorded-compaction"))
    call = first.call_index if first.call_index is not None else result.call_count
    index = screen.state.message_for_call(max(call - 1, 0)) if screen.state else None
    screen.select_message(index or 0)
    await settle(pilot)


async def _forgotten_of_the_first_compaction(pilot: Pilot[None]) -> None:
    # ], c, [: the compaction screen on the recording's first compaction
    await press(pilot, "right_square_bracket", "c")
    await _compaction_shown(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, CompactionScreen)
    screen.show_event(0)
    await settle(pilot)


async def _detail_clicked(pilot: Pilot[None]) -> None:
    await press(pilot, *["down"] * 5)
    await pilot.click("#detail")
    await settle(pilot)


async def _window_prompt_refused(pilot: Pilot[None]) -> None:
    await press(pilot, "w", "0", "enter")


SCENES: tuple[Scene, ...] = (
    # the picker
    Scene(
        "picker",
        "ctxscope: pick a session (the list sorted by peak % of the window)",
        picker_app,
        keys("down", "s"),
        screenshot=True,
    ),
    Scene(
        "picker-empty",
        "no session found on this machine: the picker says where it looked",
        lambda: CtxscopeApp(discover=lambda: [], live=False),
    ),
    Scene(
        "picker-filtered",
        "the picker filtered to the Codex session",
        picker_app,
        keys(*"codex"),
    ),
    Scene(
        "picker-error",
        "a path that cannot be opened: the picker says why",
        lambda: picker_app("~/no-such-session.jsonl"),
    ),
    # the session screen
    Scene("session-overflow-sample", "the main sample as `make run` opens it", session_app),
    Scene(
        "session",
        "ctxscope: session, gauge and the first compaction's head/tail",
        lambda: session_app(COMPACTED, "seed"),
        _first_compaction_cut,
        screenshot=True,
    ),
    Scene(
        "session-light",
        "ctxscope: the overflow sample at its last call (light theme)",
        session_app,
        keys("G"),
        theme=LIGHT_THEME,
        screenshot=True,
    ),
    Scene(
        "session-narrow",
        "80x24: the detail pane goes below the list",
        session_app,
        keys("down", "down"),
        size=NARROW,
    ),
    Scene(
        "session-detail-focused",
        "a click on the detail pane gives it the focus (here on a tool output)",
        session_app,
        _detail_clicked,
    ),
    Scene(
        "session-truncated-output",
        "the first output the policy truncates: ✂ rows and the model's preview",
        lambda: session_app(OVERFLOW, "seed"),
        _first_truncated_output,
    ),
    Scene(
        "session-next-compaction",
        "]: the next compaction of the replay, its head and tail in the gutter",
        lambda: session_app(COMPACTED, "opencode"),
        keys("right_square_bracket"),
    ),
    Scene(
        "breakdown",
        "ctxscope: b, what fills the window at every call, the selected call beside it",
        lambda: session_app(COMPACTED),
        _breakdown_at_the_fullest_call,
        screenshot=True,
    ),
    Scene(
        "session-search",
        "/ flaky: the matches highlighted, n/N between them",
        session_app,
        keys("slash", *"flaky", "enter"),
    ),
    Scene("session-codex", "a Codex rollout", lambda: session_app(CODEX)),
    Scene("session-pi", "a pi session", lambda: session_app(PI)),
    Scene("session-opencode", "an opencode export", lambda: session_app(OPENCODE)),
    Scene(
        "session-window-unknown",
        "no window known: the header and the status line say so",
        window_unknown_app,
    ),
    Scene(
        "window-prompt",
        "w: the window prompt",
        window_unknown_app,
        keys("w"),
    ),
    Scene(
        "window-prompt-refused",
        "the window prompt refuses 0 and says why",
        window_unknown_app,
        _window_prompt_refused,
    ),
    Scene(
        "command-palette",
        "ctrl+p, preset: the command palette offers the presets",
        session_app,
        keys("ctrl+p", *"preset"),
    ),
    Scene("help", "?: every key and what the row marks mean", session_app, keys("question_mark")),
    # the policy panel
    Scene("policy-panel-open", "p: the policy panel", session_app, _policy_panel_open),
    Scene(
        "policy-panel",
        "ctxscope: editing the policy (truncation.max_bytes)",
        session_app,
        _max_bytes_12000,
        screenshot=True,
    ),
    Scene(
        "policy-panel-invalid",
        "an invalid value: the model's message under the field, nothing applied",
        session_app,
        _max_bytes_zero,
    ),
    # the overflow view
    Scene(
        "overflow",
        "ctxscope: why the session overflowed",
        session_app,
        keys("o"),
        screenshot=True,
    ),
    Scene(
        "overflow-none",
        "the overflow view on a session that never overflowed",
        lambda: session_app(COMPACTED),
        keys("o"),
    ),
    # the compaction screen
    Scene(
        "compaction",
        "ctxscope: compaction run now (mock LLM)",
        lambda: session_app(OVERFLOW, "seed"),
        _compaction_done,
        screenshot=True,
    ),
    Scene(
        "compaction-at-recorded",
        "], c: compaction at the recording's own, on the whole context the model had there",
        lambda: session_app(COMPACTED),
        _compaction_at_the_recorded_one,
    ),
    Scene(
        "compaction-forgotten",
        "ctxscope: why the recorded compaction ran, what it cost and what its summary forgot",
        lambda: session_app(COMPACTED),
        _forgotten_of_the_first_compaction,
        size=(120, 44),
        screenshot=True,
    ),
    Scene(
        "compaction-replay",
        "[: the replay's last compaction in the compaction screen",
        lambda: session_app(COMPACTED, "seed"),
        _compaction_replayed,
    ),
)
"""Every scene the real app reaches by itself (tests add the ones that need a held loader)."""


def scene(name: str) -> Scene:
    """The scene called ``name``."""
    return next(s for s in SCENES if s.name == name)
