"""The ``ctxscope analyze`` report: a replay and the overflow diagnosis of the same session, in
one JSON document (``analyze --json``)."""

# (No ``from __future__ import annotations`` here: the models' field annotations are evaluated
# once by the class body, not compiled and evaluated from strings by pydantic for each field as
# each class is created; tests/unit/test_model_annotations.py holds it.)

from array import array
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_serializer
from pydantic_core import to_json

from core.insights.compaction_records import CompactionReport, compaction_reports
from core.insights.cost import SessionCost, session_cost
from core.insights.diagnosis import OverflowDiagnosis
from core.insights.estimate_calibration import (
    calibration,
    calibration_note,
    prompts_estimated,
)
from core.insights.named_figures import (
    ThresholdFigure,
    peak,
    recorded_compactions,
    replay_threshold,
    threshold_figure,
)
from core.model.fastmodel import build, build_filled
from core.model.json_text import model_json_bytes
from core.model.lazy_types import lazy_field_types
from core.model.session import Session
from core.replay.recorded import turn_count
from core.replay.results import (
    Documented,
    FidelityRow,
    InferredThreshold,
    ReplayEvent,
    ReplayResult,
    ReplaySummary,
    ThresholdSpan,
)

if TYPE_CHECKING:
    from core.fleet.subagent_info import SubagentInfo
    from core.insights.calibration_figures import EstimateCalibration

# (a report has sub-agents or a calibration only for some sessions: their classes are created
# then, not as every ``analyze`` starts)
lazy_field_types(
    __name__,
    SubagentInfo="core.fleet.subagent_info",
    EstimateCalibration="core.insights.calibration_figures",
)

