"""The session screen's replay controller: the worker that replays the session under the active
policy, and showing what it brings.

One replay runs at a time (group ``replay``); a new one cancels the running one through a
``threading.Event``, and results of an older generation are dropped when they arrive. A result
shown, the screen hears :class:`ResultShown` (its insights are worked out next).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from textual import work
from textual.timer import Timer

from core.model.session import Session
from core.policy import Policy
from tui.malloc_arenas import release_free_memory
from tui.screen_state import INFERRED, Inferred
from tui.screens.session.controller import Controller
from tui.screens.session.heap import freeze_heap
from tui.screens.session.worker_messages import (
    RERUN_QUIET_S,
    InferenceEnded,
    InferredPolicyFound,
    InferredWorkedOut,
    ReplayDone,
    ReplayEnded,
    ReplayProgressed,
    ResultShown,
    Throttle,
)

RESULT_PAINT_WAIT_S = 1.0
"""After a first result, the replay's worker works out the inferred threshold once that result is
painted, or after this long."""
PAINT_POLL_S = 0.05
"""How often that wait looks whether a newer replay cancelled this one."""

if TYPE_CHECKING:
    from core.replay import Replayer
    from tui.screens.session.view import SessionView


class ReplayRunner(Controller):
    """Replays the session under the active policy, one run at a time."""

    def __init__(self, view: SessionView) -> None:
        super().__init__(view)
        self.replay_seconds: float | None = None
        self.inferred: Inferred | None = None
        """The threshold the session's own compactions show, and the ``inferred`` policy (after
        the first replay)."""
        policy = view.initial_policy
        self._want_inferred = policy is not None and policy.name == INFERRED
        """``--policy inferred``: the session opens under its agent's preset, then switches to
        the inferred policy once the first replay has worked it out."""
        self._generation = 0
        self._cancel: threading.Event | None = None
        self._lock = threading.Lock()
        self._replayer: Replayer | None = None
        self._replayer_session: Session | None = None
        self._notice: Timer | None = None
        """Says "replaying…" when a re-run outlasts :data:`RERUN_QUIET_S` (:meth:`_announce`)."""
        self._inferring: int | None = None
        """The generation whose result the worker works out the inferred threshold after."""

    @property
    def inferring(self) -> bool:
        """The inferred threshold is being worked out after the result shown (a walk of the
        whole session: the insights wait for it rather than hold their own data beside its)."""
        return self._inferring is not None

    def replayer_for(self, session: Session) -> Replayer | None:
        """The replayer of ``session`` (it holds its results per policy), if one was made."""
        return self._replayer if self._replayer_session is session else None

    def forget_replayer(self) -> None:
        """The session itself changed (its window): the next replay starts from scratch."""
        self._replayer = None

    def forget(self) -> None:
        """Let go of the session, its replayer and what it inferred (the screen is closed)."""
        self._replayer = None
        self._replayer_session = None
        self.inferred = None

    def start(self) -> None:
        """Re-run the replay for the current session and policy (cancelling a running one)."""
        view = self.view
        state = view.state
        if state is None or view.partial:
            return  # a first part is not replayed: the policy applies when the whole is read
        if self._cancel is not None:
            self._cancel.set()
        cancel = threading.Event()
        self._cancel = cancel
        self._generation += 1
        view.replaying = True
        view.replay_progress = None
        self._announce(rerun=state.result is not None)
        self._replay(state.session, state.policy, cancel, self._generation)

    def _announce(self, *, rerun: bool) -> None:
        """Say that a replay runs: at once for the first one; for a re-run (a limit change, with
        a result on screen) only once it has run :data:`RERUN_QUIET_S`, as its progress. Most
        re-runs end before: saying "replaying…" and taking it back laid the screen out twice."""
        if self._notice is not None:
            self._notice.stop()
            self._notice = None
        if not rerun:
            self.view.show_activity()
            return

        def still_replaying() -> None:
            self._notice = None
            if self.view.replaying:
                self.view.show_activity()

        self._notice = self.view.set_timer(RERUN_QUIET_S, still_replaying)

    def cancel(self) -> None:
        """``x``: stop the running replay (the previous result stays)."""
        if self._cancel is not None and self.view.replaying:
            self._cancel.set()

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
        with self._lock:  # one replayer run at a time: it holds per-step state
            if cancel.is_set():
                self.view.post_message(ReplayEnded(generation, None))
                return
            started = time.perf_counter()
            rerun = self._replayer is not None and self._replayer_session is session
            throttle = Throttle(quiet_s=RERUN_QUIET_S if rerun else 0.0)

            def progress(done: int, total: int) -> None:
                if throttle.ready():
                    self.view.post_message(ReplayProgressed(generation, done, total))

            try:
                from core.replay import Replayer  # here, not at start-up: ~50 ms of imports

                fresh = self._replayer is None or self._replayer_session is not session
                if fresh:
                    self._replayer = Replayer(session)
                    self._replayer_session = session
                    self.inferred = None
                replayer = self._replayer
                assert replayer is not None
                result = replayer.run(policy, progress=progress, cancel=cancel)
                # The inferred threshold is worked out after the result is shown (it walks the
                # session once more), unless the command line asked for the inferred policy.
                later = self.inferred is None and not self._want_inferred
                inferred = None if later else self._inferred_of(replayer, session)
            except Exception as exc:
                error = None if cancel.is_set() else f"replay failed: {type(exc).__name__}: {exc}"
                self.view.post_message(ReplayEnded(generation, error))
                return
            if cancel.is_set():
                self.view.post_message(ReplayEnded(generation, None))
                return
            seconds = time.perf_counter() - started
            release_free_memory()  # (the walk's own data, before the next step's)
            done = ReplayDone(result, generation, seconds, inferred, infers_later=later)
            self.view.post_message(done)
            if later or fresh:
                self._after_paint(done, replayer, session, cancel, infer=later)

    def _after_paint(
        self,
        done: ReplayDone,
        replayer: Replayer,
        session: Session,
        cancel: threading.Event,
        *,
        infer: bool,
    ) -> None:
        """Once ``done``'s result is painted (the two would share one interpreter): work out
        the inferred threshold (``infer``), then say it is done; then count the lines of every
        tool output, which a change of a line limit reads (50 MB of outputs, 60 ms, at 200,000
        messages: read now, while the user reads the result). In the replay's worker; a newer
        replay (``cancel``) stops it."""
        try:
            deadline = time.monotonic() + RESULT_PAINT_WAIT_S
            while not done.painted.wait(PAINT_POLL_S):
                if cancel.is_set() or time.monotonic() > deadline:
                    break
            if infer and not cancel.is_set():  # (a newer replay works it out, or the screen closed)
                self._infer_later(replayer, session)
                release_free_memory()
        finally:
            if infer:
                self.view.post_message(InferenceEnded(done.generation))
        replayer.count_output_lines(cancel)

    def _infer_later(self, replayer: Replayer, session: Session) -> None:
        """Work out the inferred threshold after a result was shown (in the replay's worker)."""
        try:
            inferred = self._inferred_of(replayer, session)
        except Exception as exc:  # said; the result shown stays
            message = f"inferred threshold failed: {type(exc).__name__}: {exc}"
            self.app.call_from_thread(self.app.notify, message, title="Replay", severity="error")
            return
        if inferred is not None:
            self.view.post_message(InferredWorkedOut(inferred, replayer))

    def inferred_worked_out(self, event: InferredWorkedOut) -> None:
        """The inferred threshold, worked out after the result was shown: the policy panel
        shows it beside the result's evidence, and the list's rules and the detail pane the
        checks on the recording worked out with it."""
        if event.source is not self._replayer or self.inferred is not None:
            return  # another session's (or already known)
        self.inferred = event.inferred
        view = self.view
        state = view.state
        if state is None or state.result is None:
            return
        panel = view.policy_panel()
        if panel is not None:
            panel.show_evidence(state.result, self.inferred)
        # the recording's checks are known now: the list's rules and the detail pane name them
        state.rebuild()
        view.message_list.rows_changed()
        view.detail.refresh_decision()

    def _inferred_of(self, replayer: Replayer, session: Session) -> Inferred | None:
        """The threshold the session's compactions show, and the ``inferred`` policy (once per
        replayer; only for a session an agent recorded)."""
        if self.inferred is not None:
            return self.inferred
        from core.replay import NATIVE_PRESET

        if session.format not in NATIVE_PRESET:
            return None
        from core.insights.named_figures import recording_checks

        recording_checks(replayer)  # (kept with the session: the screens name it beside each)
        return Inferred(replayer.inferred_threshold(), replayer.inferred_policy())

    def inference_ended(self, event: InferenceEnded) -> bool:
        """The worker is done with the inferred threshold of ``event``'s generation (True:
        the one waited for)."""
        if self._inferring is None or event.generation != self._inferring:
            return False
        self._inferring = None
        return True

    def replay_progressed(self, event: ReplayProgressed) -> None:
        if event.generation == self._generation and event.total:
            self.view.replay_progress = (event.done, event.total)
            self.view.show_activity()

    def replay_done(self, event: ReplayDone) -> None:
        view = self.view
        state = view.state
        if state is None or event.generation != self._generation:
            event.painted.set()
            return
        freeze_heap()  # the result of a big session is millions of objects too
        self.replay_seconds = event.seconds
        if event.inferred is not None:
            self.inferred = event.inferred
        if event.infers_later:
            self._inferring = event.generation
        if self._want_inferred and self.inferred is not None:
            self._want_inferred = False  # asked for on the command line: it is known now
            view.tell(InferredPolicyFound(self.inferred.policy))
            event.painted.set()
            return  # (still "replaying": the screen starts the replay under it)
        view.replaying = False
        state.set_result(event.result)
        panel = view.policy_panel()
        if panel is not None:
            panel.show_evidence(event.result, self.inferred)
        view.message_list.rows_changed(same_session=True)
        view.detail.refresh_decision()
        view.gauge.update_result(state.session, event.result)
        view.sync_gauge(view.message_list.selected_message)
        view.refresh_chrome()
        view.tell(ResultShown())
        view.after_list_painted(event.painted.set)

    def replay_ended(self, event: ReplayEnded) -> None:
        if event.generation != self._generation:
            return
        view = self.view
        view.replaying = False
        state = view.state
        if state is not None and state.result is not None:
            view.tell(ResultShown())  # the result shown stays: its insights (held) come now
        if event.error:
            if state is not None:
                state.replay_error = event.error
            self.app.notify(event.error, title="Replay", severity="error")
        else:
            self.app.notify("Replay cancelled: showing the previous result.", timeout=3)
        view.refresh_chrome()
        view.detail.refresh_decision()

    def on_unmount(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
