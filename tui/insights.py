"""What a session's recording says beyond the gauge: what fills the window at every call, what the
session cost, and why each compaction ran and what it forgot.

:func:`compute_insights` calls the core's entry points — :func:`core.insights.breakdown.breakdown`,
:func:`core.insights.cost.session_cost`, :func:`core.insights.compaction_records.compaction_reports` — and nothing else;
the session screen runs it in a worker (group ``insights``) after each replay and keeps the
result on :class:`~tui.screen_state.SessionState`. The breakdown and the cost depend on the session only,
so a new replay result (a policy change) reuses them; the compaction reports depend on the result.

What is worked out is what is shown: the breakdown of every call and the price of each call only
once the breakdown band asks for them (``each_call``; a 100 MB session's breakdown is as large as
the file), the session's cost and the compaction reports after every replay.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.insights.breakdown import CallBreakdown, ContextBreakdown, breakdown
from core.insights.compaction_records import CompactionReport, compaction_reports
from core.insights.cost import CallCost, SessionCost, session_cost

if TYPE_CHECKING:
    from core.model.session import Session
    from core.replay import ReplayEvent, ReplayResult


@dataclass(frozen=True, slots=True)
class Insights:
    """The breakdown, the cost and the compaction reports of one session and one replay result."""

    session: Session
    result: ReplayResult | None
    breakdown: ContextBreakdown | None
    """None until the breakdown band asks for it (and ``cost.per_call`` is empty until then)."""
    cost: SessionCost
    reports: list[CompactionReport] | None
    """One per compaction, recorded ones first (``compactions`` in ``analyze --json``); None
    while they are worked out for a new result."""

    def __repr__(self) -> str:  # never the whole session (workers repr their arguments)
        calls = "no breakdown" if self.breakdown is None else f"{len(self.breakdown.calls)} calls"
        return f"Insights({self.session.id!r}, {calls})"

    def pending(self, result: ReplayResult | None) -> Insights:
        """These insights under a new replay result whose compaction reports are not known yet
        (the breakdown and the cost stay: they are the session's)."""
        return replace(self, result=result, reports=None)

    def call(self, call_index: int | None) -> CallBreakdown | None:
        """The breakdown of call ``call_index``."""
        if call_index is None or self.breakdown is None:
            return None
        return self.breakdown.at(call_index)

    def call_cost(self, call_index: int | None) -> CallCost | None:
        """The price of call ``call_index`` (None: not priced, or no such call)."""
        if call_index is None:
            return None
        per_call = self.cost.per_call
        if 0 <= call_index < len(per_call) and per_call[call_index].call_index == call_index:
            return per_call[call_index]
        return next((c for c in per_call if c.call_index == call_index), None)

    def report_for(self, event_id: int, event: ReplayEvent) -> CompactionReport | None:
        """The report of the replay's compaction ``event_id`` (taken from the recording or made
        by the replay)."""
        reports = self.reports or []
        for report in reports:
            if report.why.event_id == event_id:
                return report
        return self.report_for_recorded(event.recorded_index)

    def report_for_recorded(self, recorded_index: int | None) -> CompactionReport | None:
        """The report of recorded compaction ``recorded_index`` (whether the replay applied it
        or not)."""
        if recorded_index is None:
            return None
        for report in self.reports or []:
            if report.why.recorded_index == recorded_index:
                return report
        return None


def compute_insights(
    session: Session,
    result: ReplayResult | None,
    previous: Insights | None = None,
    *,
    each_call: bool = False,
) -> Insights:
    """The :class:`Insights` of ``session`` under ``result`` (the breakdown and the cost of
    ``previous`` are reused when it is of the same session); with ``each_call``, the breakdown
    of every call and the price of each (else they are left out, unless ``previous`` has
    them)."""
    if (
        previous is not None
        and previous.session is session
        and (previous.breakdown is not None or not each_call)
    ):
        shown, cost = previous.breakdown, previous.cost
    else:
        shown = breakdown(session) if each_call else None
        cost = session_cost(session, each_call=each_call)
    reports = compaction_reports(session, result, cost) if result is not None else []
    return Insights(session, result, shown, cost, reports)
