"""The session screen's insights controller: after each replay, what fills the window at every
call, what the session cost and what each compaction forgot (:mod:`tui.insights`), worked out in
a worker.

One worker at a time (group ``insights``); the breakdown and the cost are kept per session, so a
new policy only recomputes the compaction reports. The breakdown of every call (and each call's
price) is worked out only once the breakdown band is opened (:meth:`InsightsRunner.want_breakdown`).
What arrives for a session or a result that is no longer shown is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from textual import work
from textual.timer import Timer

from tui.insights import Insights, compute_insights
from tui.malloc_arenas import release_free_memory
from tui.screens.session.controller import Controller
from tui.screens.session.worker_messages import InsightsReady

if TYPE_CHECKING:
    from core.model.session import Session
    from core.replay import ReplayResult
    from tui.screens.session.view import SessionView


INSIGHTS_DELAY_S = 0.25
"""How long after a replay is shown its insights start: the frames a limit change or a key
causes come first, and a quick succession of changes starts one computation, not one each."""


class InsightsRunner(Controller):
    """Works out the breakdown, the cost and the compaction reports of the shown replay."""

    def __init__(self, view: SessionView) -> None:
        super().__init__(view)
        self._cache: Insights | None = None
        """The last insights worked out (their breakdown and cost are reused for the same
        session)."""
        self._timer: Timer | None = None
        self.wait: Callable[[], bool] = lambda: False
        """Other work on the shown result runs (the inferred threshold): the insights start
        after it (:meth:`other_work_done`) rather than hold their data beside its."""
        self._waiting = False
        """The insights are due, after the work :attr:`wait` says runs."""
        self._computing = False

    @property
    def pending(self) -> bool:
        """A replay is shown whose insights wait for :data:`INSIGHTS_DELAY_S`, or for other
        work on it, to start."""
        return self._timer is not None or self._waiting

    @property
    def busy(self) -> bool:
        """The insights of the shown result are about to start or being worked out."""
        return self.pending or self._computing

    def forget(self) -> None:
        """Let go of the insights kept (the screen is closed)."""
        self._cache = None
        self._waiting = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def result_shown(self) -> None:
        """A replay result is on screen: work out its insights, once the screen has caught up."""
        state = self.view.state
        if state is None or state.result is None:
            return
        if state.insights is not None:  # the session's breakdown and cost stay meanwhile
            state.insights = state.insights.pending(state.result)
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.view.set_timer(INSIGHTS_DELAY_S, self._start)

    def hold(self) -> None:
        """A new replay starts: the insights of the result shown now are not started (they
        would take the interpreter from the replay, and a newer result follows; a replay that
        ends without one shows this result again, :meth:`result_shown`)."""
        self._waiting = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _start(self) -> None:
        self._timer = None
        if self.wait():
            self._waiting = True
            return
        state = self.view.state
        if state is not None and state.result is not None:
            self._computing = True
            self._compute(state.session, state.result, self._cache, self.view.breakdown_shown)

    def other_work_done(self) -> None:
        """The work :attr:`wait` waited for is done: start the insights due meanwhile."""
        if self._waiting:
            self._waiting = False
            self._start()

    def want_breakdown(self) -> bool:
        """The breakdown band opened: work out every call's breakdown now if it is not known
        (True: it is on its way)."""
        state = self.view.state
        if state is None or state.result is None:
            return state is not None  # (worked out with the first replay's insights)
        insights = state.insights
        if insights is not None and insights.breakdown is not None:
            return False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._waiting = False  # (asked for: now, beside whatever else runs)
        self._computing = True
        self._compute(state.session, state.result, self._cache, True)
        return True

    @work(
        thread=True,
        exclusive=True,
        group="insights",
        exit_on_error=False,
        description="Breakdown, cost and compaction reports",
    )
    def _compute(
        self,
        session: Session,
        result: ReplayResult,
        previous: Insights | None,
        each_call: bool,
    ) -> None:
        try:
            insights = compute_insights(session, result, previous, each_call=each_call)
        except Exception as exc:  # (a report that fails must not end the screen: say so)
            reason = " ".join(str(exc).split()) or type(exc).__name__
            self.app.call_from_thread(self._failed, reason)
            return
        finally:
            release_free_memory()  # (what the reports were made from)
        self.view.post_message(InsightsReady(insights))

    def _failed(self, reason: str) -> None:
        self._computing = False
        self.app.notify(
            f"The breakdown, cost and compaction reports could not be worked out: {reason}",
            title="Insights",
            severity="error",
            timeout=10,
        )
        self.view.detail.refresh_decision(at_once=True)  # (its count waited for them)

    def insights_ready(self, event: InsightsReady) -> None:
        self._computing = False
        view = self.view
        insights = event.insights
        known = self._cache
        if (
            insights.breakdown is None
            and known is not None
            and known.session is insights.session
            and known.breakdown is not None
        ):  # (an earlier computation without the breakdown ended after the one with it)
            insights = replace(insights, breakdown=known.breakdown, cost=known.cost)
        self._cache = insights
        state = view.state
        if state is None or state.session is not insights.session:
            return
        if state.result is not insights.result:
            return  # a newer replay is shown: its own insights are on the way
        opened = state.insights is None  # (the count of the message selected at open waited)
        state.insights = insights
        view.status.show(state)
        view.detail.refresh_decision(at_once=opened)
        view.show_breakdown_call(view.gauge.selected_call)
