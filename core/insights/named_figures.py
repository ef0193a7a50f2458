"""The facts ctxscope states about a session, each computed by one named function.

Every output (the TUI, the text commands, ``--json``, the HTML report, ``fleet``, the Parquet
export) reads a fact from here, so one fact has one number everywhere. Each fact has a name, a
one-line definition and a provenance label (:data:`FACTS`): where two figures measure different
things they carry different names.
"""

# (No ``from __future__ import annotations`` here: the models' field annotations are evaluated
# once by the class body, not compiled and evaluated from strings by pydantic for each field as
# each class is created; tests/unit/test_model_annotations.py holds it.)

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import is_, le
from typing import Literal, Protocol

from core.model.fastmodel import build_filled
from core.model.session import CompactionEvent, Session, UsageConvention
from core.replay.recorded import placed
from core.replay.results import Documented, ReplayEvent, ReplayResult


class ReplayerOfChecks(Protocol):
    """What :func:`recording_checks` needs of a :class:`core.replay.Replayer` (named so that
    this module, which reads results, imports no replay engine)."""

    session: Session

    def recording_checks(self) -> dict[int, int]: ...


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

PROMPT_AT_CALL = FactDefinition(
    "prompt",
    "what a call sent the model: its prompt before the reply (input + cache read + cache write "
    "where the call records usage, for every agent)",
    "recorded, else estimated",
)

CONTEXT_AFTER_REPLY = FactDefinition(
    "context after the reply",
    "a call's prompt plus what the model generated (the total Codex, pi and opencode record)",
    "recorded, else estimated",
)

PEAK = FactDefinition(
    "peak prompt",
    "the fullest call: the largest share of the window (the largest figure where the window is "
    "unknown) of each call's prompt before the reply (:data:`PROMPT_AT_CALL`), the same quantity "
    "for every agent",
    "recorded or estimated (the call's provenance)",
)

CONTEXT_MEASURE = FactDefinition(
    "context measure",
    "what a call's recorded context counts: the prompt before the reply (Claude Code's usage) or "
    "the prompt and the reply (the total Codex, pi and opencode record after it)",
    "recorded",
)

COMPACTION_AT = FactDefinition(
    "at message",
    "where a compaction happened: the 0-based index of the first message after it (its summary, "
    "where it has one); everything before it was in the context it replaced",
    "recorded",
)

AGENT_COUNT = FactDefinition(
    "agent's count",
    "the context the agent itself measured when it compacted, as its file records it (Claude "
    "Code ``preTokens``, pi ``tokensBefore``, Codex's and opencode's last token count before it)",
    "recorded",
)

CHECK_FIGURE = FactDefinition(
    "check",
    "what ctxscope's replay of the agent's own check measured right before the call the "
    "compaction came before (the last usage plus an estimate of what came since)",
    "recorded + estimated",
)

RECORDING_CHECK = FactDefinition(
    "check on the recording",
    "what the agent's check measures before a call when the run makes exactly the recording's "
    "compactions: the evidence about its threshold (``compacted at`` / ``did not at`` of the "
    "inferred interval); it differs from :data:`CHECK_FIGURE` where the replay's context went "
    "another way",
    "recorded + estimated",
)

LAST_PROMPT = FactDefinition(
    "last prompt",
    "the prompt before the reply (:data:`PROMPT_AT_CALL`) of the last call before the compaction "
    "that records usage",
    "recorded",
)

TOKENS_AFTER = FactDefinition(
    "tokens after",
    "the context a compaction left, without any reply's output: the recorded prompt of the first "
    "call after it (before the next compaction), else the file's own count after it (Claude Code "
    "``postTokens``, Codex's reset total), else the replay's estimate; a figure that is not a "
    "recorded prompt is never below what stays (system + tools + summary + kept tail), which "
    "replaces it where larger",
    "next prompt, recorded, estimated or what stays (``tokens_after_source``)",
)