ANALYSIS_SCHEMA_VERSION = 2
"""Version of ``analyze --json`` (2: the per-call breakdown, costs and check log moved out, the
per-call timeline came in as columns; docs/REPLAY_API.md's changelog). ``replay``, ``compare``
and the other documents keep :data:`core.replay.results.SCHEMA_VERSION`."""


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
    rewound past (:data:`core.insights.named_figures.RECORDED_COMPACTIONS`)."""
    diagnostics: int
    """Lines the loader skipped or repaired."""
    parent_session_id: str | None = None
    """The session that started this one (a sub-agent's parent); None for a top-level session."""
    peak_tokens: int | None = None
    """The recording's peak prompt (:data:`core.insights.named_figures.PEAK`: the largest prompt
    before the reply, for every agent; recorded, else estimated; the fleet, the export and the
    HTML report state the same figure).
    ``summary.peak_simulated`` is the replay's own."""
    peak_call_index: int | None = None
    """The call of that peak (the first of equals). ``summary.peak_call_index`` is the call of
    the replay's simulated peak, which differs where the replay compacts elsewhere."""


class CallTimeline(Documented):
    """The context at every model call, as columns: entry ``i`` of each list is call ``i``."""

    message_index: list[int]
    """The message of each call."""
    recorded_tokens: list[int | None]
    """The context the recording holds at each call (None: no usage recorded)."""
    check_tokens: list[int | None]
    """The figure the policy's compaction check saw before each call (None: it did not check,
    or there was nothing to measure yet)."""
    simulated_tokens: list[int]
    """The context under the policy's replay at each call."""

    @field_serializer("message_index")
    def _plain_list(self, values: Sequence[int]) -> list[int]:
        """A column held as an int array (the calls' own, not copied) written as a list."""
        return values.tolist() if isinstance(values, array) else list(values)


class AnalysisReport(Documented):
    """``ctxscope analyze --json``: the overflow diagnosis, the replay summary and its fidelity."""

    schema_version: int = ANALYSIS_SCHEMA_VERSION
    """Version of this JSON layout (2)."""
    session: SessionInfo
    """What was loaded."""
    policy: str
    """Name of the policy replayed."""
    threshold: int | None
    """Its threshold for the window (``threshold_figure`` labels it)."""
    threshold_figure: ThresholdFigure | None = None
    """That threshold with its source (``rule``, ``inferred``, ``learned``) and whether it can
    fire before an overflow (:data:`core.insights.named_figures.THRESHOLD`)."""
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
    inferred_threshold_figure: ThresholdFigure | None = None
    """The threshold of that interval (its ``value``) labelled ``inferred``, flagged where it is
    at or above the window."""
    timeline: CallTimeline | None = None
    """The context at every call, recorded, checked and simulated, as columns (the rest of each
    call is in ``replay --json``'s ``points``, its breakdown in ``breakdown --json``)."""
    compactions: list[CompactionReport] = Field(default_factory=list)
    """Every compaction (recorded, then the replay's own): why it ran, what it forgot
    (``forgotten``), what it cost."""
    cost: SessionCost | None = None
    """What the session cost, in total and per compaction (``per_call`` and ``other_calls`` are
    left empty here: ``breakdown --json`` has them)."""
    subagents: "list[SubagentInfo]" = Field(default_factory=list)
    """The sub-agents this session started, each with its own figures."""
    calibration: "EstimateCalibration | None" = None
    """For a session whose file records no prompt size (Copilot CLI): the estimate against the
    context sizes the file did measure."""


def call_timeline(result: ReplayResult) -> CallTimeline:
    """The recorded, checked and simulated context at every call of a replay, from the result's
    columns (its points are not built for this)."""
    column = result.point_column
    return build(
        CallTimeline,
        {
            "message_index": _as_column(column("message_index")),
            "recorded_tokens": _as_list(column("recorded_tokens")),
            "check_tokens": _as_list(column("check_tokens")),
            "simulated_tokens": _as_list(column("simulated_tokens")),
        },
    )


def _as_list(values: Sequence[Any]) -> list[Any]:
    """``values`` as a list: the column itself when it is one (the result's columns are read,
    never written: a copy of each, 0.4 MB at 50,000 calls, was the report's peak), else a copy."""
    return values if type(values) is list else list(values)


def _as_column(values: Sequence[int]) -> Sequence[int]:
    """``values`` as a list or an int array: the column itself when it is either (the calls'
    message indices, 4 bytes a call, not made into a list of int objects at the report's peak),
    else a copy."""
    return values if type(values) is list or isinstance(values, array) else list(values)


def session_info(session: Session, result: ReplayResult) -> SessionInfo:
    """The :class:`SessionInfo` of a replayed session."""
    top = peak(session, result)
    return build(
        SessionInfo,
        {
            "id": session.id,
            "format": session.format.value,
            "path": session.path,
            "model": session.model,
            "window": result.window,
            "window_source": result.window_source,
            "window_evidence": result.window_evidence,
            "agent_version": session.agent_version,
            "provider": session.provider,
            "messages": len(session.messages),
            "calls": result.call_count,
            "turns": turn_count(session),
            "recorded_compactions": recorded_compactions(session),
            "diagnostics": len(session.diagnostics),
            "parent_session_id": session.parent_session_id,
            "peak_tokens": None if top is None else top.tokens,
            "peak_call_index": None if top is None else top.call_index,
        },
    )


def analysis_report(
    session: Session,
    result: ReplayResult,
    diagnosis: OverflowDiagnosis,
    inferred: InferredThreshold | None = None,
    subagents: "list[SubagentInfo] | None" = None,
    cost: SessionCost | None = None,
) -> AnalysisReport:
    """Put a replay, its diagnosis and the inferred threshold together, with the per-call
    timeline, the compactions and the cost of the recording (what ``ctxscope analyze``
    prints; per-call breakdowns and costs are
    :class:`core.reports.breakdown.BreakdownReport`'s); ``subagents``: the figures of the
    sub-agents it started (``core.fleet`` replays them); ``cost``: the session's
    ``session_cost(session, each_call=False)`` when the caller worked it out already (``analyze``
    does before the replay: its columns are made and freed below the load's peak)."""
    if cost is None:
        cost = session_cost(session, each_call=False)
    calibrated = (
        None
        if not prompts_estimated(session)
        else calibration(session, result.points, lambda: result.message_column("tokens"))
    )
    notes = list(result.notes)
    note = calibration_note(calibrated) if calibrated is not None else None
    if note is not None:
        notes.append(note)
    return build_filled(
        AnalysisReport,
        {
            "session": session_info(session, result),
            "policy": result.policy.name,
            "threshold": result.threshold,
            "threshold_figure": replay_threshold(result),
            "overflow": diagnosis.overflowed or result.summary.overflows_simulated > 0,
            "diagnosis": diagnosis,
            "summary": result.summary,
            "fidelity": result.fidelity,
            "events": [e for e in result.events if e.kind not in ("truncate", "continue")],
            "notes": notes,
            "thresholds": result.thresholds,
            "inferred_threshold": inferred,
            "inferred_threshold_figure": (
                None
                if inferred is None or inferred.value is None
                else threshold_figure(inferred.value, "inferred", result.window)
            ),
            "timeline": call_timeline(result),
            "compactions": compaction_reports(session, result, cost),
            "cost": cost,
            "subagents": subagents or [],
            "calibration": calibrated,
        },
    )


TIMELINE_PIECE_CALLS = 8192
"""Calls of each timeline column written at a time by :func:`analysis_json_pieces`."""

_TIMELINE_NULL = b'\n  "timeline": null'
"""The report's timeline key as a report without one writes it (a top-level key: the only
place a line starts with two spaces then that key; a string's line breaks are escaped)."""


def analysis_json_pieces(
    report: AnalysisReport, *, calls: int = TIMELINE_PIECE_CALLS
) -> Iterator[bytes]:
    """``model_json_bytes(report)`` (``analyze --json``'s document) in pieces that join to the
    same bytes: the report without its timeline, then the timeline's columns ``calls`` calls at
    a time. A 100 MB session's document (2.8 MB, most of it the timeline) is never held whole
    at the command's peak."""
    timeline = report.timeline
    if timeline is None:
        yield model_json_bytes(report)
        return
    rest = model_json_bytes(report, replace={"timeline": None})
    at = rest.find(_TIMELINE_NULL)
    assert at >= 0, "a report writes its timeline key"
    end = at + len(_TIMELINE_NULL)
    head, tail = rest[: end - len(b"null")], rest[end:]
    del rest  # (held with its head and a joined copy, three of its size at the peak: 1.2 MB each
    # for a 100 MB Codex session's events)
    yield head
    del head
    yield from _timeline_pieces(timeline, calls)
    yield tail


def _timeline_pieces(timeline: CallTimeline, calls: int) -> Iterator[bytes]:
    """The timeline as the report's serialiser writes it two spaces in (its keys four, its
    columns' values six), each column's values serialised ``calls`` at a time."""
    names = list(CallTimeline.model_fields)
    yield b"{"
    for k, name in enumerate(names):
        yield b'\n    "' + name.encode() + b'": '
        values = getattr(timeline, name)
        if not values:
            yield b"[]"
        else:
            yield b"["
            for start in range(0, len(values), calls):
                # b'[\n  1,\n  2\n]' -> b'\n      1,\n      2'
                piece = values[start : start + calls]
                if isinstance(piece, array):  # (an int column's piece: a list to write)
                    piece = piece.tolist()
                body = to_json(piece, indent=2)[1:-2]
                body = body.replace(b"\n", b"\n    ")
                yield body if start == 0 else b"," + body
            yield b"\n    ]"
        if k < len(names) - 1:
            yield b","
    yield b"\n  }"
