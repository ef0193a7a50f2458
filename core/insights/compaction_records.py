"""Every compaction of a session in one record: why it ran, what it forgot, what it cost.

:func:`compaction_reports` joins :mod:`core.insights.compaction_causes` (what filled the window, the
threshold, the check that crossed it), :mod:`core.insights.forgotten_facts` (the head's facts the summary
kept and dropped) and :mod:`core.insights.cost` (the summary call and the cache it invalidated), one
:class:`CompactionReport` per compaction: the recording's (in order), then the ones the replay's
policy made on its own. ``compactions`` in ``analyze --json``.
"""

from __future__ import annotations

from core.insights.compaction_causes import CompactionCause, compaction_causes
from core.insights.conversation_facts import FactMemo
from core.insights.cost import CompactionCost, SessionCost
from core.insights.forgotten_facts import Forgotten, recorded_forgotten, replayed_forgotten
from core.insights.named_figures import CompactionFigures, compaction_figures
from core.model.fastmodel import build
from core.model.session import Session
from core.replay.results import Documented, ReplayResult


class CompactionReport(Documented):
    """One compaction: why it ran, what its summary forgot, what it cost."""

    why: CompactionCause
    """What filled the window since the previous compaction, the threshold and the check that
    crossed it (the trigger, for the user's own)."""
    forgotten: Forgotten | None
    """What its summary kept of the head it replaced (None: a compaction of the replay that
    wrote no summary)."""
    cost: CompactionCost | None = None
    """What it cost (recorded compactions)."""
    figures: CompactionFigures | None = None
    """Its named figures (recorded compactions): at message, the agent's count, the check, the
    last prompt before it and the tokens after it (:mod:`core.insights.named_figures`)."""


def compaction_reports(
    session: Session, result: ReplayResult, cost: SessionCost | None = None
) -> list[CompactionReport]:
    """The :class:`CompactionReport` of every compaction of ``session`` and of ``result``."""
    memo = FactMemo()  # (the replay's heads hold the recording's messages: their facts once)
    recorded = recorded_forgotten(session, memo=memo, records=False)  # (reports print no list)
    replayed = replayed_forgotten(session, result, memo, records=False)
    costs = {c.recorded_index: c for c in cost.compactions} if cost is not None else {}
    figures = compaction_figures(session, result)
    reports: list[CompactionReport] = []
    for cause in compaction_causes(session, result):
        forgotten: Forgotten | None = None
        compaction_cost: CompactionCost | None = None
        named: CompactionFigures | None = None
        if cause.recorded_index is not None:
            named = figures[cause.recorded_index]
            found = recorded.get(cause.recorded_index)
            forgotten = found[0] if found is not None else None
            compaction_cost = costs.get(cause.recorded_index)
        elif cause.event_id is not None and cause.event_id in replayed:
            forgotten = replayed[cause.event_id][0]
        reports.append(  # (typed values, one a compaction: no validation)
            build(
                CompactionReport,
                {"why": cause, "forgotten": forgotten, "cost": compaction_cost, "figures": named},
            )
        )
    return reports