THRESHOLD = FactDefinition(
    "threshold",
    "the context at which the agent compacts by itself: its documented rule for the window "
    "(``rule``), the interval its own compactions show (``inferred``), or learned from other "
    "sessions (``learned``); a threshold at or above the window never fires before an overflow "
    "and is flagged so",
    "rule, inferred or learned",
)

FACTS: dict[str, FactDefinition] = {
    fact.name: fact
    for fact in (
        RECORDED_COMPACTIONS,
        PROMPT_AT_CALL,
        CONTEXT_AFTER_REPLY,
        PEAK,
        CONTEXT_MEASURE,
        COMPACTION_AT,
        AGENT_COUNT,
        CHECK_FIGURE,
        RECORDING_CHECK,
        LAST_PROMPT,
        TOKENS_AFTER,
        THRESHOLD,
    )
}
"""Every fact defined here, by name."""


def effective_compactions(session: Session) -> Sequence[CompactionEvent]:
    """The compactions of :data:`RECORDED_COMPACTIONS`, in the file's order."""
    return [event for event in session.compactions if not event.rewound]


def recorded_compactions(session: Session) -> int:
    """How many :data:`RECORDED_COMPACTIONS` the session has."""
    return len(effective_compactions(session))


@dataclass(frozen=True, slots=True)
class Peak:
    """The :data:`PEAK`: its figure, its call, where the figure comes from and its share."""

    tokens: int
    call_index: int
    provenance: str
    """``recorded``, ``estimated`` or ``counted``."""
    window: int | None
    """The window at that call."""

    @property
    def share(self) -> float | None:
        """The figure over the window at its call (None: window unknown)."""
        return self.tokens / self.window if self.window else None


def prompt_at_calls(session: Session, result: ReplayResult) -> list[tuple[int, str]]:
    """The :data:`PROMPT_AT_CALL` of every call of ``result``: ``(tokens, provenance)``. A call
    whose usage is recorded gives its prompt as recorded; another one the replay's projection of
    the recording (less its own reply's estimate where the projection is after the reply)."""
    tokens, provenance = prompt_columns(session, result)
    return list(zip(tokens, provenance, strict=True))


def prompt_columns(session: Session, result: ReplayResult) -> tuple[list[int], list[str]]:
    """:func:`prompt_at_calls` as two columns, the tokens and the provenance of every call (no
    object per call: a call's point is built only where its prompt is not recorded)."""
    recorded = _recorded_prompt_column(session, result)
    missing = [call for call, prompt in enumerate(recorded) if prompt is None]
    if not missing:
        return [prompt for prompt in recorded if prompt is not None], ["recorded"] * len(recorded)
    tokens = [0 if prompt is None else prompt for prompt in recorded]
    provenance = ["recorded"] * len(recorded)
    baseline = result.point_column("baseline_tokens")
    at_calls = result.point_column("message_index")
    replies: Sequence[int] | None = None
    for call, (kind, source) in zip(missing, _projections(result, missing), strict=True):
        figure = baseline[call]
        if kind == "after-reply":
            if replies is None:
                replies = result.message_column("tokens")
            at = at_calls[call]
            figure = max(0, figure - (replies[at] if at < len(replies) else 0))
        tokens[call] = figure
        provenance[call] = str(getattr(source, "value", source))
    return tokens, provenance


def _recorded_prompt_column(session: Session, result: ReplayResult) -> list[int | None]:
    """Each call's recorded prompt (``usage.prompt_tokens``), None where the call has no
    recorded figure (no usage, or a usage the replay does not take as the call's context);
    made once per result (the peak and the compactions' figures both read it)."""
    cached = session.derived.get("recorded_prompts")
    if cached is not None and cached[0] is result:
        column: list[int | None] = cached[1]
        return column
    at_calls = result.point_column("message_index")
    figures = result.point_column("recorded_tokens")
    calls = placed(session)[0]
    if at_calls is calls.calls or (
        len(at_calls) == len(calls.calls) and list(at_calls) == calls.calls
    ):
        column = _prompts_from_calls(session, calls.usage_prompt, at_calls, figures)
    else:  # (a result of another placing of the calls: each call's usage read again)
        column = plain_recorded_prompts(session, at_calls, figures)
    session.derived["recorded_prompts"] = (result, column)
    return column


