"""The facts ctxscope states about a session, each computed by one named function.

Every output (the TUI, the text commands, ``--json``, the HTML report, ``fleet``, the Parquet
export) reads a fact from here, so one fact has one number everywhere. Each fact has a name, a
one-line definition and a provenance label (:data:`FACTS`): where two figures measure different
things they carry different names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.model.session import CompactionEvent, Session, UsageConvention
from core.replay.results import CallPoint


@dataclass(frozen=True, slots=True)
class FactDefinition:
    """What a fact is, in one line, and where its number comes from."""

    name: str
    definition: str
    provenance: str
    """``recorded`` (the file says it), ``estimated`` (ctxscope counted it), ``table`` …"""


RECORDED_COMPACTIONS = FactDefinition(
    "recorded compactions",
    "compactions the session went through: those its file records, less those the user "
    "rewound past (they never took effect)",
    "recorded",
)

PEAK = FactDefinition(
    "peak",
    "the fullest call's context: the largest share of the window (the largest figure where the "
    "window is unknown), each call's context as its agent counts it (recorded where the call has "
    "usage, else estimated)",
    "recorded or estimated (the call's provenance)",
)

CONTEXT_MEASURE = FactDefinition(
    "context measure",
    "what a call's recorded context counts: the prompt before the reply (Claude Code's usage) or "
    "the prompt and the reply (the total Codex, pi and opencode record after it)",
    "recorded",
)

FACTS: dict[str, FactDefinition] = {
    fact.name: fact for fact in (RECORDED_COMPACTIONS, PEAK, CONTEXT_MEASURE)
}
"""Every fact defined here, by name."""


def effective_compactions(session: Session) -> Sequence[CompactionEvent]:
    """The compactions of :data:`RECORDED_COMPACTIONS`, in the file's order."""
    return [event for event in session.compactions if not event.rewound]


def recorded_compactions(session: Session) -> int:
    """How many :data:`RECORDED_COMPACTIONS` the session has."""
    return len(effective_compactions(session))


def peak_point(points: Sequence[CallPoint]) -> CallPoint | None:
    """The call of the :data:`PEAK` (the first of equals; None without calls). Its
    ``baseline_tokens`` is the peak, ``baseline_provenance`` where the figure comes from."""
    at = peak_index([p.baseline_tokens for p in points], [p.window for p in points])
    return None if at is None else points[at]


def peak_index(baseline: Sequence[int], windows: Sequence[int | None]) -> int | None:
    """The call of the :data:`PEAK` from the columns of a replay (each call's
    ``baseline_tokens`` and ``window``): what :func:`peak_point` finds, without the points."""
    best: tuple[float, int] | None = None
    found: int | None = None
    for c, (tokens, window) in enumerate(zip(baseline, windows, strict=True)):
        key = (tokens / window if window else -1.0, tokens)
        if best is None or key > best:
            best, found = key, c
    return found


def context_measure(session: Session) -> str:
    """The :data:`CONTEXT_MEASURE` of ``session``'s recorded figures, peak included:
    ``prompt`` or ``prompt + reply`` (``prompt`` when no call records usage)."""
    for message in session.messages:
        if message.usage is not None:
            anthropic = message.usage.convention is UsageConvention.ANTHROPIC
            return "prompt" if anthropic else "prompt + reply"
    return "prompt"
