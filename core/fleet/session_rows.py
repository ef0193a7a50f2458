"""The rows of one replayed session: its figures, its calls and its recorded compactions.

:class:`FleetRow` sums a session up in one row (``ctxscope fleet``, the picker, the export's
``sessions`` table); :class:`CallRow` is one model call (the gauge's figures and the check log,
the export's ``calls``); :class:`CompactionRow` one recorded compaction (trigger and evidence,
tokens, fidelity; the export's ``compactions`` and the HTML report). :func:`session_figures`,
:func:`call_rows` and :func:`compaction_rows` make them from a loaded session and its replay
under the agent's preset: they read a replay result and never replay (:mod:`core.fleet` runs
the replays).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime

from core.insights.cost import CompactionCost, SessionCost
from core.insights.diagnosis import MARGIN
from core.insights.named_figures import (
    CompactionFigures,
    compaction_figures,
    effective_compactions,
    peak,
)
from core.model.session import CompactionEvent, Session
from core.replay.policies import NATIVE_PRESET
from core.replay.recorded import turn_count
from core.replay.results import (
    Documented,
    FidelityRow,
    InferredThreshold,
    ReplayResult,
)

ROW_VERSION = 4
"""Version of :class:`FleetRow`; part of the cache key, bumped when a figure changes meaning."""
TRIGGERS = ("auto", "manual", "overflow", "hook", "unknown")
"""The recorded compactions' triggers, one ``compactions_<trigger>`` column each."""
KNOWN_AGENTS = frozenset(fmt.value for fmt in NATIVE_PRESET)
"""The formats that record an agent (not our own): only their compactions can be reproduced."""
OUTCOMES = ("same", "earlier", "later", "missed", "manual", "untestable")
"""The fidelity outcomes, one ``fidelity_<outcome>`` column each."""


class FleetRow(Documented):
    """One session's figures (a row of ``ctxscope fleet`` and of the export's sessions table)."""

    path: str
    """The session: a file, a folder, or ``<opencode.db>#<session id>``."""
    error: str | None = None
    """Why the session could not be loaded or analysed (then most figures are empty)."""
    agent: str | None = None
    """The agent that recorded it (the format: ``claude-code``, ``codex``, ``pi``, ``opencode``,
    ``gemini-cli``, ``qwen-code``, ``copilot-cli``, ``ctxscope``)."""
    version: str | None = None
    """The agent's version, when recorded."""
    provider: str | None = None
    """Who served the model, when recorded or evident."""
    model: str | None = None
    """The session's main model."""
    session_id: str | None = None
    """The session's own id."""
    parent_session_id: str | None = None
    """The session that started this one (a sub-agent's parent); None for a top-level session."""
    project: str | None = None
    """The working directory the agent ran in."""
    started_at: datetime | None = None
    """When the session started (UTC), from its records."""
    last_message_at: datetime | None = None
    """When its last timed message was written (UTC): the session's own time, not the file's."""
    size_bytes: int | None = None
    """Bytes on disk (summed over an opencode storage folder; the whole database for a session
    of ``opencode.db``)."""
    messages: int = 0
    """Messages."""
    calls: int = 0
    """Model calls."""
    turns: int = 0
    """Real user turns."""
    window_tokens: int | None = None
    """The context window (the largest one, when it changed during the session)."""
    window_source: str = "unknown"
    """Where the window comes from: ``recorded``, ``table``, ``inferred``, ``user`` or
    ``unknown``."""
    window_evidence: str | None = None
    """Why the window is what it is, when more than a table row says so."""
    threshold: int | None = None
    """The agent's compaction threshold for that window (its rule, or what the recording shows
    where the rule is contradicted)."""
    peak_tokens: int | None = None
    """The peak prompt: the largest prompt before the reply, for every agent
    (:data:`core.insights.named_figures.PEAK`; recorded where the call has usage, else
    estimated)."""
    peak_provenance: str | None = None
    """``recorded``, ``estimated`` or ``counted``."""
    peak_call_index: int | None = None
    """That call (0-based)."""
    peak_share: float | None = None
    """``peak_tokens`` over the window at that call (1.0 = full; above 1 = over it)."""
    compactions: int = 0
    """Recorded compactions that took effect (not rewound past)."""
    compactions_auto: int = 0
    """Of those, by the agent's threshold."""
    compactions_manual: int = 0
    """The user's ``/compact``."""
    compactions_overflow: int = 0
    """After the provider refused a request as too long."""
    compactions_hook: int = 0
    """Written by a hook or an extension."""
    compactions_unknown: int = 0
    """The recording does not say why."""
    overflows_recorded: int = 0
    """Recorded calls that overflowed (stopped for length, refused as too long, or over the
    window)."""
    first_overflow_call: int | None = None
    """The first of them."""
    fidelity_same: int = 0
    """Recorded compactions the agent's preset reproduced at the same call."""
    fidelity_earlier: int = 0
    """… at an earlier call."""
    fidelity_later: int = 0
    """… at a later call."""
    fidelity_missed: int = 0
    """… not at all."""
    fidelity_manual: int = 0
    """The user's or a hook's: applied where they happened."""
    fidelity_untestable: int = 0
    """The file does not hold what came before them."""
    automatic: int = 0
    """Automatic compactions (the agent's own decisions) the replay could test."""
    reproduced: int = 0
    """Of those, reproduced at the same call."""
    threshold_low: int | None = None
    """The largest figure a check measured without the agent compacting: its threshold is
    above it."""
    threshold_high: int | None = None
    """The smallest figure that made the agent compact by itself: its threshold is at or below
    it."""
    threshold_conflict: bool = False
    """No single threshold explains the session's compactions."""
    cost_usd: float | None = None
    """What the session cost, in US dollars: every call with recorded usage priced at the list
    price of its model on the day of the call (:mod:`core.insights.cost`); None (shown as ``unknown``)
    when no call could be priced."""
    cost_unpriced_calls: int = 0
    """Calls with usage whose model the price table does not know: ``cost_usd`` is a lower
    bound when this is above 0."""
    compactions_usd: float | None = None
    """What the recorded compactions cost: their summary calls (when recorded) and the prompt
    cache each one made the next call write again."""
    diagnostics: int = 0
    """Lines the loader skipped or repaired."""
    analysis_seconds: float = 0.0
    """How long loading and replaying it took."""

    @property
    def overflowed(self) -> bool:
        """A recorded call overflowed."""
        return self.overflows_recorded > 0

    def near_overflow(self, margin: float = MARGIN) -> bool:
        """A recorded call overflowed, or the peak came within ``margin`` of the window: the
        sessions the overflow diagnosis has a call to explain (the picker's near-overflow view)."""
        return self.overflowed or (self.peak_share is not None and self.peak_share >= 1 - margin)