def plain_recorded_prompts(
    session: Session, at_calls: Sequence[int], figures: Sequence[int | None]
) -> list[int | None]:
    """:func:`_recorded_prompt_column` read from each call's message: its usage's prompt where
    the call has a recorded figure (``figures``), else None."""
    messages = session.messages
    count = len(messages)
    usages = [messages[at].usage if 0 <= at < count else None for at in at_calls]
    return [
        None if usage is None or figure is None else usage.prompt_tokens
        for usage, figure in zip(usages, figures, strict=True)
    ]


def _prompts_from_calls(
    session: Session,
    prompts: Sequence[int | None],
    at_calls: Sequence[int],
    figures: Sequence[int | None],
) -> list[int | None]:
    """:func:`plain_recorded_prompts` from the prompt column the placing of the calls read
    (``Calls.usage_prompt``: the prompt of each call's usable usage), without reading a
    message: a call with a figure but no usable usage (an all-zero one) is read plainly."""
    column = [
        None if figure is None else prompt for prompt, figure in zip(prompts, figures, strict=True)
    ]
    gaps = [
        c
        for c in compress(range(len(column)), map(is_, column, repeat(None)))
        if figures[c] is not None
    ]
    if not gaps and isinstance(prompts, list) and column == prompts:
        return prompts  # (the calls' own column, read only: not a copy kept to the end)
    for c, prompt in zip(
        gaps,
        plain_recorded_prompts(session, [at_calls[c] for c in gaps], [figures[c] for c in gaps]),
        strict=True,
    ):
        column[c] = prompt
    return column


def _projections(result: ReplayResult, calls: list[int]) -> list[tuple[object, object]]:
    """``(recorded_kind, baseline_provenance)`` of ``calls``, from the result's columns (the
    replay keeps both as columns: no point is built; 4,194 points of a 100 MB Codex session
    took 0.1 s)."""
    kinds = result.point_column("recorded_kind")
    provenance = result.point_column("baseline_provenance")
    return [(kinds[c], provenance[c]) for c in calls]


def peak(session: Session, result: ReplayResult) -> Peak | None:
    """The :data:`PEAK` of a replayed session (the first of equals; None without calls)."""
    tokens, provenance = prompt_columns(session, result)
    if not tokens:
        return None
    windows = result.point_column("window")
    best_call = 0
    if len(set(windows)) == 1:  # one window (or none) at every call: the largest prompt is
        best_call = tokens.index(max(tokens))  # the largest share (the first of equals)
    else:
        best: tuple[float, int] | None = None
        for call, tokens_at in enumerate(tokens):
            window = windows[call]
            key = (tokens_at / window if window else -1.0, tokens_at)
            if best is None or key > best:
                best, best_call = key, call
    return Peak(tokens[best_call], best_call, provenance[best_call], windows[best_call])


def context_measure(session: Session) -> str:
    """The :data:`CONTEXT_MEASURE` of ``session``'s recorded figures, peak included:
    ``prompt`` or ``prompt + reply`` (``prompt`` when no call records usage)."""
    for message in session.messages:
        if message.usage is not None:
            anthropic = message.usage.convention is UsageConvention.ANTHROPIC
            return "prompt" if anthropic else "prompt + reply"
    return "prompt"


# -- compactions -------------------------------------------------------------------------------

TokensAfterSource = Literal["next prompt", "recorded", "estimated", "what stays"]


