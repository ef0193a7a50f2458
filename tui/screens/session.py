"""The session screen: the message list, the token gauge, the detail pane and the policy panel.

It owns the workers: loading (``load``), replaying (``replay``, one at a time, cancellable with a
``threading.Event``), searching (``search``), and the live tail (``live`` watches, ``live-load``
reloads). Widgets post messages here; this screen updates the shared
:class:`~tui.state.SessionState` and tells each widget to redraw.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message as TextualMessage
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Label
from textual.worker import get_current_worker

from core.formats import LoadError, load_session, load_session_head
from core.models import Session
from core.policy import Policy
from core.tokens import message_text
from core.units import compact_tokens, format_bytes
from tui.live import LiveFile, watch_file
from tui.messages import JumpToMessage
from tui.screens.overflow import OverflowScreen
from tui.state import SessionState, default_policy_for
from tui.widgets.detail import DetailPane
from tui.widgets.footer import KeysFooter
from tui.widgets.gauge import TokenGauge
from tui.widgets.load_progress import LoadProgress
from tui.widgets.message_list import MessageList
from tui.widgets.policy_panel import PolicyPanel

if TYPE_CHECKING:
    from core.replay import Replayer

PROGRESS_INTERVAL_S = 0.2
"""Loader and replay progress reach the screen at most this often (each update is a frame the
UI thread draws while the loader thread wants the interpreter)."""
FIRST_PAINT_DELAY_S = 0.05
"""The replay and the gauge start this long after the session is installed: after its first frame."""
PREVIEW_MIN_BYTES = 8_000_000
"""A file bigger than this is shown in two steps: its first part, then the whole of it."""
PREVIEW_BYTES = 1_000_000
"""How much of a big file the first part is (about 1,000 small messages, 30 ms to read)."""
PREVIEW_PAINT_WAIT_S = 1.0
"""The rest of a big file is read once its first part is painted, or after this long."""


def _freeze_heap() -> None:
    """Move everything alive now (the loaded session: millions of objects for a big file) out of
    the cyclic garbage collector's sight, so a full collection never stalls a key press.
    Objects are still freed by reference counting when the session is replaced."""
    import gc

    gc.freeze()
    # The young collections find no garbage in a loaded session's UI work, only cost time at
    # key presses: run them ten times less often (full collections stay as rare as they were).
    gc.set_threshold(7_000, 10, 10)


# -- messages the workers post -------------------------------------------------------------------


class _Loaded(TextualMessage):
    def __init__(self, session: Session, seconds: float) -> None:
        super().__init__()
        self.session = session
        self.seconds = seconds


class _Previewed(TextualMessage):
    """The first part of a big file, to show while the rest is read."""

    def __init__(self, session: Session, seconds: float) -> None:
        super().__init__()
        self.session = session
        self.seconds = seconds


class _LoadFailed(TextualMessage):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class _LoadProgressed(TextualMessage):
    def __init__(self, bytes_read: int, total_bytes: int, messages: int) -> None:
        super().__init__()
        self.bytes_read = bytes_read
        self.total_bytes = total_bytes
        self.messages = messages

    def can_replace(self, message: TextualMessage) -> bool:
        return isinstance(message, _LoadProgressed)


class _ReplayDone(TextualMessage):
    def __init__(self, result: Any, generation: int, seconds: float) -> None:
        super().__init__()
        self.result = result
        self.generation = generation
        self.seconds = seconds


class _ReplayEnded(TextualMessage):
    """A replay that produced no result: cancelled, or failed with ``error``."""

    def __init__(self, generation: int, error: str | None) -> None:
        super().__init__()
        self.generation = generation
        self.error = error


class _ReplayProgressed(TextualMessage):
    def __init__(self, generation: int, done: int, total: int) -> None:
        super().__init__()
        self.generation = generation
        self.done = done
        self.total = total

    def can_replace(self, message: TextualMessage) -> bool:
        return isinstance(message, _ReplayProgressed)


class _SearchDone(TextualMessage):
    def __init__(self, text: str, matches: list[int]) -> None:
        super().__init__()
        self.text = text
        self.matches = matches


class _LiveReloaded(TextualMessage):
    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session


class _LiveProblem(TextualMessage):
    def __init__(self, text: str, *, stop_tail: bool) -> None:
        super().__init__()
        self.text = text
        self.stop_tail = stop_tail


# -- small pieces --------------------------------------------------------------------------------


class WindowPrompt(ModalScreen[int | None]):
    """Ask for the context window when the session does not record one."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, model: str | None, current: int | None) -> None:
        super().__init__()
        self._model = model
        self._current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="window-dialog", classes="dialog"):
            yield Label("Context window", classes="dialog-title")
            model = self._model or "this model"
            yield Label(f"Tokens {model} can hold (e.g. 200000). Enter to apply, Esc to cancel.")
            yield Input(
                value=str(self._current) if self._current else "",
                placeholder="200000",
                type="integer",
                id="window-input",
            )
            yield Label("", id="window-error", classes="error-text")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.replace(",", "").replace("_", "").strip()
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value <= 0:
            self.query_one("#window-error", Label).update("A positive number of tokens, please.")
            return
        self.dismiss(value)


