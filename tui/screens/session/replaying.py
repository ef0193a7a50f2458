"""The session screen's replay layer: what the session is replayed under (the policy, the window)
and the worker that replays it.

One replay runs at a time (group ``replay``); a new one cancels the running one through a
``threading.Event``, and results of an older generation are dropped when they arrive.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from textual import work

from core.model.session import Session
from core.policy import Policy
from tui.screen_state import Inferred, policy_for
from tui.screens.session.heap import freeze_heap
from tui.screens.session.view import SessionView
from tui.screens.session.worker_messages import (
    ReplayDone,
    ReplayEnded,
    ReplayProgressed,
    Throttle,
)
from tui.screens.window_prompt import WindowPrompt
from tui.widgets.policy_panel import PolicyPanel
from tui.widgets.session_header import SessionHeader

if TYPE_CHECKING:
    from core.replay import Replayer


class ReplayingSession(SessionView):
    """Replays the session under the active policy, and changes that policy or the window."""

    # -- the replay --------------------------------------------------------------------------------

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
                self.post_message(ReplayEnded(generation, None))
                return
            started = time.perf_counter()
            throttle = Throttle()

            def progress(done: int, total: int) -> None:
                if throttle.ready():
                    self.post_message(ReplayProgressed(generation, done, total))

            try:
                from core.replay import Replayer  # here, not at start-up: ~50 ms of imports

                if self._replayer is None or self._replayer_session is not session:
                    self._replayer = Replayer(session)
                    self._replayer_session = session
                    self.inferred = None
                result = self._replayer.run(policy, progress=progress, cancel=cancel)
                inferred = self._inferred_of(self._replayer, session)
            except Exception as exc:
                error = None if cancel.is_set() else f"replay failed: {type(exc).__name__}: {exc}"
                self.post_message(ReplayEnded(generation, error))
                return
            if cancel.is_set():
                self.post_message(ReplayEnded(generation, None))
                return
            seconds = time.perf_counter() - started
            self.post_message(ReplayDone(result, generation, seconds, inferred))

    def _inferred_of(self, replayer: Replayer, session: Session) -> Inferred | None:
        """The threshold the session's compactions show, and the ``inferred`` policy (once per
        replayer; only for a session an agent recorded)."""
        if self.inferred is not None:
            return self.inferred
        from core.replay import NATIVE_PRESET

        if session.format not in NATIVE_PRESET:
            return None
        return Inferred(replayer.inferred_threshold(), replayer.inferred_policy())

    def on_replay_progressed(self, event: ReplayProgressed) -> None:
        if event.generation == self._generation and event.total:
            self.status.activity(
                f"replaying {event.done:,}/{event.total:,}… (x: cancel)", busy=True
            )

    def on_replay_done(self, event: ReplayDone) -> None:
        state = self.state
        if state is None or event.generation != self._generation:
            return
        freeze_heap()  # the result of a big session is millions of objects too
        self.replaying = False
        self.replay_seconds = event.seconds
        if event.inferred is not None:
            self.inferred = event.inferred
        if self._want_inferred and self.inferred is not None:
            self._want_inferred = False  # asked for on the command line: it is known now
            self.set_policy(self.inferred.policy)
            return
        state.set_result(event.result)
        panel = self._panel()
        if panel is not None:
            panel.show_evidence(event.result, self.inferred)
        self.message_list.rows_changed()
        self.detail.refresh_decision()
        self.gauge.update_result(state.session, event.result)
        self._sync_gauge(self.message_list.selected_message)
        self._refresh_chrome()
        self.result_shown()

    def result_shown(self) -> None:
        """A new replay result is on screen (the insights layer works out what it says)."""

    def on_replay_ended(self, event: ReplayEnded) -> None:
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

    # -- the policy and the window ---------------------------------------------------------------

    def set_policy(self, policy: Policy, *, update_panel: bool = True) -> None:
        """Make ``policy`` the active one and replay under it."""
        state = self.state
        if state is None:
            self._initial_policy = policy
            return
        resolved = policy_for(state.session, policy)  # the agent's preset follows its version
        if resolved is not policy:
            policy, update_panel = resolved, True
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
            panel = self._panel()
            if panel is not None and self.state.result is not None:
                panel.show_evidence(self.state.result, self.inferred)
        self.query_one("#policy-slot").display = show
        self.detail.display = not show
        if show:
            panel = self._panel()
            if panel is not None:
                self.call_after_refresh(panel.focus)
        else:
            self.message_list.focus()

    def _mount_policy_panel(self, policy: Policy) -> None:
        """Mount the policy panel (on first use: it costs a few hundred ms to build)."""
        existing = self._panel()
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
                self._replayer = None
                self._refresh_chrome()
                self.start_replay()

        self.app.push_screen(WindowPrompt(state.session.model, state.window), apply)