class CompactionFigures(Documented):
    """The figures of one recorded compaction, each a named fact (:data:`FACTS`)."""

    recorded_index: int
    """Its position among the session's recorded compactions."""
    at_message: int
    """:data:`COMPACTION_AT`: the first message after it (0-based)."""
    call_index: int | None
    """The call it came before (the refused call, for an overflow recovery)."""
    agent_count: int | None
    """:data:`AGENT_COUNT` (None: the file records none)."""
    check_tokens: int | None
    """:data:`CHECK_FIGURE` (None: the check did not run, a user's compaction)."""
    last_prompt: int | None
    """:data:`LAST_PROMPT` (None: no call before it records usage)."""
    last_prompt_call: int | None
    """The call of that prompt."""
    tokens_after: int | None
    """:data:`TOKENS_AFTER` (None: nothing measures it)."""
    tokens_after_source: TokensAfterSource | None
    """Where it comes from: ``next prompt`` (the recorded prompt of the first call after it,
    before the next compaction), ``recorded`` (the file's own count after it), ``estimated`` (the
    replay's), ``what stays`` (system + tools + summary + kept tail, larger than the figure it
    replaced)."""
    stays_tokens: int | None
    """What stays after it: system + tools (as the replay calibrates them) + summary + kept tail
    (estimated); :attr:`tokens_after` is never below it unless it is a recorded prompt (a
    measurement of all of it)."""


def compaction_figures(session: Session, result: ReplayResult) -> list[CompactionFigures]:
    """The :class:`CompactionFigures` of every recorded compaction of ``session`` (rewound ones
    included, in the file's order), from its replay ``result``: the one place every output reads
    a compaction's figures from."""
    cached = session.derived.get("compaction_figures")
    if cached is not None and cached[0] is result:
        return list(cached[1])
    if not session.compactions:  # (no figure to state: no column of every call's prompt)
        return []
    rows = {row.recorded_index: row for row in result.fidelity}
    events = {
        e.recorded_index: e
        for e in result.events
        if e.recorded_index is not None and e.kind in ("compact", "recorded-compaction")
    }
    prompts = _recorded_prompts(session, result)
    around = _Around(prompts)
    tokens = result.message_column("tokens")
    found: list[CompactionFigures] = []
    for index, event in enumerate(session.compactions):
        row = rows.get(index)
        at = event.message_index
        later = [e.message_index for e in session.compactions[index + 1 :] if not e.rewound]
        until = min(later, default=len(session.messages))
        last, after = around.of(at, until)
        stays = _what_stays(session, result, event, events.get(index), tokens)
        value, source = tokens_after(event, events.get(index), after, stays)
        found.append(
            build_filled(
                CompactionFigures,
                {
                    "recorded_index": index,
                    "at_message": at,
                    "call_index": row.recorded_call_index if row is not None else None,
                    "agent_count": event.tokens_before,
                    "check_tokens": row.check_tokens if row is not None else None,
                    "last_prompt": last[2] if last is not None else None,
                    "last_prompt_call": last[0] if last is not None else None,
                    "tokens_after": value,
                    "tokens_after_source": source,
                    "stays_tokens": stays,
                },
            )
        )
    session.derived["compaction_figures"] = (result, found)
    return list(found)


def recording_checks(replayer: ReplayerOfChecks) -> dict[int, int]:
    """The :data:`RECORDING_CHECK` before each recorded automatic compaction of ``replayer``'s
    session, by recorded index (:meth:`core.replay.Replayer.recording_checks`); kept with the
    session for :func:`recording_check`."""
    checks = replayer.recording_checks()
    replayer.session.derived["recording_checks"] = checks
    return checks


def recording_check(session: Session, recorded_index: int) -> int | None:
    """The :data:`RECORDING_CHECK` before recorded compaction ``recorded_index``, as
    :func:`recording_checks` last worked it out for ``session`` (None: not worked out yet, or
    not an automatic compaction)."""
    checks = session.derived.get("recording_checks")
    return checks.get(recorded_index) if checks else None