class SessionHeader(Horizontal):
    """Session name, format, model, window and the active policy."""

    def compose(self) -> ComposeResult:
        yield Label("ctxscope", id="hdr-app")
        yield Label("", id="hdr-name")
        yield Label("", id="hdr-policy", classes="hdr-field")
        yield Label("", id="hdr-window", classes="hdr-field")
        yield Label("", id="hdr-model", classes="hdr-field")
        yield Label("", id="hdr-format", classes="hdr-field")

    def show(self, state: SessionState | None, name: str) -> None:
        self.query_one("#hdr-name", Label).update(name)
        if state is None:
            for field in ("#hdr-format", "#hdr-model", "#hdr-window", "#hdr-policy"):
                self.query_one(field, Label).update("")
            return
        session = state.session
        self.query_one("#hdr-format", Label).update(str(session.format))
        self.query_one("#hdr-model", Label).update(session.model or "model unknown")
        window = state.window
        window_label = self.query_one("#hdr-window", Label)
        if window:
            window_label.update(f"window {window:,} ({state.window_source})")
            window_label.remove_class("-unknown")
        else:
            window_label.update("window unknown (w to set)")
            window_label.add_class("-unknown")
        self.query_one("#hdr-policy", Label).update(f"policy {state.policy.name}")


class StatusLine(Horizontal):
    """Peak context against the window, what the replay found, and what is running."""

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
        recorded = summary.peak_recorded
        simulated = summary.peak_simulated
        if window:
            text = f"peak {simulated:,} / {window:,} · {simulated / window:.0%}"
            if recorded is not None and recorded != simulated:
                text += f" (rec. {recorded:,} · {recorded / window:.0%})"
        else:
            text = f"peak {simulated:,} · window unknown (w)"
            if recorded is not None and recorded != simulated:
                text += f" (rec. {recorded:,})"
        peak_label.update(text)
        if window:
            share = simulated / window
            peak_label.add_class("-over" if share > 1 else "-near" if share >= 0.85 else "-ok")
        parts = [f"{state.message_count:,} msgs", f"{summary.calls:,} calls"]
        overflow = state.first_overflow()
        if overflow is not None:
            call, _message, simulated_overflow = overflow
            if simulated_overflow:
                parts.append(f"overflows at call {call} (o)")
            else:
                parts.append(f"rec. overflow at call {call} avoided (o)")
        if summary.compactions:
            parts.append(f"{summary.compactions} compactions ([ ])")
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


# -- the screen ----------------------------------------------------------------------------------


