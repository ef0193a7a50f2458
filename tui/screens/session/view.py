"""The session screen's view: its state, its widgets, and selecting a message in all of them.

Nothing here starts a worker: the screen's controllers (loading, live tail, replaying, insights)
do, and they show what their workers bring through this view.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual import events
from textual._context import NoActiveAppError
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Label

from core.model.session import Session
from core.policy import Policy
from tui.columns import forget_marks
from tui.growing_file import LiveFile
from tui.messages import JumpToMessage
from tui.screen_state import SessionState
from tui.screens.session.prepared import Prepared
from tui.widgets.breakdown_call import BreakdownCall
from tui.widgets.breakdown_chart import BreakdownChart
from tui.widgets.detail import DetailPane
from tui.widgets.footer import KeysFooter
from tui.widgets.gauge import TokenGauge
from tui.widgets.load_progress import LoadProgress
from tui.widgets.message_list import MessageList
from tui.widgets.policy_panel import PolicyPanel
from tui.widgets.session_header import SessionHeader
from tui.widgets.status_line import StatusLine


def replay_progress_text(done: int, total: int) -> str:
    """``replaying    512/104,744… (x: cancel)``: the count done is as wide as the total, so
    the status line keeps its width through a replay (a text of another width lays the whole
    screen out, and then draws a second frame for it). With no total yet (the replay began before
    the screen had a state to count) it says no count at all, not ``0/0``."""
    if total <= 0:
        return "replaying… (x: cancel)"
    shown = f"{total:,}"
    return f"replaying {done:>{len(shown)},}/{shown}… (x: cancel)"


class SessionView(Screen[str | None]):
    """The widgets of one session and the state they show (see :class:`SessionScreen`)."""

    AUTO_FOCUS = "#messages"
    """The list has the focus from the start (Textual's default, the first widget that takes
    it, is the gauge: the focus then moved to the list once the session was shown, restyling
    both and asking the footer to look at its keys again, while the file was read)."""

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
        self.initial_session = session
        """The session given directly (no file to read)."""
        self.window_asked = window
        """The context window asked for on the command line (``--window``), if any."""
        self.initial_policy = policy
        """The policy to open with (``--policy``); None: the agent's preset."""
        self.live_enabled = live
        """Follow the file as it grows (``--no-live`` turns it off)."""
        self.state: SessionState | None = None
        # -- what the chrome shows; the controllers set it ---------------------------------------
        self.replaying = False
        """A replay runs (set by the replay controller)."""
        self.replay_progress: tuple[int, int] | None = None
        """The running replay's last report (messages done, messages in all); None: none yet
        (the status line then says 0 of the session's messages, as wide as every report)."""
        self.partial = False
        """What is shown is the first part of the file; the rest is still being read."""
        self.follow = False
        """The list follows the end of a live file (``f``)."""
        self.live_file: LiveFile | None = None
        """The file the live tail watches (or will, once the whole of it is read)."""
        self.live_status: str | None = None
        """What the status line says of the live tail in place of "live" (e.g. it stopped)."""
        self.user_selected = False
        """The user picked a message (a key, a click, a jump): what the detail pane works out
        for it is wanted at once, even while the session is still being opened."""
        self.notices_in_flight = 0
        """Notices a controller told the screen (:meth:`tell`) that it has not handled yet."""
        self._list: MessageList | None = None
        self._detail: DetailPane | None = None
        self._gauge: TokenGauge | None = None
        self._policy_slot: Widget | None = None
        self._resized_to: Size | None = None
        """The size of the last resize the screen laid itself out for."""
        self._resumed = False
        """The screen was shown once (:meth:`on_screen_resume`)."""
        self._preset_breakpoints()

    def _preset_breakpoints(self) -> None:
        """Give the screen the classes of its breakpoints (``-wide``, ``-tall`` …) for the app's
        size now, before its widgets are styled: its first resize, which sets them, then finds
        them set. Set by that resize, they restyled every widget of the screen (~15 ms of the
        interface thread, while the file is read)."""
        try:
            width, height = self.app.size
        except NoActiveAppError:
            return  # (made outside an app: the first resize sets them)
        app = self.app
        horizontal = self.HORIZONTAL_BREAKPOINTS
        vertical = self.VERTICAL_BREAKPOINTS
        for dimension, breakpoints in (
            (width, app.HORIZONTAL_BREAKPOINTS if horizontal is None else horizontal),
            (height, app.VERTICAL_BREAKPOINTS if vertical is None else vertical),
        ):
            classes = self._get_breakpoint_classes(dimension, breakpoints or [])
            self.add_class(*classes, update=False)

    def tell(self, notice: Message) -> None:
        """A controller tells the screen what the others should hear (counted until handled,
        so that whoever waits for the screen to be idle waits for what the notice starts)."""
        self.notices_in_flight += 1
        self.post_message(notice)

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield SessionHeader(id="session-header")
        yield LoadProgress(id="load-progress")
        # the gauge and the breakdown chart in one column, so that they share one x-scale; the
        # selected call's breakdown beside both while the band is open
        with Horizontal(id="charts"):
            with Vertical(id="charts-column"):
                with Vertical(id="gauge-slot"):
                    yield TokenGauge(id="gauge")
                with Horizontal(id="breakdown-slot"):
                    yield BreakdownChart(id="breakdown-chart")
            yield BreakdownCall(id="breakdown-call")
        with Horizontal(id="body"):
            yield MessageList(id="messages")
            yield DetailPane(id="detail")
            yield Vertical(id="policy-slot")
        with Horizontal(id="search-bar"):
            yield Label("/", id="search-label")
            yield Input(placeholder="search messages (Enter: find, Esc: close)", id="search-input")
        yield StatusLine(id="status")
        yield KeysFooter(compact=True)

    def set_up_widgets(self) -> None:
        """What every session screen does once mounted, before a session is shown."""
        self.message_list.cursor_moved = self._cursor_moved
        self.query_one("#search-bar").display = False
        self.query_one("#policy-slot").display = False
        self.show_band(False)
        self.query_one(SessionHeader).show(None, self.display_name)

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

    def policy_panel(self) -> PolicyPanel | None:
        """The policy panel, once mounted (in its slot: the screen is not searched, at each
        result shown, for a panel that is usually not there)."""
        slot = self._policy_slot
        if slot is None:
            slot = self._policy_slot = self.query_one("#policy-slot")
        return next(
            (c for c in slot.children if isinstance(c, PolicyPanel) and c.id == "policy-panel"),
            None,
        )

    @property
    def display_name(self) -> str:
        if self.path:
            return Path(self.path).name
        if self.state is not None:
            return self.state.session.id
        return "session"

    # -- the header and the status line -------------------------------------------------------------

    def refresh_chrome(self) -> None:
        self.query_one(SessionHeader).show(self.state, self.display_name)
        self.status.show(self.state)
        self.show_activity()

    def show_activity(self) -> None:
        if self.partial:
            self.status.activity("first part · reading the rest…", busy=True)
            return
        if self.replaying:
            done, total = self.replay_progress or (0, self.state.message_count if self.state else 0)
            self.status.activity(replay_progress_text(done, total), busy=True)
            return
        parts = []
        if self.live_status:
            parts.append(self.live_status)
        elif self.live_file is not None:
            parts.append("● following" if self.follow else "○ live")
        self.status.activity(" · ".join(parts))

    # -- frames ----------------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        """A resize to the size the screen is laid out for already changes nothing: Textual's
        own handling (a full layout and repaint, the breakpoints' classes) is skipped. A screen
        hears its size twice more as it opens (once from its own first layout, once from the
        app's first resize), each a full layout of the screen while the session is read."""
        if event.size == self._resized_to:
            event.prevent_default()
        self._resized_to = event.size

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """Shown for the first time, the screen is styled as its widgets were when they were
        mounted (a moment before): Textual's restyle of every widget on a screen shown (~20 ms of
        the interface thread, while the file is read) is kept for a screen shown again, which a
        change of theme may have left behind."""
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    def on_screen_suspend(self) -> None:
        """A screen left (another pushed over it) paints nothing: work waiting for its list's
        next frame (the rest of a big file, a replay's next step) goes on at once."""
        self.message_list.release_waiting()

    def after_list_painted(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once the message list's next frame is out (at once when this
        screen is not the one shown). For work that would otherwise share the interpreter with
        that frame (the rest of a big file, an inferred threshold).

        ``call_after_refresh`` is not enough: it runs once the screen's queue is empty, which
        may be before the widgets refreshed meanwhile have asked for their frame."""
        if not self.is_current:
            callback()
            return
        self.message_list.when_painted(callback)

    # -- selection ---------------------------------------------------------------------------------

    def _cursor_moved(self, message_index: int) -> None:
        """The list's cursor moved (called in the same pass as the key: one frame for all)."""
        self.user_selected = True
        self.detail.show(message_index)
        self.sync_gauge(message_index)

    def on_message_list_highlighted(self, event: MessageList.Highlighted) -> None:
        event.stop()  # already handled by _cursor_moved

    def sync_gauge(self, message_index: int | None) -> None:
        state = self.state
        if state is None or message_index is None or state.result is None:
            return
        call = state.call_for_message(message_index)
        if call is not None:
            self.gauge.select_call(call)
            self.show_breakdown_call(call)

    def show_band(self, show: bool) -> None:
        """Open (or close) the breakdown band: the chart under the gauge, the call beside them."""
        self.query_one("#breakdown-slot").display = show
        self.query_one("#breakdown-call").display = show

    @property
    def breakdown_shown(self) -> bool:
        """The breakdown band (``b``) is open."""
        return bool(self.query_one("#breakdown-slot").display)

    def show_breakdown_call(self, call_index: int | None) -> None:
        """Select ``call_index`` in the breakdown band (drawn only while it is open)."""
        state = self.state
        insights = state.insights if state is not None else None
        if insights is None or not self.breakdown_shown:
            return
        chart = self.query_one("#breakdown-chart", BreakdownChart)
        if chart.breakdown is not insights.breakdown:
            chart.show(insights.breakdown, call_index)
        elif insights.call(call_index) is not None:
            chart.selected_call = call_index
        shown = chart.selected_call
        self.query_one("#breakdown-call", BreakdownCall).show(
            insights.call(shown), insights.call_cost(shown)
        )

    def on_token_gauge_call_selected(self, event: TokenGauge.CallSelected) -> None:
        event.stop()
        self.select_message(event.message_index, sync_gauge=False)
        self.show_breakdown_call(event.call_index)

    def on_jump_to_message(self, event: JumpToMessage) -> None:
        event.stop()
        self.select_message(event.message_index)

    def select_message(self, index: int, *, sync_gauge: bool = True, center: bool = True) -> None:
        """Select a message everywhere: list, detail and gauge."""
        if self.state is None or not self.state.message_count:
            return
        self.user_selected = True
        index = max(0, min(index, self.state.message_count - 1))
        self.message_list.select_message(index, center=center)
        self.detail.show(index)
        if sync_gauge:
            self.sync_gauge(index)

    def release(self) -> None:
        """The screen is closed: its widgets let go of the session, its replay and its insights
        (a worker still running holds what it was given until it ends, then frees it)."""
        self.state = None
        self.initial_session = None
        forget_marks()
        if self._list is not None:
            self._list.set_state(None)
        if self._detail is not None:
            self._detail.set_state(None)
        if self._gauge is not None:
            self._gauge.forget()
        for panel in self.query(PolicyPanel):
            panel.forget_evidence()
        for chart in self.query(BreakdownChart):
            chart.show(None)
        for call in self.query(BreakdownCall):
            call.show(None, None)

    def show_recorded(self, session: Session, prepared: Prepared | None) -> None:
        """The gauge draws ``session``'s recorded series (no replay result yet): the one the
        worker that read it ``prepared``, when it was drawn against the session's window, else
        worked out here."""
        series = prepared.recorded_for(session) if prepared is not None else None
        if series is not None:
            self.gauge.show_series(series)
            return
        state = self.state
        calls = state.recorded_calls if state is not None and state.session is session else None
        self.gauge.update_result(session, None, calls)

    def apply_grown_session(self, session: Session, prepared: Prepared | None = None) -> None:
        """Show ``session`` (the file read again, longer) in place of the shown one: the selection
        is kept, and the end followed when asked (``f``) or when it was selected (``prepared``:
        what the worker that read it worked out beside it).

        The list keeps its rows and cursor; rows beyond the old count are appended and the last
        old row is repainted (a format that writes one message over several lines may have
        extended it). The replay is the caller's to start.
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
        state.use_table(prepared.table if prepared is not None else None)
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
        if state.result is None:
            self.show_recorded(session, prepared)
        else:
            self.gauge.update_result(session, state.result, state.recorded_calls)
        self.refresh_chrome()
