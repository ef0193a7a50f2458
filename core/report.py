"""The ``ctxscope analyze`` report: a replay and the overflow diagnosis of the same session, in
one JSON document (``analyze --json``)."""

from __future__ import annotations

from core.diagnosis import OverflowDiagnosis
from core.models import Session
from core.replay.results import (
    SCHEMA_VERSION,
    Documented,
    FidelityRow,
    ReplayEvent,
    ReplayResult,
    ReplaySummary,
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
    """Where the window came from."""
    messages: int
    """Messages in the session."""
    calls: int
    """Model calls."""
    turns: int
    """Real user turns."""
    recorded_compactions: int
    """Compactions the recording holds."""
    diagnostics: int
    """Lines the loader skipped or repaired."""


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


def session_info(session: Session, result: ReplayResult) -> SessionInfo:
    """The :class:`SessionInfo` of a replayed session."""
    return SessionInfo(
        id=session.id,
        format=session.format.value,
        path=session.path,
        model=session.model,
        window=result.window,
        window_source=result.window_source,
        messages=len(session.messages),
        calls=len(result.points),
        turns=sum(1 for m in session.messages if m.is_turn_start),
        recorded_compactions=len(session.compactions),
        diagnostics=len(session.diagnostics),
    )


def analysis_report(
    session: Session, result: ReplayResult, diagnosis: OverflowDiagnosis
) -> AnalysisReport:
    """Put a replay and its diagnosis together (what ``ctxscope analyze`` prints)."""
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
    )