class SessionScreen(Screen[str | None]):
    """One session: list, gauge, detail, policy. Dismisses with an error text if it cannot load."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # noqa: RUF012 (Screen declares it)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]  # noqa: RUF012 (Screen declares it)

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "overflow", "Overflow"),
        Binding("c", "compaction", "Compact"),
        Binding("p", "toggle_policy", "Policy"),
        Binding(
            "left_square_bracket", "prev_compaction", "Prev compaction", key_display="[", show=False
        ),
        Binding("right_square_bracket", "next_compaction", "Compaction", key_display="]"),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("n", "next_match", "Next match", show=False),
        Binding("N", "prev_match", "Prev match", show=False),
        Binding("f", "follow", "Follow"),
        Binding("w", "set_window", "Window", show=False),
        Binding("x", "cancel", "Cancel", show=False),
        Binding("tab", "focus_next", "Focus", show=False),
        Binding("escape", "back", "Back"),
    ]

    def __init__(
        self,
        path: str | None = None,
        *,
        session: Session | None = None,
        window: int | None = None,
        policy: Policy | None = None,
        live: bool = True,
    ) -> None:
        super().__init__()
        self.path = path if path is not None else (session.path if session else None)
        self._initial_session = session
        self._window = window
        self._initial_policy = policy
        self._live_enabled = live
        self.state: SessionState | None = None
        self.load_seconds: float | None = None
        self.replay_seconds: float | None = None
        self.replaying = False
        self.reading = False
        self.partial = False
        """What is shown is the first part of the file; the rest is still being read."""
        self.preview_seconds: float | None = None
        self._preview_painted = threading.Event()
        """Set once the first part is on screen: the rest of the load waits for it (the two would
        share one interpreter, and the first frame matters more)."""
        self.after_paint_pending = False
        """The gauge and the replay are about to start (right after the first frame)."""
        self.follow = False
        self._generation = 0
        self._replay_cancel: threading.Event | None = None
        self._replay_lock = threading.Lock()
        self._replayer: Replayer | None = None
        self._replayer_session: Session | None = None
        self._live_file: LiveFile | None = None
        self._live_stop = threading.Event()
        self.live_status: str | None = None
        self._list: MessageList | None = None
        self._detail: DetailPane | None = None
        self._gauge: TokenGauge | None = None

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        if self._initial_session is None and self.path is not None:
            # start reading now: mounting the widgets below overlaps with the load
            self._begin_load(self.path)
        yield SessionHeader(id="session-header")
        yield LoadProgress(id="load-progress")
        with Vertical(id="gauge-slot"):
            yield TokenGauge(id="gauge")
        with Horizontal(id="body"):
            yield MessageList(id="messages")
            yield DetailPane(id="detail")
            yield Vertical(id="policy-slot")
        with Horizontal(id="search-bar"):
            yield Label("/", id="search-label")
            yield Input(placeholder="search messages (Enter: find, Esc: close)", id="search-input")
        yield StatusLine(id="status")
        yield KeysFooter(compact=True)

    @property
    def message_list(self) -> MessageList:
        if self._list is None:
            self._list = self.query_one("#messages", MessageList)
        return self._list

    @property
    def detail(self) -> DetailPane:
        if self._detail is None:
            self._detail = self.query_one("#detail", DetailPane)
        return self._detail

    @property
    def status(self) -> StatusLine:
        return self.query_one("#status", StatusLine)

    @property
    def gauge(self) -> TokenGauge:
        if self._gauge is None:
            self._gauge = self.query_one("#gauge", TokenGauge)
        return self._gauge

    def _panel(self) -> PolicyPanel | None:
        panels = self.query("#policy-panel").results(PolicyPanel)
        return next(panels, None)

    @property
    def display_name(self) -> str:
        if self.path:
            return Path(self.path).name
        if self.state is not None:
            return self.state.session.id
        return "session"

    def on_mount(self) -> None:
        self.message_list.cursor_moved = self._cursor_moved
        self.query_one("#search-bar").display = False
        self.query_one("#policy-slot").display = False
        self.query_one(SessionHeader).show(None, self.display_name)
        if self._initial_session is not None:
            self.query_one(LoadProgress).display = False
            self._install(self._initial_session)
        elif self.path is not None:
            self._show_load_progress(self.path)
        else:
            self.dismiss("no session to open")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide what does not apply: follow without a live file; greyed while nothing is loaded."""
        if action == "follow":  # the tail is watched once the whole file is read
            return self._live_file is not None and not self.partial
        if action in ("overflow", "compaction", "next_compaction", "prev_compaction"):
            if self.partial:  # they need the replay of the whole session
                return None
            return True if self.state is not None and self.state.message_count else None
        if action == "search":
            return True if self.state is not None and self.state.message_count else None
        return True

    # -- loading -----------------------------------------------------------------------------------

    def _begin_load(self, path: str) -> None:
        if self._live_enabled and Path(path).is_file():
            # the offset is taken before reading, so growth during the load is not missed
            self._live_file = LiveFile(Path(path))
        self.reading = True
        self._load(path, self._window)

    def _show_load_progress(self, path: str) -> None:
        if not self.reading:
            return
        progress = self.query_one(LoadProgress)
        try:
            size: int | None = Path(path).stat().st_size
        except OSError:
            size = None
        progress.remove_class("-strip")
        progress.start(path, size)
        progress.display = True
        self._show_reading(True)
        self.status.activity(f"loading {format_bytes(size)}…", busy=True)

    def _show_reading(self, reading: bool) -> None:
        """While a file is read, the progress box is all there is (toggled per widget: a class
        on the screen would restyle every widget in it, twice per load)."""
        self.query_one("#gauge-slot").display = not reading
        self.query_one("#body").display = not reading

    @work(
        thread=True,
        exclusive=True,
        group="load",
        exit_on_error=False,
        description="Loading the session",
    )
    def _load(self, path: str, window: int | None) -> None:
        worker = get_current_worker()
        last = 0.0

        def progress(bytes_read: int, total_bytes: int, messages: int) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= PROGRESS_INTERVAL_S:
                last = now
                self.post_message(_LoadProgressed(bytes_read, total_bytes, messages))

        head = self._load_head(path, window)
        started = time.perf_counter()
        try:
            fmt = head.format if head is not None else None  # detected once, for both reads
            session = load_session(path, format=fmt, window=window, progress=progress)
        except LoadError as exc:
            self.post_message(_LoadFailed(str(exc)))
            return
        except OSError as exc:
            self.post_message(_LoadFailed(f"{path}: cannot read ({exc.strerror or exc})"))
            return
        except Exception as exc:  # a loader bug must not take the UI down
            self.post_message(_LoadFailed(f"{path}: could not load ({type(exc).__name__}: {exc})"))
            return
        seconds = time.perf_counter() - started
        _freeze_heap()  # before the UI thread touches it: no full collection on the first frame
        if not worker.is_cancelled:
            self.post_message(_Loaded(session, seconds))

    def _load_head(self, path: str, window: int | None) -> Session | None:
        """Read and post the first part of a big file (in the load worker, before the rest)."""
        try:
            if Path(path).stat().st_size <= PREVIEW_MIN_BYTES:
                return None
        except OSError:
            return None  # the whole load says what is wrong
        started = time.perf_counter()
        try:
            head = load_session_head(path, PREVIEW_BYTES, window=window)
        except Exception:  # no first part then: the whole load reports what is wrong
            return None
        if head is not None and head.messages and not get_current_worker().is_cancelled:
            self._preview_painted.clear()
            self.post_message(_Previewed(head, time.perf_counter() - started))
            self._preview_painted.wait(PREVIEW_PAINT_WAIT_S)
        return head

    def on__previewed(self, event: _Previewed) -> None:
        if not self.reading or self.state is not None:
            self._preview_painted.set()
            return
        self.partial = True
        self.preview_seconds = event.seconds
        self._show_reading(False)
        self.query_one(LoadProgress).add_class("-strip")
        self.query_one(LoadProgress).showing_part(len(event.session.messages))
        self._install(event.session)
        self.call_after_refresh(self._preview_painted.set)

    def on__load_progressed(self, event: _LoadProgressed) -> None:
        if self.reading:
            self.query_one(LoadProgress).update_progress(
                event.bytes_read, event.total_bytes, event.messages
            )

    def on__load_failed(self, event: _LoadFailed) -> None:
        self.reading = False
        self._show_reading(False)
        if self.partial and self.state is not None:
            # the first part is shown: keep it (and say it is only that) rather than lose it
            self.partial = False
            self.query_one(LoadProgress).display = False
            self.app.notify(
                f"{event.error}. Showing only the first {self.state.message_count:,} messages.",
                title="Could not read the whole session",
                severity="error",
                timeout=10,
            )
            self.live_status = "first part only"
            self.refresh_bindings()
            self._refresh_chrome()
            self.start_replay()
            return
        self.app.notify(event.error, title="Cannot open session", severity="error", timeout=8)
        self.dismiss(event.error)

    def on__loaded(self, event: _Loaded) -> None:
        self.reading = False
        self._show_reading(False)
        self.load_seconds = event.seconds
        self.query_one(LoadProgress).display = False
        if self.partial and self.state is not None:
            self._complete(event.session)
        else:
            self._install(event.session)

    def _complete(self, session: Session) -> None:
        """The whole file is read: it takes the place of its first part (selection kept)."""
        self.partial = False
        self.apply_grown_session(session, replay=False)
        selected = self.message_list.selected_message
        if selected is not None:
            # the first part's last messages may have changed (a reply cut by the head)
            self.detail.show(selected, force=True)
        self.refresh_bindings()
        self._first_look(session)
        self.after_paint_pending = True
        self.set_timer(FIRST_PAINT_DELAY_S, lambda: self._after_complete(session))

    def _after_complete(self, session: Session) -> None:
        self.after_paint_pending = False
        if self.state is None or self.state.session is not session:
            return
        self.start_replay()
        self._start_live()

    def _install(self, session: Session) -> None:
        policy = self._initial_policy or default_policy_for(session)
        if self._window is not None and session.context_window != self._window:
            session.context_window = self._window
            session.window_source = "user"
        self.state = SessionState(session, policy)
        self.refresh_bindings()
        self.message_list.set_state(self.state)
        self.detail.set_state(self.state)
        self._refresh_chrome()
        if session.messages:
            self.message_list.select_message(0)
            self.detail.show(0)
        else:
            self.app.notify(
                f"{self.display_name}: this session has no messages", severity="warning"
            )
        self.message_list.focus()
        if not self.partial:
            self._first_look(session)
        # Paint the list first; the gauge, the replay and the watcher start right after, so a
        # CPU-bound replay thread never delays the first frame.
        self.after_paint_pending = True
        self.set_timer(FIRST_PAINT_DELAY_S, lambda: self._after_first_paint(session))

    def _first_look(self, session: Session) -> None:
        """What the user should know about a session as soon as it is all read."""
        state = self.state
        policy = state.policy if state is not None else None
        if not session.context_window and not (policy and policy.context_window):
            self.app.notify(
                f"The context window of {session.model or 'this model'} is unknown: press w to "
                "set it (or start with --window N). Overflow checks need it.",
                title="Window unknown",
                severity="warning",
                timeout=10,
            )
        for diagnostic in session.diagnostics[:1]:
            if str(diagnostic.severity) == "error":
                self.app.notify(diagnostic.message, title="Loader", severity="warning")

    def _after_first_paint(self, session: Session) -> None:
        state = self.state
        if state is None:
            self.after_paint_pending = False
            return
        if state.session is not session:
            return  # replaced meanwhile (the whole file after its first part): not ours
        if not self.message_list.painted and self.is_current:
            # the first frame is not out yet (a big session takes a while to lay out)
            self.set_timer(FIRST_PAINT_DELAY_S, lambda: self._after_first_paint(session))
            return
        self.after_paint_pending = False
        self.gauge.update_result(session, None)
        if self.partial:
            return  # replay and live tail wait for the whole file
        self.start_replay()
        self._start_live()

    def _start_live(self) -> None:
        if self._live_enabled and self.path and Path(self.path).is_file():
            if self._live_file is None:
                self._live_file = LiveFile(Path(self.path))
            self._watch(self._live_file)
            self.refresh_bindings()

    def _mount_policy_panel(self, policy: Policy) -> None:
        """Mount the policy panel (on first use: it costs a few hundred ms to build)."""
        existing = self._panel()
        if existing is not None:
            existing.set_policy(policy)
            return
        self.query_one("#policy-slot").mount(PolicyPanel(policy, id="policy-panel"))

    def _refresh_chrome(self) -> None:
        self.query_one(SessionHeader).show(self.state, self.display_name)
        self.status.show(self.state)
        self._show_activity()

    def _show_activity(self) -> None:
        if self.partial:
            self.status.activity("first part · reading the rest…", busy=True)
            return
        if self.replaying:
            self.status.activity("replaying… (x: cancel)", busy=True)
            return
        parts = []
        if self.live_status:
            parts.append(self.live_status)
        elif self._live_file is not None:
            parts.append("● following" if self.follow else "○ live")
        self.status.activity(" · ".join(parts))

    # -- replay ------------------------------------------------------------------------------------

    def start_replay(self) -> None:
        """Re-run the replay for the current session and policy (cancelling a running one)."""
        state = self.state
        if state is None or self.partial:
            return  # a first part is not replayed: the policy applies when the whole is read
        if self._replay_cancel is not None:
            self._replay_cancel.set()
        cancel = threading.Event()
        self._replay_cancel = cancel
        self._generation += 1
        self.replaying = True
        self._show_activity()
        self._replay(state.session, state.policy, cancel, self._generation)

    @work(
        thread=True,
        exclusive=True,
        group="replay",
        exit_on_error=False,
        description="Replaying under the policy",
    )
    def _replay(
        self, session: Session, policy: Policy, cancel: threading.Event, generation: int
    ) -> None:
        with self._replay_lock:  # one replayer run at a time: it holds per-step state
            if cancel.is_set():
                self.post_message(_ReplayEnded(generation, None))
                return
            started = time.perf_counter()
            last = 0.0

            def progress(*args: Any) -> None:
                nonlocal last
                now = time.monotonic()
                if now - last >= PROGRESS_INTERVAL_S and len(args) >= 2:
                    last = now
                    self.post_message(_ReplayProgressed(generation, int(args[0]), int(args[1])))

            try:
                from core.replay import Replayer  # here, not at start-up: ~50 ms of imports

                if self._replayer is None or self._replayer_session is not session:
                    self._replayer = Replayer(session)
                    self._replayer_session = session
                result = self._replayer.run(policy, progress=progress, cancel=cancel)
            except Exception as exc:
                error = None if cancel.is_set() else f"replay failed: {type(exc).__name__}: {exc}"
                self.post_message(_ReplayEnded(generation, error))
                return
            if cancel.is_set():
                self.post_message(_ReplayEnded(generation, None))
                return
            self.post_message(_ReplayDone(result, generation, time.perf_counter() - started))

    def on__replay_progressed(self, event: _ReplayProgressed) -> None:
        if event.generation == self._generation and event.total:
            self.status.activity(
                f"replaying {event.done:,}/{event.total:,}… (x: cancel)", busy=True
            )

    def on__replay_done(self, event: _ReplayDone) -> None:
        state = self.state
        if state is None or event.generation != self._generation:
            return
        _freeze_heap()  # the result of a big session is millions of objects too
        self.replaying = False
        self.replay_seconds = event.seconds
        state.set_result(event.result)
        self.message_list.rows_changed()
        self.detail.refresh_decision()
        self.gauge.update_result(state.session, event.result)
        self._sync_gauge(self.message_list.selected_message)
        self._refresh_chrome()

    def on__replay_ended(self, event: _ReplayEnded) -> None:
        if event.generation != self._generation:
            return
        self.replaying = False
        state = self.state
        if event.error:
            if state is not None:
                state.replay_error = event.error
            self.app.notify(event.error, title="Replay", severity="error")
        else:
            self.app.notify("Replay cancelled: showing the previous result.", timeout=3)
        self._refresh_chrome()
        self.detail.refresh_decision()

    def action_cancel(self) -> None:
        if self._replay_cancel is not None and self.replaying:
            self._replay_cancel.set()

    # -- policy ------------------------------------------------------------------------------------

    def set_policy(self, policy: Policy, *, update_panel: bool = True) -> None:
        """Make ``policy`` the active one and replay under it."""
        state = self.state
        if state is None:
            self._initial_policy = policy
            return
        state.policy = policy
        if update_panel:
            panel = self._panel()
            if panel is not None:
                panel.set_policy(policy)
        self.query_one(SessionHeader).show(state, self.display_name)
        self.start_replay()

    def on_policy_panel_changed(self, event: PolicyPanel.Changed) -> None:
        event.stop()
        self.set_policy(event.policy, update_panel=False)

    def action_toggle_policy(self) -> None:
        """Show the policy panel in the detail pane's place (or put the detail pane back)."""
        self._show_policy(not self.query_one("#policy-slot").display)

    def _show_policy(self, show: bool) -> None:
        if show and self.state is not None and self._panel() is None:
            self._mount_policy_panel(self.state.policy)
        self.query_one("#policy-slot").display = show
        self.detail.display = not show
        if show:
            panel = self._panel()
            if panel is not None:
                self.call_after_refresh(panel.focus)
        else:
            self.message_list.focus()

    def action_set_window(self) -> None:
        state = self.state
        if state is None:
            return

        def apply(value: int | None) -> None:
            if value and self.state is not None:
                self.state.session.context_window = value
                self.state.session.window_source = "user"
                # the replayer caches results per policy, and the session itself changed
                self._replayer = None
                self._refresh_chrome()
                self.start_replay()

        self.app.push_screen(WindowPrompt(state.session.model, state.window), apply)

    # -- selection ---------------------------------------------------------------------------------

    def _cursor_moved(self, message_index: int) -> None:
        """The list's cursor moved (called in the same pass as the key: one frame for all)."""
        self.detail.show(message_index)
        self._sync_gauge(message_index)

    def on_message_list_highlighted(self, event: MessageList.Highlighted) -> None:
        event.stop()  # already handled by _cursor_moved

    def _sync_gauge(self, message_index: int | None) -> None:
        state = self.state
        if state is None or message_index is None or state.result is None:
            return
        call = state.call_for_message(message_index)
        if call is not None:
            self.gauge.select_call(call)

    def on_token_gauge_call_selected(self, event: TokenGauge.CallSelected) -> None:
        event.stop()
        self.select_message(event.message_index, sync_gauge=False)

    def on_jump_to_message(self, event: JumpToMessage) -> None:
        event.stop()
        self.select_message(event.message_index)

    def select_message(self, index: int, *, sync_gauge: bool = True, center: bool = True) -> None:
        """Select a message everywhere: list, detail and gauge."""
        if self.state is None or not self.state.message_count:
            return
        index = max(0, min(index, self.state.message_count - 1))
        self.message_list.select_message(index, center=center)
        self.detail.show(index)
        if sync_gauge:
            self._sync_gauge(index)

    # -- overflow and compaction ---------------------------------------------------------------------

    def action_overflow(self) -> None:
        state = self.state
        if state is None:
            return

        def jump(index: int | None) -> None:
            if index is not None:
                self.select_message(index)

        self.app.push_screen(OverflowScreen(state.session, state.result), jump)

    def action_compaction(self) -> None:
        state = self.state
        index = self.message_list.selected_message
        if state is None or index is None:
            return
        # imported on first use: it brings the compaction engine and the LLM clients (~60 ms)
        from tui.screens.compaction import CompactionScreen

        self.app.push_screen(CompactionScreen(state.session, state.policy, index, state.result))

    def _step_compaction(self, step: int) -> None:
        state = self.state
        if state is None:
            return
        events = state.compaction_events()
        if not events:
            self.app.notify("No compaction in this session under this policy.")
            return
        current = self.message_list.selected_message or 0
        if step > 0:
            candidates = [e for e in events if e[1] > current]
            target = candidates[0] if candidates else None
        else:
            candidates = [e for e in events if e[1] < current]
            target = candidates[-1] if candidates else None
        if target is None:
            self.app.notify("No further compaction that way.", timeout=2)
            return
        event_id, message_index = target
        event = state.event(event_id)
        if event is not None and event.kind == "compact":
            state.active_event = event_id
            state.rebuild()
            self.message_list.rows_changed()
        self.select_message(message_index)
        if event is not None:
            self.app.notify(
                event.reason, title=f"{event.kind} at message {message_index}", timeout=4
            )

    def action_prev_compaction(self) -> None:
        self._step_compaction(-1)

    def action_next_compaction(self) -> None:
        self._step_compaction(1)

    # -- search --------------------------------------------------------------------------------------

    def action_search(self) -> None:
        bar = self.query_one("#search-bar")
        bar.display = True
        field = self.query_one("#search-input", Input)
        if self.state is not None:
            field.value = self.state.search_text
        field.focus()

    @on(Input.Submitted, "#search-input")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.query_one("#search-bar").display = False
        self.message_list.focus()
        if self.state is None:
            return
        if not text:
            self.state.set_matches("", [])
            self.message_list.restyle()
            self.status.show(self.state)
            return
        self.status.activity(f"searching “{text}”…", busy=True)
        self._search(self.state.session, text)

    @work(
        thread=True,
        exclusive=True,
        group="search",
        exit_on_error=False,
        description="Searching messages",
    )
    def _search(self, session: Session, text: str) -> None:
        worker = get_current_worker()
        needle = text.casefold()
        matches: list[int] = []
        for message in session.messages:
            if worker.is_cancelled:
                return
            if needle in message_text(message).casefold():
                matches.append(message.index)
        self.post_message(_SearchDone(text, matches))

    def on__search_done(self, event: _SearchDone) -> None:
        state = self.state
        if state is None:
            return
        state.set_matches(event.text, event.matches)
        self.message_list.restyle()
        self.status.show(state)
        self._show_activity()
        if not event.matches:
            self.app.notify(f"No message contains “{event.text}”.", timeout=3)
            return
        self.action_next_match(inclusive=True)

    def action_next_match(self, inclusive: bool = False) -> None:
        state = self.state
        if state is None or not state.matches:
            return
        current = self.message_list.selected_message or 0
        following = [m for m in state.matches if m > current or (inclusive and m == current)]
        target = following[0] if following else state.matches[0]
        self.select_message(target)

    def action_prev_match(self) -> None:
        state = self.state
        if state is None or not state.matches:
            return
        current = self.message_list.selected_message or 0
        before = [m for m in state.matches if m < current]
        self.select_message(before[-1] if before else state.matches[-1])

    # -- live tail -----------------------------------------------------------------------------------

    @work(exclusive=True, group="live", exit_on_error=False, description="Watching the file")
    async def _watch(self, live_file: LiveFile) -> None:
        async for change in watch_file(live_file, stop=self._live_stop):
            if change.kind == "grew":
                self._live_reload(live_file.path)
            elif change.kind == "deleted":
                self.post_message(
                    _LiveProblem(
                        f"{live_file.path.name} was deleted: live tail stopped, the loaded "
                        "session stays on screen.",
                        stop_tail=True,
                    )
                )
                return
            else:  # truncated or rotated: the file is a new one, reload it whole
                self.post_message(
                    _LiveProblem(
                        f"{live_file.path.name} was {change.kind}: reloading it.", stop_tail=False
                    )
                )
                self._live_reload(live_file.path)

    @work(
        thread=True,
        exclusive=True,
        group="live-load",
        exit_on_error=False,
        description="Re-reading the grown file",
    )
    def _live_reload(self, path: Path) -> None:
        state = self.state
        fmt = state.session.format if state is not None else None
        try:
            session = load_session(path, format=fmt, window=self._window)
            _freeze_heap()
        except (LoadError, OSError) as exc:
            self.post_message(_LiveProblem(f"live reload failed: {exc}", stop_tail=False))
            return
        except Exception as exc:
            self.post_message(
                _LiveProblem(f"live reload failed: {type(exc).__name__}: {exc}", stop_tail=False)
            )
            return
        self.post_message(_LiveReloaded(session))

    def on__live_reloaded(self, event: _LiveReloaded) -> None:
        self.apply_grown_session(event.session)

    def apply_grown_session(self, session: Session, *, replay: bool = True) -> None:
        """The file grew: take the re-read session, keep the selection, follow the end if asked.

        The list keeps its rows and cursor; rows beyond the old count are appended and the last
        old row is repainted (a format that writes one message over several lines may have
        extended it).
        """
        state = self.state
        if state is None:
            return
        old_count = state.message_count
        was_at_end = self.message_list.at_end
        selected = self.message_list.selected_message
        previous = state.session
        if previous.context_window and (
            session.context_window is None or previous.window_source == "user"
        ):  # keep a window the user set (w) or one the first load had
            session.context_window = previous.context_window
            session.window_source = previous.window_source
        state.session = session
        state.rebuild()
        self.message_list.rows_changed()
        new_count = state.message_count
        if (self.follow or was_at_end) and new_count:
            self.message_list.select_message(new_count - 1)
            self.detail.show(new_count - 1, force=True)
        elif selected is not None and selected < new_count:
            self.message_list.select_message(selected)
            if selected >= old_count - 1:
                self.detail.show(selected, force=True)
        self.gauge.update_result(session, state.result)
        self._refresh_chrome()
        if replay:
            self.start_replay()

    def on__live_problem(self, event: _LiveProblem) -> None:
        self.app.notify(event.text, title="Live tail", severity="warning", timeout=6)
        if event.stop_tail:
            self.live_status = "live tail stopped"
            self._live_file = None
            self.refresh_bindings()
        self._show_activity()

    def action_follow(self) -> None:
        self.follow = not self.follow
        if self.follow and self.state is not None and self.state.message_count:
            self.select_message(self.state.message_count - 1, center=False)
        self._show_activity()
        self.app.notify(
            "Following the end of the file." if self.follow else "Follow off.", timeout=2
        )

    # -- navigation --------------------------------------------------------------------------------

    def action_back(self) -> None:
        bar = self.query_one("#search-bar")
        if bar.display:
            bar.display = False
            self.message_list.focus()
            return
        if self.query_one("#policy-slot").display:
            self._show_policy(False)
            return
        self.dismiss(None)

    def on_unmount(self) -> None:
        self._live_stop.set()
        if self._replay_cancel is not None:
            self._replay_cancel.set()
