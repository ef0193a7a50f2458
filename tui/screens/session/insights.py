"""The session screen's insights layer: after each replay, what fills the window at every call,
what the session cost and what each compaction forgot (:mod:`tui.insights`), worked out in a
worker; the breakdown band (``b``) that shows the first of them.

One worker at a time (group ``insights``); the breakdown and the cost are kept per session, so a
new policy only recomputes the compaction reports. What arrives for a session or a result that is
no longer shown is dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.timer import Timer

from tui.insights import Insights, compute_insights
from tui.screens.session.replaying import ReplayingSession
from tui.screens.session.worker_messages import InsightsReady
from tui.widgets.breakdown_chart import BreakdownChart

if TYPE_CHECKING:
    from core.model.session import Session
    from core.replay import ReplayResult


INSIGHTS_DELAY_S = 0.25
"""How long after a replay is shown its insights start: the frames a limit change or a key
causes come first, and a quick succession of changes starts one computation, not one each."""


class InsightsSession(ReplayingSession):
    """Works out the breakdown, the cost and the compaction reports; shows the breakdown band."""

    _insights_cache: Insights | None = None
    """The last insights worked out (their breakdown and cost are reused for the same session)."""

    _insights_timer: Timer | None = None

    @property
    def insights_pending(self) -> bool:
        """A replay is shown whose insights wait for :data:`INSIGHTS_DELAY_S` to start."""
        return self._insights_timer is not None

    def result_shown(self) -> None:
        """A replay result is on screen: work out its insights, once the screen has caught up."""
        state = self.state
        if state is None or state.result is None:
            return
        if state.insights is not None:  # the session's breakdown and cost stay meanwhile
            state.insights = state.insights.pending(state.result)
        if self._insights_timer is not None:
            self._insights_timer.stop()
        self._insights_timer = self.set_timer(INSIGHTS_DELAY_S, self._start_insights)

    def _start_insights(self) -> None:
        self._insights_timer = None
        state = self.state
        if state is not None and state.result is not None:
            self._compute_insights(state.session, state.result, self._insights_cache)

    @work(
        thread=True,
        exclusive=True,
        group="insights",
        exit_on_error=False,
        description="Breakdown, cost and compaction reports",
    )
    def _compute_insights(
        self, session: Session, result: ReplayResult, previous: Insights | None
    ) -> None:
        try:
            insights = compute_insights(session, result, previous)
        except Exception as exc:  # (a report that fails must not end the screen: say so)
            reason = " ".join(str(exc).split()) or type(exc).__name__
            self.app.call_from_thread(
                self.app.notify,
                f"The breakdown, cost and compaction reports could not be worked out: {reason}",
                title="Insights",
                severity="error",
                timeout=10,
            )
            return
        self.post_message(InsightsReady(insights))

    def on_insights_ready(self, event: InsightsReady) -> None:
        insights = event.insights
        self._insights_cache = insights
        state = self.state
        if state is None or state.session is not insights.session:
            return
        if state.result is not insights.result:
            return  # a newer replay is shown: its own insights are on the way
        state.insights = insights
        self.status.show(state)
        self.detail.refresh_decision()
        self.show_breakdown_call(self.gauge.selected_call)

    # -- the breakdown band ----------------------------------------------------------------------

    def action_toggle_breakdown(self) -> None:
        """Show (or hide) the breakdown band under the gauge."""
        slot = self.query_one("#breakdown-slot")
        slot.display = not slot.display
        if slot.display:
            state = self.state
            if state is not None and state.insights is None:
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
