"""The ``ctxscope breakdown --json`` report: what fills the window at every model call, and what
each call cost (a module of its own: ``analyze`` imports neither the breakdown nor this)."""

from __future__ import annotations

from core.insights.breakdown import ContextBreakdown
from core.insights.cost import SessionCost


class BreakdownReport(ContextBreakdown):
    """``ctxscope breakdown --json``: what fills the window at every model call, and what each
    call cost."""

    cost: SessionCost | None = None
    """What the session cost: per call, per compaction, in total."""


def breakdown_report(found: ContextBreakdown, cost: SessionCost | None) -> BreakdownReport:
    """A session's breakdown with its cost (``breakdown --json``); the calls are not copied."""
    return BreakdownReport.model_construct(**dict(found), cost=cost)
