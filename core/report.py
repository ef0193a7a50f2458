"""The ``ctxscope analyze`` report: a replay and the overflow diagnosis of the same session, in
one JSON document (``analyze --json``)."""

from __future__ import annotations

from pydantic import Field

from core.breakdown import ContextBreakdown, breakdown
from core.compactions import CompactionReport, compaction_reports
from core.cost import SessionCost, session_cost
from core.diagnosis import OverflowDiagnosis
from core.fastmodel import build
from core.figures import recorded_compactions
from core.models import Session
from core.replay.results import (
    SCHEMA_VERSION,
    Documented,
    FidelityRow,
    InferredThreshold,
    ReplayEvent,
    ReplayResult,
    ReplaySummary,
    ThresholdSpan,
)


class SessionInfo(Documented):
    """What was loaded, for the JSON reports."""

    id: str
    """Session id."""
    format: str
    """Format it was loaded from."""
    path: str | None
    """File or folder it was loaded from."""
    model: str | None
    """Main model, when recorded."""
    window: int | None
    """The window the replay used."""
    window_source: str
    """Where the window came from: ``recorded``, ``table``, ``inferred``, ``user`` or ``policy``."""
    window_evidence: str | None = None
    """Why the window is what it is (one sentence)."""
    agent_version: str | None = None
    """Version of the agent that recorded the session, when recorded."""
    provider: str | None = None
    """Who served the model, when recorded or evident."""
    messages: int
    """Messages in the session."""
    calls: int
    """Model calls."""
    turns: int
    """Real user turns."""
    recorded_compactions: int
    """Compactions the session went through: those the recording holds, less those the user
    rewound past (:data:`core.figures.RECORDED_COMPACTIONS`)."""
    diagnostics: int
    """Lines the loader skipped or repaired."""


class CheckEntry(Documented):
    """One line of the check log: the compaction check before one model call."""

    call_index: int
    """The call the check came before."""
    message_index: int
    """That call's message."""
    checked: bool
    """The policy checked before this call (its schedule may skip calls inside a turn)."""
    tokens: int | None
    """The figure the check saw (None: nothing to measure yet)."""
    basis: str | None
    """How that figure was made: ``recorded``, ``projected`` or ``estimated``."""
    threshold: int | None
    """The threshold it was compared with."""
    threshold_source: str | None
    """``rule`` or ``inferred`` (see ``thresholds``)."""
    fired: bool
    """The check fired a compaction."""


class AnalysisReport(Documented):
    """``ctxscope analyze --json``: the overflow diagnosis, the replay summary and its fidelity."""

    schema_version: int = SCHEMA_VERSION
    """Version of this JSON layout (1)."""
    session: SessionInfo
    """What was loaded."""
    policy: str
    """Name of the policy replayed."""
    threshold: int | None
    """Its threshold for the window."""
    overflow: bool
    """The recording overflowed, or the replay under the policy does (``--fail-on-overflow``)."""
    diagnosis: OverflowDiagnosis
    """The overflow diagnosis of the recording."""
    summary: ReplaySummary
    """The replay's figures."""
    fidelity: list[FidelityRow]
    """How the replay matched each recorded compaction."""
    events: list[ReplayEvent]
    """The replay's compactions, prunings and overflows (truncations are in ``summary``)."""
    notes: list[str]
    """What the figures rest on (estimates, calibration, gaps)."""
    thresholds: list[ThresholdSpan] = Field(default_factory=list)
    """The policy's threshold over each stretch of calls between recorded compactions, and where
    it comes from."""
    inferred_threshold: InferredThreshold | None = None
    """The interval the session's own compactions give the recording agent's threshold."""
    checks: list[CheckEntry] = Field(default_factory=list)
    """The check log: at every model call, what the policy's compaction check saw and did."""
    breakdown: ContextBreakdown | None = None
    """What fills the window at every call: the recorded total split by category."""
    compactions: list[CompactionReport] = Field(default_factory=list)
    """Every compaction (recorded, then the replay's own): why it ran, what it forgot
    (``forgotten``), what it cost."""
    cost: SessionCost | None = None
    """What the session cost: per call, per compaction, in total."""


def check_log(result: ReplayResult) -> list[CheckEntry]:
    """The check log of a replay, one entry per call, from the result's columns (its points are
    not built for this; the entries are typed already and not validated again: 50,000 calls)."""
    column = result.point_column
    rows = zip(
        column("call_index"),
        column("message_index"),
        column("checked"),
        column("check_tokens"),
        column("check_basis"),
        column("threshold"),
        column("threshold_source"),
        column("check_fired"),
        strict=True,
    )
    return [
        build(
            CheckEntry,
            {
                "call_index": call,
                "message_index": message,
                "checked": checked,
                "tokens": tokens,
                "basis": basis,
                "threshold": threshold,
                "threshold_source": source,
                "fired": fired,
            },
        )
        for call, message, checked, tokens, basis, threshold, source, fired in rows
    ]


def session_info(session: Session, result: ReplayResult) -> SessionInfo:
    """The :class:`SessionInfo` of a replayed session."""
    return SessionInfo(
        id=session.id,
        format=session.format.value,
        path=session.path,
        model=session.model,
        window=result.window,
        window_source=result.window_source,
        window_evidence=result.window_evidence,
        agent_version=session.agent_version,
        provider=session.provider,
        messages=len(session.messages),
        calls=result.call_count,
        turns=sum(1 for m in session.messages if m.is_turn_start),
        recorded_compactions=recorded_compactions(session),
        diagnostics=len(session.diagnostics),
    )


def analysis_report(
    session: Session,
    result: ReplayResult,
    diagnosis: OverflowDiagnosis,
    inferred: InferredThreshold | None = None,
) -> AnalysisReport:
    """Put a replay, its diagnosis and the inferred threshold together, with the context
    breakdown, the compactions and the cost of the recording (what ``ctxscope analyze``
    prints)."""
    cost = session_cost(session)
    return AnalysisReport(
        session=session_info(session, result),
        policy=result.policy.name,
        threshold=result.threshold,
        overflow=diagnosis.overflowed or result.summary.overflows_simulated > 0,
        diagnosis=diagnosis,
        summary=result.summary,
        fidelity=result.fidelity,
        events=[e for e in result.events if e.kind not in ("truncate", "continue")],
        notes=result.notes,
        thresholds=result.thresholds,
        inferred_threshold=inferred,
        checks=check_log(result),
        breakdown=breakdown(session, estimator=result.policy.estimator),
        compactions=compaction_reports(session, result, cost),
        cost=cost,
    )
