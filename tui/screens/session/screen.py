"""The session screen: its keys, what they open (overflow, compaction, search, the policy panel),
and the controllers it owns.

:mod:`.view` holds the state and the widgets (the screen's one base class). Four controllers,
each a hidden widget given the view, run the workers: :mod:`.loading` (reading the file, a big one
in two steps), :mod:`.live_tail` (following a growing file), :mod:`.replaying` (the replay) and
:mod:`.insights` (breakdown, cost and compaction reports). The screen calls them; they tell it
what happened with messages (:mod:`.worker_messages`), which it passes on to the others.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input
from textual.worker import get_current_worker

from core.formats.subagents import child_paths
from core.model.session import Session
from core.model.tokens import message_text
from core.policy import Policy
from tui.figures import recorded_stop_notice
from tui.screen_state import Inferred, policy_for
from tui.screens.overflow import OverflowScreen
from tui.screens.policy_path_prompt import ask_policy_path
from tui.screens.session.heap import collect_thawed, thaw_heap
from tui.screens.session.insights import InsightsRunner
from tui.screens.session.live_tail import LiveTail
from tui.screens.session.loading import SessionLoader
from tui.screens.session.replaying import ReplayRunner
from tui.screens.session.view import SessionView
from tui.screens.session.worker_messages import (
    FirstPartLoaded,
    InferenceEnded,
    InferredPolicyFound,
    InferredWorkedOut,
    InsightsReady,
    LiveProblem,
    LiveReloaded,
    LoadFailed,
    LoadProgressed,
    ReplayDone,
    ReplayEnded,
    ReplayProgressed,
    ReplayWanted,
    ResultShown,
    SearchDone,
    SessionLoaded,
    SessionShown,
)
from tui.screens.window_prompt import WindowPrompt
from tui.widgets.breakdown_chart import BreakdownChart
from tui.widgets.load_progress import LoadProgress
from tui.widgets.policy_panel import PolicyPanel
from tui.widgets.session_header import SessionHeader

CLOSED_COLLECT_S = 0.5
"""A closed screen (its widgets, the session they showed) is collected this long after it closed:
once the picker is drawn and the screen's workers, told to stop, have ended."""