class CallRow(Documented):
    """One model call: the gauge's figures and the compaction check before it."""

    path: str
    """The session (joins ``sessions.path``)."""
    call_index: int
    """Position among the session's calls (0-based)."""
    message_index: int
    """The call's assistant message."""
    turn_index: int
    """The turn it belongs to (-1 before the first user message)."""
    timestamp: datetime | None
    """When the call's message was written (UTC)."""
    recorded_tokens: int | None
    """The context the recording's usage gives (None: no usable usage)."""
    recorded_kind: str | None
    """Which side of the reply that figure is on: ``before-reply`` or ``after-reply``."""
    baseline_tokens: int
    """The recording's context at the call: the recorded figure, else our projection of it."""
    baseline_provenance: str
    """``recorded``, ``estimated`` or ``counted``."""
    simulated_tokens: int
    """The context the agent's preset would have sent (the replay's figure)."""
    simulated_provenance: str
    """``recorded`` while the replay matches the recording, else ``estimated``/``counted``."""
    window_tokens: int | None
    """The window at this call."""
    share: float | None
    """``baseline_tokens`` over the window."""
    threshold: int | None
    """The compaction threshold at this call."""
    threshold_source: str | None
    """``rule`` (the agent's documented rule) or ``inferred`` (what the recording shows where
    it contradicts the rule)."""
    checked: bool
    """The agent's preset checked its threshold right before this call."""
    check_tokens: int | None
    """What that check measured."""
    check_basis: str | None
    """How: ``recorded`` (the last usage as it is), ``projected`` (plus estimates of what came
    since) or ``estimated`` (no usage to start from)."""
    check_fired: bool
    """The check fired a compaction."""
    overflow_recorded: bool
    """The recorded call overflowed."""
    overflow_reason: str | None
    """``stop-length``, ``error`` or ``over-window``."""
    overflow_simulated: bool
    """The replay's context is over the window."""