def check_figures(figures: CompactionFigures, recording_check: int | None) -> list[tuple[str, int]]:
    """The check figures to state beside a recorded compaction, each with its name: the
    :data:`CHECK_FIGURE` (where the replay's check ran) and the :data:`RECORDING_CHECK` (where
    it differs from it: the replay's context went another way, e.g. it missed an earlier
    compaction). Every output that shows a check beside a recorded compaction words it so."""
    found: list[tuple[str, int]] = []
    if figures.check_tokens is not None:
        found.append((CHECK_FIGURE.name, figures.check_tokens))
    if recording_check is not None and recording_check != figures.check_tokens:
        found.append((RECORDING_CHECK.name, recording_check))
    return found


def tokens_after(
    event: CompactionEvent,
    replayed: ReplayEvent | None,
    next_prompt: tuple[int, int, int] | None,
    stays: int | None,
) -> tuple[int | None, TokensAfterSource | None]:
    """The :data:`TOKENS_AFTER` of one compaction and where it comes from: the next call's
    recorded prompt (``(call, message, prompt)``), else the file's count, else the replay's
    estimate (``replayed``'s), each but the first raised to ``stays`` (what stays) where that is
    larger."""
    if next_prompt is not None:
        return next_prompt[2], "next prompt"
    value: int | None
    source: TokensAfterSource | None
    if event.tokens_after is not None:
        value, source = event.tokens_after, "recorded"
    elif replayed is not None and replayed.tokens_after is not None:
        value, source = replayed.tokens_after, "estimated"
    else:
        value, source = None, None
    if stays is not None and (value is None or value < stays):
        return stays, "what stays"
    return value, source


class _Around:
    """The recorded prompts around a compaction, found by bisection over their messages (a
    session of 37 compactions and 17,000 prompts scanned them all twice per compaction)."""

    def __init__(self, prompts: list[tuple[int, int, int]]) -> None:
        self.prompts = prompts
        self.at = [p[1] for p in prompts]
        self.ordered = all(map(le, self.at[:-1], self.at[1:]))

    def of(
        self, at: int, until: int
    ) -> tuple[tuple[int, int, int] | None, tuple[int, int, int] | None]:
        """The last prompt of a message before ``at``, and the first of a message from ``at``
        up to ``until`` (excluded)."""
        prompts = self.prompts
        if not self.ordered:  # (never from a replay's own order; kept exact for any other)
            before = [p for p in prompts if p[1] < at]
            after = next((p for p in prompts if at <= p[1] < until), None)
            return (before[-1] if before else None), after
        i = bisect_left(self.at, at)
        last = prompts[i - 1] if i > 0 else None
        return last, (prompts[i] if i < len(prompts) and prompts[i][1] < until else None)


def _recorded_prompts(session: Session, result: ReplayResult) -> list[tuple[int, int, int]]:
    """``(call, message, prompt)`` of every call that records usage, in order."""
    at_calls = result.point_column("message_index")
    return [
        (call, at_calls[call], prompt)
        for call, prompt in enumerate(_recorded_prompt_column(session, result))
        if prompt is not None and prompt > 0
    ]


def _what_stays(
    session: Session,
    result: ReplayResult,
    event: CompactionEvent,
    replayed: ReplayEvent | None,
    tokens: Sequence[int],
) -> int | None:
    """System + tools + summary + kept tail right after ``event`` (estimated): the replay's own
    reading of it where the replay took it, else the summary message the file holds."""
    overhead = result.overhead_tokens
    if replayed is not None and replayed.summary_tokens is not None:
        tail = sum(tokens[i] for i in replayed.tail_indices if 0 <= i < len(tokens))
        return overhead + replayed.summary_tokens + tail
    at = event.message_index
    if 0 <= at < len(session.messages) and session.messages[at].summary and at < len(tokens):
        return overhead + tokens[at]
    return None


# -- threshold ---------------------------------------------------------------------------------


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
    return build_filled(
        ThresholdFigure,
        {"tokens": tokens, "source": source, "window": window, "usable": usable, "label": label},
    )


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
