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
from core.replay.results import CallPoint, Documented, ReplayEvent, ReplayResult


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
    best: tuple[float, int] | None = None
    found: CallPoint | None = None
    for point in points:
        tokens = point.baseline_tokens
        key = (tokens / point.window if point.window else -1.0, tokens)
        if best is None or key > best:
            best, found = key, point
    return found


def context_measure(session: Session) -> str:
    """The :data:`CONTEXT_MEASURE` of ``session``'s recorded figures, peak included:
    ``prompt`` or ``prompt + reply`` (``prompt`` when no call records usage)."""
    for message in session.messages:
        if message.usage is not None:
            anthropic = message.usage.convention is UsageConvention.ANTHROPIC
            return "prompt" if anthropic else "prompt + reply"
    return "prompt"


# -- a compaction's figures, as the TUI names them (the same words as every other output) ---------

COMPACTION_AT = FactDefinition(
    "at message",
    "where a compaction happened: the 0-based index of the first message after it (its summary, "
    "where it has one); everything before it was in the context it replaced",
    "recorded",
)

AGENT_COUNT = FactDefinition(
    "agent's count",
    "the context the agent itself measured when it compacted, as its file records it (Claude "
    "Code ``preTokens``, pi ``tokensBefore``, …)",
    "recorded",
)

CHECK_FIGURE = FactDefinition(
    "check",
    "what ctxscope's replay of the agent's own check measured right before the call the "
    "compaction came before (the last usage plus an estimate of what came since)",
    "recorded + estimated",
)

LAST_PROMPT = FactDefinition(
    "last prompt",
    "the recorded prompt of the last call before the compaction that records usage",
    "recorded",
)

TOKENS_AFTER = FactDefinition(
    "tokens after",
    "the context a compaction left: the file's own count after it where it has one, else the "
    "replay's estimate",
    "recorded or estimated",
)

FACTS.update(
    (fact.name, fact)
    for fact in (COMPACTION_AT, AGENT_COUNT, CHECK_FIGURE, LAST_PROMPT, TOKENS_AFTER)
)


def compaction_at(session: Session, event: ReplayEvent | None, recorded_index: int | None) -> int:
    """The :data:`COMPACTION_AT` of a compaction: recorded compaction ``recorded_index`` (or the
    one ``event`` took), else the replay's own ``event`` (the message it came right before)."""
    if recorded_index is None and event is not None:
        recorded_index = event.recorded_index
    if recorded_index is not None and 0 <= recorded_index < len(session.compactions):
        return session.compactions[recorded_index].message_index
    if event is None:
        raise ValueError("a compaction is a replay event or a recorded compaction")
    return event.at_message_index if event.at_message_index is not None else event.message_index


# -- the threshold, labelled, and flagged where it is at or above the window ----------------------

THRESHOLD = FactDefinition(
    "threshold",
    "the context at which the agent compacts by itself: its documented rule for the window "
    "(``rule``), the interval its own compactions show (``inferred``), or learned from other "
    "sessions (``learned``); a threshold at or above the window never fires before an overflow "
    "and is flagged so",
    "rule, inferred or learned",
)
FACTS[THRESHOLD.name] = THRESHOLD


class ThresholdFigure(Documented):
    """:data:`THRESHOLD` with its label, and whether it can fire before an overflow."""

    tokens: int | None
    """The threshold (None: the window is unknown)."""
    source: str
    """``rule`` (the agent's documented rule), ``inferred`` (what the session's own compactions
    show), ``learned`` (from other sessions), or the policy's name for another policy."""
    window: int | None
    """The window it applies to."""
    usable: bool
    """Below the window: it can fire before the provider refuses the call (False: at or above
    the window, or unknown)."""
    label: str
    """``167,000 (rule)``, or with the flag: ``210,084 (inferred; at or above the 200,000
    window: never fires before an overflow)``."""


def threshold_figure(tokens: int | None, source: str, window: int | None) -> ThresholdFigure:
    """The :class:`ThresholdFigure` of a threshold from ``source`` for ``window``: every output
    that states a threshold reads its label here, and a threshold at or above the window is
    flagged as one that cannot fire before an overflow."""
    usable = tokens is not None and window is not None and tokens < window
    if tokens is None:
        label = "unknown (window unknown)"
    elif window is not None and tokens >= window:
        label = (
            f"{tokens:,} ({source}; at or above the {window:,} window: never fires before an "
            "overflow)"
        )
    else:
        label = f"{tokens:,} ({source})"
    return ThresholdFigure(tokens=tokens, source=source, window=window, usable=usable, label=label)


def replay_threshold(result: ReplayResult) -> ThresholdFigure:
    """The :class:`ThresholdFigure` of the threshold a replay ran with: ``inferred`` or
    ``learned`` for those policies, ``rule`` for the agent's preset (``rule, inferred in
    places`` where the recording contradicts the rule on some stretch), else the policy's name."""
    name = result.policy.name
    if name in ("inferred", "learned"):
        source = name
    elif result.recording_policy or result.thresholds:
        spans = {span.source for span in result.thresholds}
        source = "rule, inferred in places" if "inferred" in spans else "rule"
    else:
        source = name
    return threshold_figure(result.threshold, source, result.window)