class CompactionRow(Documented):
    """One recorded compaction: why it ran, and whether the agent's preset compacts there."""

    path: str
    """The session (joins ``sessions.path``)."""
    recorded_index: int
    """Its position among the session's recorded compactions."""
    message_index: int
    """Its "at message" (:data:`core.insights.named_figures.COMPACTION_AT`): the first message
    after it, 0-based."""
    call_index: int | None
    """The call it came before (or the refused call it recovered)."""
    timestamp: datetime | None
    """When it was written (UTC), from the first message after it."""
    trigger: str
    """``auto``, ``manual``, ``overflow``, ``hook`` or ``unknown``: the recording's word, or,
    where it says nothing, the agent's threshold (over it automatic, under it the user's)."""
    recorded_trigger: str
    """What the recording alone says (``unknown`` where it says nothing)."""
    trigger_evidence: str | None
    """What the trigger rests on."""
    phase: str | None
    """``mid-turn`` or ``pre-turn``, where the agent's loop tells."""
    tokens_before: int | None
    """The agent's count (:data:`core.insights.named_figures.AGENT_COUNT`): the context the
    agent itself measured when it compacted, as its file records it."""
    tokens_after: int | None
    """The tokens after (:data:`core.insights.named_figures.TOKENS_AFTER`), for every agent."""
    tokens_after_source: str | None = None
    """Where ``tokens_after`` comes from: ``next prompt``, ``recorded``, ``estimated`` or
    ``what stays``."""
    last_prompt_tokens: int | None = None
    """The last prompt (:data:`core.insights.named_figures.LAST_PROMPT`): the recorded prompt of
    the last call before it."""
    rewound: bool
    """The user rewound past it: it never took effect."""
    outcome: str | None
    """How the agent's preset matched it: ``same``, ``earlier``, ``later``, ``missed``,
    ``manual`` or ``untestable``."""
    automatic: bool
    """The agent's own decision (what a replay of the agent must reproduce)."""
    replay_call_index: int | None
    """The call the replay's matching compaction came before."""
    call_delta: int | None
    """Replay call minus recorded call."""
    check_tokens: int | None
    """The check (:data:`core.insights.named_figures.CHECK_FIGURE`): what the preset's check
    measured before the recorded call."""
    threshold: int | None
    """The threshold it was compared with."""
    threshold_source: str | None
    """``rule`` or ``inferred``."""
    cost_usd: float | None = None
    """What it cost: its summary call, when the recording holds it, and the prompt cache the
    next call had to write again (None: unknown)."""


def session_figures(
    path: str,
    session: Session,
    result: ReplayResult,
    inferred: InferredThreshold,
    cost: SessionCost | None = None,
) -> FleetRow:
    """The :class:`FleetRow` of a loaded and replayed session (``cost``: its
    :func:`core.insights.cost.session_cost`, None when it could not be computed). It reads the
    replay's columns, never its points: a point object per call is more than a row needs."""
    windows = result.point_column("window")
    overflowed = result.point_column("overflow_recorded")
    row = FleetRow(
        path=path,
        agent=session.format.value,
        version=session.agent_version,
        provider=session.provider,
        model=session.model,
        session_id=session.id,
        parent_session_id=session.parent_session_id,
        project=session.project,
        started_at=_utc(session.started_at) or _first_time(session),
        last_message_at=_last_time(session),
        messages=len(session.messages),
        calls=result.call_count,
        turns=turn_count(session),
        window_tokens=max((window for window in windows if window), default=result.window),
        window_source=result.window_source,
        window_evidence=result.window_evidence,
        threshold=result.threshold,
        overflows_recorded=result.summary.overflows_recorded,
        first_overflow_call=next((call for call, over in enumerate(overflowed) if over), None),
        threshold_low=inferred.low,
        threshold_high=inferred.high,
        threshold_conflict=inferred.conflict,
        diagnostics=len(session.diagnostics),
    )
    _peak(row, session, result)
    _compactions(row, session, result.fidelity)
    _fidelity(row, result.fidelity)
    if cost is not None:
        row.cost_usd = _cents(cost.total_usd)
        row.cost_unpriced_calls = cost.unpriced_calls
        row.compactions_usd = _cents(cost.compactions_usd) if cost.total_usd is not None else None
    return row


def _compaction_cost(cost: CompactionCost | None) -> float | None:
    if cost is None or (cost.summary_call_usd is None and cost.cache_rebuild_usd is None):
        return None
    return _cents((cost.summary_call_usd or 0.0) + (cost.cache_rebuild_usd or 0.0))


def _cents(usd: float | None) -> float | None:
    """Dollars to a hundredth of a cent (sums of many small prices carry float noise)."""
    return None if usd is None else round(usd, 4)


def _peak(row: FleetRow, session: Session, result: ReplayResult) -> None:
    top = peak(session, result)
    if top is None:
        return
    row.peak_tokens = top.tokens
    row.peak_provenance = top.provenance
    row.peak_call_index = top.call_index
    share = top.share
    row.peak_share = round(share, 4) if share is not None else None


def _compactions(row: FleetRow, session: Session, fidelity: Sequence[FidelityRow]) -> None:
    matched = fidelity_of(fidelity)
    effective = {id(event) for event in effective_compactions(session)}
    counts = Counter(
        _trigger(event, matched.get(index))
        for index, event in enumerate(session.compactions)
        if id(event) in effective
    )
    row.compactions = sum(counts.values())
    for trigger in TRIGGERS:
        setattr(row, f"compactions_{trigger}", counts.get(trigger, 0))