class SessionScreen(SessionView):
    """One session: list, gauge, detail, policy. Dismisses with an error text if it cannot load.

    Its controllers run the workers: loading (``load``), replaying (``replay``, one at a time,
    cancellable with a ``threading.Event``), the insights (``insights``) and the live tail
    (``live`` watches, ``live-load`` reloads); the screen itself searches (``search``). Widgets
    and controllers post messages here; the shared :class:`~tui.screen_state.SessionState` is updated
    and each widget told to redraw.
    """

    CSS_PATH = Path(__file__).with_name("session.tcss")
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # noqa: RUF012 (Screen declares it)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]  # noqa: RUF012 (Screen declares it)

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "overflow", "Overflow", id="session.overflow"),
        Binding("c", "compaction", "Compact", id="session.compaction"),
        Binding("p", "toggle_policy", "Policy", id="session.policy"),
        Binding("b", "toggle_breakdown", "Breakdown", id="session.breakdown"),
        Binding(
            "left_square_bracket",
            "prev_compaction",
            "Prev compaction",
            key_display="[",
            show=False,
            id="session.prev-compaction",
        ),
        Binding(
            "right_square_bracket",
            "next_compaction",
            "Compaction",
            key_display="]",
            id="session.next-compaction",
        ),
        Binding("slash", "search", "Search", key_display="/", id="session.search"),
        Binding("n", "next_match", "Next match", show=False, id="session.next-match"),
        Binding("N", "prev_match", "Prev match", show=False, id="session.prev-match"),
        Binding("f", "follow", "Follow", id="session.follow"),
        Binding("w", "set_window", "Window", show=False, id="session.window"),
        Binding("x", "cancel", "Cancel", show=False, id="session.cancel"),
        Binding("tab", "app.focus_next", "Focus", show=False, id="session.focus-next"),
        Binding("a", "subagents", "Sub-agents", id="session.subagents"),
        Binding("escape", "back", "Back", id="session.back"),
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
        super().__init__(path, session=session, window=window, policy=policy, live=live)
        self.loader = SessionLoader(self)
        self.tail = LiveTail(self)
        self.replays = ReplayRunner(self)
        self.insights_runner = InsightsRunner(self)

    def compose(self) -> ComposeResult:
        if self.initial_session is None and self.path is not None:
            # start reading now: mounting the widgets below overlaps with the load
            self.loader.begin(self.path)
        yield from super().compose()
        # they draw nothing: mounted so that their workers end with the screen
        yield from (self.loader, self.tail, self.replays, self.insights_runner)

    def on_unmount(self) -> None:
        """Closed: what the screen showed is let go (:meth:`release`), and what its widgets
        froze with it collected (:func:`~tui.screens.session.heap.thaw_heap`)."""
        self.release()
        self.replays.forget()
        self.insights_runner.forget()
        thaw_heap()
        self.app.set_timer(CLOSED_COLLECT_S, collect_thawed, name="collect closed screen")

    def on_mount(self) -> None:
        self.set_up_widgets()
        # the count of the message selected at open waits for the session (one the user picks,
        # never: they asked for it)
        self.detail.slow_facts_wait = lambda: self.opening() and not self.user_selected
        self.insights_runner.wait = lambda: self.replays.inferring
        if self.initial_session is not None:
            self.query_one(LoadProgress).display = False
            self.loader.install(self.initial_session)
        elif self.path is not None:
            self.loader.show_progress(self.path)
        else:
            self.dismiss("no session to open")

    # -- what the controllers know -----------------------------------------------------------------

    @property
    def reading(self) -> bool:
        """The file is being read."""
        return self.loader.reading

    @property
    def load_seconds(self) -> float | None:
        return self.loader.load_seconds

    @property
    def preview_seconds(self) -> float | None:
        return self.loader.preview_seconds

    @property
    def after_paint_pending(self) -> bool:
        """The gauge and the replay are about to start (right after the first frame)."""
        return self.loader.after_paint_pending

    def opening(self) -> bool:
        """The session is being opened: its file read, its first replay on the way (neither a
        result nor a replay error shown yet), or the first result's inferred threshold and
        insights. Work that can wait (the detail pane's tokenizer count) waits until then rather
        than take the interpreter from the load and the replay, or add its memory to theirs."""
        state = self.state
        if state is None:
            return self.reading
        if state.result is not None or state.replay_error is not None:
            # the first result's inferred threshold, then its insights, then the count: each
            # holds data of its own for a while (all three at once made the open's peak memory)
            return state.insights is None and (
                self.replays.inferring or self.notices_pending or self.insights_runner.busy
            )
        return (
            self.reading
            or self.partial
            or self.after_paint_pending
            or self.notices_pending
            or self.replaying
        )

    @property
    def replay_seconds(self) -> float | None:
        return self.replays.replay_seconds

    @property
    def inferred(self) -> Inferred | None:
        """The threshold the session's own compactions show, and the ``inferred`` policy."""
        return self.replays.inferred

    @property
    def notices_pending(self) -> bool:
        """A controller told the screen something it has not handled yet (what it starts, a
        replay or the insights, is on its way)."""
        return self.notices_in_flight > 0

    @property
    def insights_pending(self) -> bool:
        """A replay is shown whose insights are about to start."""
        return self.insights_runner.pending

    # -- what the workers bring, to the controller that ran them ----------------------------------

    def on_load_progressed(self, event: LoadProgressed) -> None:
        self.loader.load_progressed(event)

    def on_first_part_loaded(self, event: FirstPartLoaded) -> None:
        self.loader.first_part_loaded(event)

    def on_session_loaded(self, event: SessionLoaded) -> None:
        self.loader.session_loaded(event)

    def on_load_failed(self, event: LoadFailed) -> None:
        self.loader.load_failed(event)

    def on_live_reloaded(self, event: LiveReloaded) -> None:
        self.tail.live_reloaded(event)

    def on_live_problem(self, event: LiveProblem) -> None:
        self.tail.live_problem(event)

    def on_replay_progressed(self, event: ReplayProgressed) -> None:
        self.replays.replay_progressed(event)

    def on_replay_done(self, event: ReplayDone) -> None:
        self.replays.replay_done(event)

    def on_inferred_worked_out(self, event: InferredWorkedOut) -> None:
        self.replays.inferred_worked_out(event)

    def on_inference_ended(self, event: InferenceEnded) -> None:
        if self.replays.inference_ended(event):
            self.insights_runner.other_work_done()

    def on_replay_ended(self, event: ReplayEnded) -> None:
        self.replays.replay_ended(event)

    def on_insights_ready(self, event: InsightsReady) -> None:
        self.insights_runner.insights_ready(event)

    # -- what the controllers say, to the others -----------------------------------------------------

    def on_session_shown(self, event: SessionShown) -> None:
        event.stop()
        self.notices_in_flight -= 1
        self.start_replay()
        self.tail.start()

    def on_replay_wanted(self, event: ReplayWanted) -> None:
        event.stop()
        self.notices_in_flight -= 1
        self.start_replay()

    def on_result_shown(self, event: ResultShown) -> None:
        event.stop()
        self.notices_in_flight -= 1
        self.insights_runner.result_shown()

    def on_inferred_policy_found(self, event: InferredPolicyFound) -> None:
        event.stop()
        self.notices_in_flight -= 1
        self.set_policy(event.policy)

    def start_replay(self) -> None:
        """Re-run the replay for the current session and policy (cancelling a running one)."""
        self.insights_runner.hold()
        self.replays.start()

    # -- keys ----------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide what does not apply: follow without a live file; greyed while nothing is loaded."""
        if action == "follow":  # the tail is watched once the whole file is read
            return self.live_file is not None and not self.partial
        if action in ("overflow", "compaction", "next_compaction", "prev_compaction"):
            if self.partial:  # they need the replay of the whole session
                return None
            return True if self.state is not None and self.state.message_count else None
        if action == "subagents":  # only a session that started sub-agents
            return self.state is not None and bool(child_paths(self.state.session))
        if action in ("search", "toggle_breakdown"):
            return True if self.state is not None and self.state.message_count else None
        return True

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

        replayer = self.replays.replayer_for(state.session)
        self.app.push_screen(
            CompactionScreen(
                state.session,
                state.policy,
                index,
                state.result,
                replayer=replayer,
                insights=state.insights,
            )
        )

    def _step_compaction(self, step: int) -> None:
        """Select the previous / next compaction the list draws: the replay's, and the recorded
        ones it did not apply (told as recorded, not replayed)."""
        state = self.state
        if state is None:
            return
        stops = state.compaction_stops()
        if not stops:
            self.app.notify("No compaction in this session under this policy.")
            return
        current = self.message_list.selected_message or 0
        if step > 0:
            candidates = [s for s in stops if s.message_index > current]
            target = candidates[0] if candidates else None
        else:
            candidates = [s for s in stops if s.message_index < current]
            target = candidates[-1] if candidates else None
        if target is None:
            self.app.notify("No further compaction that way.", timeout=2)
            return
        event = target.event
        if event is not None and event.kind == "compact":
            state.active_event = target.event_id
            state.rebuild()
            self.message_list.rows_changed()
        self.select_message(target.message_index)
        if event is not None:
            from core.insights.named_figures import compaction_at  # (the replay is loaded)

            at = compaction_at(state.session, event, None)
            self.app.notify(event.reason, title=f"{event.kind} at message {at}", timeout=4)
        elif target.recorded_index is not None:
            title, text = recorded_stop_notice(state.session, state.result, state.policy, target)
            self.app.notify(text, title=title, timeout=4)

    def action_move_call(self, step: int) -> None:
        """← / → from the list or the detail pane: the previous / next model call (as the
        gauge's own keys do)."""
        if self.state is not None and self.state.call_count:
            self.gauge.action_move(step)

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
        self.post_message(SearchDone(text, matches))

    def on_search_done(self, event: SearchDone) -> None:
        state = self.state
        if state is None:
            return
        state.set_matches(event.text, event.matches)
        self.message_list.restyle()
        self.status.show(state)
        self.show_activity()
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

    # -- navigation --------------------------------------------------------------------------------

    def action_subagents(self) -> None:
        """Pick one of the session's sub-agents; it opens on a session screen of its own."""
        if self.state is not None:
            from tui.screens.subagents import open_subagents

            open_subagents(self, self.state.session)

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

    def action_cancel(self) -> None:
        """``x``: stop reading the file, or else the running replay."""
        if not self.loader.cancel():
            self.replays.cancel()

    def action_follow(self) -> None:
        self.tail.toggle_follow()

    # -- the breakdown band ----------------------------------------------------------------------

    def action_toggle_breakdown(self) -> None:
        """Show (or hide) the breakdown band under the gauge."""
        slot = self.query_one("#breakdown-slot")
        self.show_band(not slot.display)
        if slot.display:
            if self.insights_runner.want_breakdown():
                self.app.notify("Working out the breakdown…", timeout=2)
            self.show_breakdown_call(self.gauge.selected_call)
        elif self.focused is self.query_one("#breakdown-chart"):
            self.message_list.focus()

    def on_breakdown_chart_call_selected(self, event: BreakdownChart.CallSelected) -> None:
        event.stop()
        state = self.state
        if state is None:
            return
        index = state.message_for_call(event.call_index)
        if index is not None:
            self.select_message(index)

    # -- the policy and the window ---------------------------------------------------------------

    def set_policy(self, policy: Policy, *, update_panel: bool = True) -> None:
        """Make ``policy`` the active one and replay under it."""
        state = self.state
        if state is None:
            self.initial_policy = policy
            return
        resolved = policy_for(state.session, policy)  # the agent's preset follows its version
        if resolved is not policy:
            policy, update_panel = resolved, True
        state.policy = policy
        if update_panel:
            panel = self.policy_panel()
            if panel is not None:
                panel.set_policy(policy)
        self.query_one(SessionHeader).show(state, self.display_name)
        self.start_replay()

    def on_policy_panel_changed(self, event: PolicyPanel.Changed) -> None:
        event.stop()
        self.set_policy(event.policy, update_panel=False)

    def on_policy_panel_path_wanted(self, event: PolicyPanel.PathWanted) -> None:
        """The panel's save / load: the path is asked for here, then handed back to the panel."""
        event.stop()
        ask_policy_path(self.app, event)

    def action_toggle_policy(self) -> None:
        """Show the policy panel in the detail pane's place (or put the detail pane back)."""
        self._show_policy(not self.query_one("#policy-slot").display)

    def _show_policy(self, show: bool) -> None:
        if show and self.state is not None and self.policy_panel() is None:
            self._mount_policy_panel(self.state.policy)
            panel = self.policy_panel()
            if panel is not None and self.state.result is not None:
                panel.show_evidence(self.state.result, self.inferred)
        self.query_one("#policy-slot").display = show
        self.detail.display = not show
        if show:
            panel = self.policy_panel()
            if panel is not None:
                self.call_after_refresh(panel.focus)
        else:
            self.message_list.focus()

    def _mount_policy_panel(self, policy: Policy) -> None:
        """Mount the policy panel (on first use: it costs a few hundred ms to build)."""
        existing = self.policy_panel()
        if existing is not None:
            existing.set_policy(policy)
            return
        native = policy_for(self.state.session, None) if self.state is not None else None
        self.query_one("#policy-slot").mount(PolicyPanel(policy, native=native, id="policy-panel"))

    def action_set_window(self) -> None:
        state = self.state
        if state is None:
            return

        def apply(value: int | None) -> None:
            if value and self.state is not None:
                self.state.session.context_window = value
                self.state.session.window_source = "user"
                # the replayer caches results per policy, and the session itself changed
                self.replays.forget_replayer()
                self.refresh_chrome()
                self.start_replay()

        self.app.push_screen(WindowPrompt(state.session.model, state.window), apply)