def fidelity_of(fidelity: Sequence[FidelityRow]) -> dict[int, FidelityRow]:
    """The fidelity rows by the index of the recorded compaction they match."""
    return {f.recorded_index: f for f in fidelity}


def _trigger(event: CompactionEvent, matched: FidelityRow | None) -> str:
    """Why a recorded compaction ran: the replay's reading (which decides by the agent's
    threshold what the recording does not say), else the recording's."""
    trigger = matched.trigger if matched is not None else event.trigger
    return trigger if trigger in TRIGGERS else "unknown"


def _fidelity(row: FleetRow, fidelity: Sequence[FidelityRow]) -> None:
    outcomes: Counter[str] = Counter(f.outcome for f in fidelity)
    for outcome in OUTCOMES:
        setattr(row, f"fidelity_{outcome}", outcomes.get(outcome, 0))
    if row.agent not in KNOWN_AGENTS:
        return  # our own format records no agent whose decisions could be reproduced
    testable = [f for f in fidelity if f.automatic and f.outcome != "untestable"]
    row.automatic = len(testable)
    row.reproduced = sum(1 for f in testable if f.outcome == "same")


def call_rows(path: str, session: Session, result: ReplayResult) -> list[CallRow]:
    """One :class:`CallRow` per model call of the replay."""
    rows = []
    for p in result.points:
        message = session.messages[p.message_index]
        rows.append(
            CallRow(
                path=path,
                call_index=p.call_index,
                message_index=p.message_index,
                turn_index=p.turn_index,
                timestamp=_utc(message.timestamp),
                recorded_tokens=p.recorded_tokens,
                recorded_kind=p.recorded_kind,
                baseline_tokens=p.baseline_tokens,
                baseline_provenance=p.baseline_provenance.value,
                simulated_tokens=p.simulated_tokens,
                simulated_provenance=p.simulated_provenance.value,
                window_tokens=p.window,
                share=round(p.baseline_tokens / p.window, 4) if p.window else None,
                threshold=p.threshold,
                threshold_source=p.threshold_source,
                checked=p.checked,
                check_tokens=p.check_tokens,
                check_basis=p.check_basis,
                check_fired=p.check_fired,
                overflow_recorded=p.overflow_recorded,
                overflow_reason=p.overflow_recorded_reason,
                overflow_simulated=p.overflow_simulated,
            )
        )
    return rows


def compaction_rows(
    path: str, session: Session, result: ReplayResult, cost: SessionCost | None = None
) -> list[CompactionRow]:
    """One :class:`CompactionRow` per recorded compaction, with its fidelity outcome (and its
    cost, from ``cost``)."""
    by_index = fidelity_of(result.fidelity)
    costs = {c.recorded_index: c for c in cost.compactions} if cost is not None else {}
    figures = compaction_figures(session, result)
    rows = []
    for index, event in enumerate(session.compactions):
        matched = by_index.get(index)
        named: CompactionFigures = figures[index]
        at = named.at_message
        message = session.messages[at] if 0 <= at < len(session.messages) else None
        rows.append(
            CompactionRow(
                path=path,
                recorded_index=index,
                message_index=at,
                call_index=matched.recorded_call_index if matched else None,
                timestamp=_utc(message.timestamp) if message else None,
                trigger=_trigger(event, matched),
                recorded_trigger=event.trigger,
                trigger_evidence=(matched.trigger_evidence if matched else None)
                or event.trigger_evidence,
                phase=event.phase,
                tokens_before=named.agent_count,
                tokens_after=named.tokens_after,
                tokens_after_source=named.tokens_after_source,
                last_prompt_tokens=named.last_prompt,
                rewound=event.rewound,
                outcome=matched.outcome if matched else None,
                automatic=matched.automatic if matched else False,
                replay_call_index=matched.replay_call_index if matched else None,
                call_delta=matched.call_delta if matched else None,
                check_tokens=named.check_tokens,
                threshold=matched.threshold if matched else None,
                threshold_source=matched.threshold_source if matched else None,
                cost_usd=_compaction_cost(costs.get(index)),
            )
        )
    return rows


# -- times and text -------------------------------------------------------------------------


def _utc(text: str | None) -> datetime | None:
    """A recorded ISO-8601 time in UTC (a time without a zone is taken as UTC); None when it
    does not parse."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _first_time(session: Session) -> datetime | None:
    return next((t for m in session.messages if (t := _utc(m.timestamp))), None)


def _last_time(session: Session) -> datetime | None:
    return next((t for m in reversed(session.messages) if (t := _utc(m.timestamp))), None)
