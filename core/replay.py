"""Replay a recorded session under a policy, holding the agent's actions fixed.

Entry points: :func:`replay` (one run), :class:`Replayer` (incremental re-simulation for the TUI,
which replays on every keystroke of a limit change) and :func:`compare` (several policies side by
side). The result models are the public API of docs/REPLAY_API.md.

How a replay walks a session
----------------------------
Messages are walked in order. Every message the agent produced or received is kept (the agent's
actions are fixed); what changes is what the *policy* would have put in the context window:

1. **Truncation.** Each tool output is truncated as the policy would (``spill=False``: nothing is
   written while simulating). Recorded outputs were already truncated by the recording agent, so a
   policy can only shorten them further (or add its hint to one just over a limit).
2. **Checks before each model call.** Before call *k* the policy looks at the context of the
   previous call *after its reply* (prompt + output: what opencode, Codex, pi and Claude Code all
   compare against their threshold), plus — when ``project_after_tool_results`` — the estimated
   tokens of everything added since (tool results the model has not seen yet: phase 2).
   ``check_before_each_call`` checks before every call; otherwise only before the first call of a
   turn (the end of the previous turn), with a projection that crossed mid-turn remembered until
   then. A usage figure older than a compaction is not used (pi's rule): after a compaction only
   the projection can fire until the next call has happened. When the check fires, pruning and
   compaction run right there (before call *k*, so the event's ``call_index`` is *k* and its
   ``trigger_call_index`` the call whose figure crossed the threshold). An attempt that changes
   nothing — nothing to compact, or no summary could be written — leaves the context as it was,
   so the next check fires again: each such attempt is counted (``noop_compactions``) and noted.
   One that provably ends as the last did is not made again: the same context, or a summary
   request that overflowed the summariser at every head size allowed, when the messages added
   since can only lengthen the head (``Replayer._futile``); the context rebuilt (a compaction,
   a pruning, a recorded compaction taken) is a new start.
3. **The call.** The simulated context of call *k* (see below) is compared with the window. Over
   it, with ``overflow_recovery``, the policy compacts (trigger ``overflow``) and retries once; if
   the retry still does not fit, an ``overflow`` event records it.
4. **Recorded compactions.** Each compaction the recording holds rebuilds the *recorded* context
   (its summary and replacement messages, plus the messages it kept from ``first_kept_id``).
   Compactions the recording agent's own threshold cannot explain (below it, or marked ``manual``)
   were the user's ``/compact``: they are actions too, so every policy applies them where they
   happened (the recording agent's own policy by taking the recorded result, trigger ``manual``,
   kind ``recorded-compaction``; another policy by running its own compaction there). Automatic
   recorded compactions are the agent's decisions, which the policy replaces with its own.

The context at a model call: recorded + delta
---------------------------------------------
Two contexts are tracked side by side, in tokens of the policy's estimator:

* the **recorded** context: what the recording agent actually had (all messages, its own
  compactions applied); its size at call *k* is ``E_rec(k)``;
* the **simulated** context: what the policy would have had (outputs truncated, its own pruning
  and compactions applied); ``E_sim(k)``.

The figure the policy sees at call *k* is ``baseline(k) + r x (E_sim(k) - E_rec(k))``, where
``baseline(k)`` is the recording's own context at that call: the recorded usage (in the provider's
convention, ``CallPoint.recorded_kind``), or, for a call without usable usage (none recorded, or an
all-zero figure of an aborted call), the last recorded figure plus the estimated growth of the
recorded context since, or ``overhead + E_rec(k)`` when there is no recorded figure to start from
(or a recorded compaction came in between). ``overhead`` is the system prompt and tool schemas
the messages do not show: the first recorded context minus the estimated tokens of the messages
before it, floored at 0. ``r`` converts estimated tokens into the provider's: the median over
recorded calls of ``(recorded - overhead) / E_rec`` (1.0 without usage). It matters: on the pi
sample a chars/4 estimate undercounts Claude's tokenizer by about 30 %, so an unscaled delta
would leave a compacted context 30 % of the removed tokens too big.

Why this design: as long as the policy has changed nothing, both contexts hold the same messages,
the delta is exactly 0 and the policy sees the recorded figure itself — so replaying a session
under the recording agent's own policy fires where the agent fired (the fidelity report checks
this). After the first change, only the *difference* is estimated; the bulk of the figure stays
the provider's exact count, so estimation error is proportional to what changed, not to the whole
context. Without any usage every figure is ``overhead + E_sim`` and is labelled estimated. A
recorded overflow (stop reason ``length``, an overflow error, recorded prompt > window) stays an
overflow in the replay as long as the policy has removed nothing by then (delta >= 0).

When the recording agent's policy fires at the same call as one of its recorded automatic
compactions, the replay takes the recorded result (summary and kept messages) instead of writing
its own, so the rest of the replay keeps tracking the recording; the event says so.

Incremental re-simulation (:class:`Replayer`)
---------------------------------------------
A :class:`Replayer` keeps, across runs on one session:

* the message texts, and per estimator the token count of every message (one batched count; the
  shared :class:`~core.tokens.TokenCounter` caches by content, so nothing is ever counted twice);
* the recorded side (baseline figures, recorded contexts after each recorded compaction), per
  estimator — it does not depend on the policy;
* per truncation setting, the truncated content of every output over the limits (only outputs
  over a limit are truncated at all; their lengths are precomputed);
* every compaction result, by its exact input (so a re-run that compacts the same messages reuses
  the summary — with a live LLM too), and the message states of earlier results;
* what makes a compaction that is *not* a repeat cheap: the serialised head entry of each
  message (:class:`core.compaction.EntryCache`, by message identity or content, bounded) and,
  in the mock summariser it holds per LLM setting, what each transcript entry says (by its
  text, bounded). A changed policy compacts heads that overlap the previous run's, so most of
  a head is read from these. Compactions go through :func:`core.compaction.compact_outline`:
  the same pipeline as :func:`~core.compaction.compact`, without the per-message records only
  a person inspecting one compaction reads (decision objects, pruned copies of head messages,
  the request text);
* the trace of the last runs: the state at every model call (a checkpoint), every threshold check
  and overflow check with the figures it measured, and the events so far.

A new policy is compared field by field with a traced one, and the run resumes from the last
checkpoint the change cannot affect: a threshold change (rule, reserve, ratio, limit, window)
from the first check whose decision or trigger differs under the new numbers, or the first call
whose overflow verdict differs; a truncation change from the first tool output whose truncated
content differs; a change to how compaction prunes, splits or summarises (or to the window, or
to a reserve that changes the tail budget) from the first compaction attempted; turning overflow
recovery on or off from the first overflow; the estimator, the check schedule, turn-end pruning
or whether the policy is the recording agent's from the start. Call points, events and notes
before the resume point are reused as they are (points are rebuilt only when the window or the
threshold changed). A run pauses the cyclic garbage collector (reference counting still frees
everything): collections walking the large, long-lived session cost a fifth of a run. The
young objects a run made are collected when it ends (a few milliseconds); every tenth or so
run, that collection reaches the older generations too and walks the whole heap.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from core.llm.factory import make_summarizer
from core.llm.protocol import Summarizer
from core.models import Message, Provenance, Role, Session, SourceFormat, UsageConvention
from core.overflow import (
    OverflowDiagnosis,
    crosses,
    overflow_reason,
    recorded_kind,
    threshold,
    usable_usage,
)
from core.policy import PRESETS, Policy, get_preset
from core.tokens import TokenCounter, get_counter, message_text

SCHEMA_VERSION = 1
"""Version of the JSON written by ``--json`` (bumped on any incompatible change)."""

EventKind = Literal["truncate", "prune", "compact", "continue", "overflow", "recorded-compaction"]
Trigger = Literal["threshold", "projection", "overflow", "manual", "recorded"]
RecordedKind = Literal["before-reply", "after-reply"]
Outcome = Literal["same", "earlier", "later", "missed", "manual"]

ProgressFn = Callable[[int, int], None]
"""Called now and then with ``(messages_done, messages_total)``."""
SummarizerFactory = Callable[[Policy], Summarizer]

NATIVE_PRESET: dict[SourceFormat, str] = {
    SourceFormat.PI: "pi",
    SourceFormat.CODEX: "codex",
    SourceFormat.CLAUDE_CODE: "claude-code",
    SourceFormat.OPENCODE: "opencode",
}
"""The preset that models the agent which records each format."""

_PROGRESS_EVERY = 512
_MAX_CACHED_COMPACTIONS = 512
_STATES_SLACK = 1024
"""Message states kept beyond four per message (then only the last run's are kept)."""
_MIN_RATIO = 0.25
_MAX_RATIO = 4.0


class ReplayCancelled(Exception):
    """The run was cancelled through its ``cancel`` event."""


# --- result models ------------------------------------------------------------------------------


class _Documented(BaseModel):
    """Result models: each field's docstring is its description in the JSON schema."""

    model_config = ConfigDict(use_attribute_docstrings=True)


class ReplayEvent(_Documented):
    """Something the policy did during the replay."""

    kind: EventKind
    """``truncate``, ``prune``, ``compact``, ``continue``, ``overflow`` or ``recorded-compaction``."""
    message_index: int
    """Message it applies to (compact: the first message after the cut, i.e. the first tail
    message, or the message it fired before when no tail is kept)."""
    call_index: int | None
    """Index into ``ReplayResult.points`` of the call it fired before (truncate: the first call
    that sends the output); None when no call follows."""
    trigger: Trigger | None
    """``threshold``, ``projection``, ``overflow``, ``manual`` or ``recorded``; None for truncations and overflows."""
    reason: str
    """One human sentence: why it fired / what it did."""
    tokens_before: int | None
    """Context (compact, prune, overflow) or message (truncate) tokens before."""
    tokens_after: int | None
    """Context (or message) tokens after."""
    head_indices: list[int] = Field(default_factory=list)
    """compact: messages summarised (session message indices)."""
    tail_indices: list[int] = Field(default_factory=list)
    """compact: messages kept verbatim."""
    pruned_indices: list[int] = Field(default_factory=list)
    """Messages whose tool output pruning replaced."""
    summary: str | None = None
    """compact: the summary text."""
    dropped_head_messages: int = 0
    """compact: head messages left out of an overflowing summary request."""
    trigger_call_index: int | None = None
    """The call whose context made the check fire (threshold/projection: the previous call)."""
    at_message_index: int | None = None
    """The session message it happened just before."""
    summary_tokens: int | None = None
    """compact: tokens of the summary message (plus the continuation message, if any)."""
    recorded_index: int | None = None
    """The recorded compaction (index into ``Session.compactions``) this event applied or took."""


class CallPoint(_Documented):
    """One model call (assistant message), in order."""

    call_index: int
    """Position among the model calls (0-based)."""
    message_index: int
    """The assistant message of this call."""
    turn_index: int
    """0-based turn the call belongs to (-1 before the first user message)."""
    recorded_tokens: int | None
    """``Usage.context_tokens`` of the recorded call (None: no usable usage)."""
    recorded_kind: RecordedKind | None
    """Which side of the reply the recorded and simulated figures are measured on."""
    simulated_tokens: int
    """Context the policy would have sent at this call (same convention as the recorded one)."""
    simulated_provenance: Provenance
    """``recorded`` while the policy has changed nothing, else ``estimated``/``counted``."""
    window: int | None
    """Window of the run."""
    threshold: int | None
    """Threshold of the run."""
    overflow_recorded: bool
    """The recorded call overflowed: recorded context > window, stop reason length, overflow error."""
    overflow_simulated: bool
    """The simulated prompt exceeds the window (after the one retry overflow recovery allows)."""
    event_ids: list[int]
    """Indices into ``ReplayResult.events`` attached to this call."""
    baseline_tokens: int
    """The recording's context at this call: the recorded figure, else our projection of it."""
    baseline_provenance: Provenance
    """``recorded``, or ``estimated``/``counted`` for a projected baseline."""
    baseline_after_tokens: int = 0
    """The recording's context after this call's reply (what the next check starts from)."""
    overflow_recorded_reason: str | None = None
    """``stop-length``, ``error`` or ``over-window`` when ``overflow_recorded``."""
    checked: bool = False
    """The policy checked its threshold right before this call."""
    check_tokens: int | None = None
    """What that check measured (simulated)."""
    baseline_check_tokens: int | None = None
    """The same check measured on the recording's figures (for the overflow diagnosis)."""
    check_fired: bool = False
    """That check fired a compaction."""


class MessageState(_Documented):
    """One per session message, same order."""

    message_index: int
    """Position in the session."""
    tokens: int
    """Tokens of the message as recorded (counted/estimated)."""
    tokens_after_truncation: int
    """What the policy would have sent."""
    provenance: Provenance
    """``counted`` or ``estimated`` (the estimator's kind)."""
    truncated: bool
    """The policy truncates this tool output."""
    truncation_note: str | None
    """What truncation cut and where the full output would be saved."""
    pruned: bool
    """Pruning replaced this output at some point of the replay."""
    prune_reason: str | None
    """The pruner's reason for this message (also for protected ones), from the last pruning."""
    protected: bool
    """Protected tool, inside the skip boundary or inside the protect budget."""
    summarised_by: int | None
    """Event id of the compaction that put it in a head."""
    kept_by: int | None
    """Event id of the last compaction that kept it in its tail."""
    in_context_at_end: bool
    """Still in the simulated context after the last message."""


class FidelityRow(_Documented):
    """How the replay matched one recorded compaction."""

    recorded_index: int
    """Index into ``Session.compactions``."""
    message_index: int
    """Where the recorded compaction happened."""
    trigger: str
    """The recorded trigger, or ``manual`` when the recording agent's threshold cannot explain it."""
    tokens_before: int | None
    """Context before it, as recorded."""
    outcome: Outcome
    """``same``, ``earlier``, ``later``, ``missed`` (no replay compaction near it) or ``manual``."""
    replay_call_index: int | None
    """The call the matching replay compaction fired before."""
    call_delta: int | None
    """Replay call - recorded call (negative: the replay compacted earlier)."""
    recorded_call_index: int | None = None
    """The call the recorded compaction happened before (or the failed call it recovered)."""
    note: str = ""
    """What matched it (the replay trigger), or why none did."""


class ReplaySummary(_Documented):
    """The figures of a replay in one row."""

    calls: int
    """Model calls."""
    peak_recorded: int | None
    """Largest recorded context (None: no usage)."""
    peak_simulated: int
    """Largest simulated context."""
    peak_call_index: int | None
    """The call of that peak."""
    compactions: int
    """Compactions the policy made (its own and recorded ones it applied)."""
    overflows_recorded: int
    """Recorded calls that overflowed."""
    overflows_simulated: int
    """Simulated calls that overflow."""
    tokens_truncated: int
    """Tokens truncation removed from tool outputs (net of the hints it adds)."""
    tokens_pruned: int
    """Tokens of the tool outputs pruning replaced."""
    tokens_summarised: int
    """Tokens of the messages compactions replaced by a summary."""
    summary_tokens: int
    """Tokens of the summaries written (and continuation messages)."""
    tail_tokens: int
    """Tokens kept in tails, summed over compactions."""
    overflows_avoided: int = 0
    """Recorded overflows at calls the replay sends without overflowing."""
    overflows_caused: int = 0
    """Simulated overflows at calls that did not overflow in the recording."""
    manual_compactions: int = 0
    """Recorded manual compactions the replay applied."""
    final_tokens: int | None = None
    """Simulated context at the last call."""
    noop_compactions: int = 0
    """Times the policy set out to compact (its threshold, an overflow, a manual compaction) and
    the context stayed as it was: nothing to compact, or no summary could be written (the notes
    say why)."""


class ReplayResult(_Documented):
    """The whole replay of one session under one policy."""

    schema_version: int = SCHEMA_VERSION
    """Version of this JSON layout (1)."""
    session_id: str
    """Id of the replayed session."""
    policy: Policy
    """The policy replayed, every field."""
    window: int | None
    """Context window used (the policy's override, else the session's)."""
    threshold: int | None
    """Compaction threshold of the policy for that window (None: window unknown)."""
    points: list[CallPoint]
    """One per model call, in order."""
    events: list[ReplayEvent]
    """What the policy did, in order; ``event_ids`` and ``*_by`` fields index this list."""
    messages: list[MessageState]
    """One per session message, same order."""
    fidelity: list[FidelityRow]
    """One per recorded compaction."""
    summary: ReplaySummary
    """The figures of the run in one row."""
    notes: list[str]
    """e.g. "no recorded usage: every figure is estimated"."""
    recording_policy: bool = False
    """The policy is the one of the agent that recorded the session."""
    overhead_tokens: int = 0
    """System prompt + tool schemas, calibrated from the first recorded call."""
    estimator: str = ""
    """Estimator used for message tokens."""
    window_source: str = "unknown"
    """Where the window came from: ``recorded``, ``table``, ``user``, ``policy`` or ``unknown``."""

    _resumed_from_call: int | None = PrivateAttr(default=None)

    @property
    def resumed_from_call(self) -> int | None:
        """The call the incremental run resumed from (None: a full run)."""
        return self._resumed_from_call


class CompareRow(_Documented):
    """One policy's figures in a comparison."""

    policy: str
    """Policy name."""
    description: str
    """What the policy models."""
    window: int | None
    """Window it used."""
    threshold: int | None
    """Its threshold."""
    summary: ReplaySummary
    """Its replay figures."""
    fidelity: dict[str, int]
    """Recorded compactions by outcome (``same``, ``earlier``, ``later``, ``missed``, ``manual``)."""


class CompareResult(_Documented):
    """Several policies over one session."""

    schema_version: int = SCHEMA_VERSION
    """Version of this JSON layout (1)."""
    session_id: str
    """Id of the session."""
    window: int | None
    """Window of the first policy (policies may override it)."""
    rows: list[CompareRow]
    """One per policy, in the order given."""
    notes: list[str]
    """Notes all policies share once; the others prefixed with their policy."""


class SessionInfo(_Documented):
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


class AnalysisReport(_Documented):
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


# --- fast model building ------------------------------------------------------------------------

_M = TypeVar("_M", bound=BaseModel)
_new = object.__new__
_set = object.__setattr__
# The slots every pydantic model has, set through their descriptors: what object.__setattr__
# does, without looking each name up along the model's classes (a run builds thousands).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


_ALL_FIELDS: dict[type[BaseModel], set[str]] = {}
"""Each result model's field names: the fields set of every model :func:`_build` makes."""


def _build(cls: type[_M], fields: dict[str, Any]) -> _M:
    """A model from complete, already-typed ``fields`` without validation (``model_construct``
    minus its default handling; every field must be present).

    Every field being set, the models of a class share one fields set: pydantic only ever adds
    a field's name to it (on assignment; a copy gets a set of its own), and each is there
    already. A run builds thousands of models, and each set more is one more object for the
    garbage collector to walk.
    """
    names = _ALL_FIELDS.get(cls)
    if names is None:
        names = _ALL_FIELDS[cls] = set(cls.model_fields)
    obj = _new(cls)
    _set_dict(obj, fields)
    _set_fields_set(obj, names)
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


def _build_result(fields: dict[str, Any]) -> ReplayResult:
    result = _build(ReplayResult, fields)
    _set(result, "__pydantic_private__", {"_resumed_from_call": None})
    return result


# --- policies -----------------------------------------------------------------------------------


def native_policy(session: Session) -> Policy:
    """The preset of the agent that recorded ``session`` (``seed`` for our own format)."""
    return get_preset(NATIVE_PRESET.get(session.format, "seed"))


def is_recording_policy(session: Session, policy: Policy) -> bool:
    """Whether ``policy`` is the recording agent's own preset (by name)."""
    name = NATIVE_PRESET.get(session.format)
    return name is not None and policy.name == name


def effective_window(session: Session, policy: Policy) -> int | None:
    """The window a replay uses: the policy's override, else the session's."""
    return policy.context_window or session.context_window


def _input_limit(session: Session) -> int | None:
    value = session.metadata.get("input_limit") if session.metadata else None
    return value if isinstance(value, int) and value > 0 else None


def policy_threshold(session: Session, policy: Policy) -> int | None:
    """The compaction threshold of ``policy`` for ``session``'s window (None: window unknown)."""
    window = effective_window(session, policy)
    if not window:
        return None
    model_window = None
    if not policy.context_window and session.window_source == "recorded":
        # A recorded window can be an effective one (Codex records 95% of the model's).
        value = session.metadata.get("model_window") if session.metadata else None
        model_window = value if isinstance(value, int) and value > 0 else None
    return threshold(
        policy,
        window,
        session.max_output_tokens,
        input_limit=_input_limit(session),
        model_window=model_window,
    )


def cut_index(head: Sequence[int], tail: Sequence[int], default: int) -> int:
    """Where a compaction cut the conversation: the first tail message after the head.

    Leading system prompts and injected context stay verbatim and sit in the tail *before* the
    head, so the first tail index is not the cut.
    """
    last_head = max(head) if head else -1
    return next((j for j in tail if j > last_head), default)


# --- per-session precomputation -----------------------------------------------------------------


class _RecordedCompaction:
    __slots__ = (
        "first_kept",
        "index",
        "inferred_manual",
        "m_c",
        "owned",
        "owned_end",
        "recorded_call",
        "summary_message",
        "trigger",
    )

    def __init__(self) -> None:
        self.index = 0
        self.m_c = 0
        self.first_kept: int | None = None
        self.owned: list[int] = []
        self.owned_end = 0
        self.summary_message: Message | None = None
        self.trigger = "unknown"
        self.inferred_manual = False
        self.recorded_call: int | None = None


class _RecordedSide:
    """The recording's own context at every call, in one estimator's tokens (policy-independent)."""

    __slots__ = (
        "baseline",
        "baseline_after",
        "baseline_prompt",
        "baseline_prov",
        "bases",
        "e_rec_after",
        "e_rec_cov",
        "overhead",
        "overhead_known",
        "ratio",
    )

    def __init__(self) -> None:
        self.e_rec_cov: list[int] = []
        self.ratio = 1.0
        """Recorded tokens per estimated token: the median over recorded calls of
        ``(recorded - overhead) / estimated recorded context`` (1.0 without usage)."""
        self.baseline: list[int] = []
        self.baseline_prompt: list[int] = []
        self.baseline_after: list[int] = []
        """The recording's context after each call's reply (what agents check their threshold on)."""
        self.e_rec_after: list[int] = []
        """Estimated recorded context including each call's reply."""
        self.baseline_prov: list[Provenance] = []
        self.bases: dict[int, tuple[tuple[tuple[int, int], ...], int]] = {}
        """Recorded compaction index -> (context items ``(message index, tokens)``, walk start)."""
        self.overhead = 0
        self.overhead_known = False


class _Truncation:
    """One truncation setting applied to every tool output."""

    __slots__ = ("items", "messages", "notes", "reasons", "tokens", "truncated")

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.truncated: list[bool] = []
        self.notes: dict[int, str] = {}
        self.reasons: dict[int, str] = {}
        self.messages: dict[int, Message] = {}
        self.items: list[_Item | None] | None = None
        """The context item of each message under this setting (None: not in the main
        context), built on first use and shared by every run: items are never modified."""


# --- simulation state and trace -----------------------------------------------------------------


class _Item:
    """One message of a rebuilt context: the object the model sees, its session index (-1: not a
    session message) and its tokens."""

    __slots__ = ("index", "message", "tokens")

    def __init__(self, message: Message, index: int, tokens: int) -> None:
        self.message = message
        self.index = index
        self.tokens = tokens


class _State:
    __slots__ = (
        "base",
        "base_pos",
        "base_tokens",
        "e_sim",
        "n_events",
        "pending",
        "pending_events",
        "prev_baseline_figure",
        "prev_call",
        "prev_e_cov",
        "prev_e_rec_cov",
        "prev_figure",
        "rebased",
        "rec_base_change",
        "stuck",
    )

    def __init__(self) -> None:
        self.base: tuple[_Item, ...] = ()
        self.base_pos = 0
        self.base_tokens = 0
        self.e_sim = 0
        self.n_events = 0
        self.pending = False
        self.pending_events: tuple[int, ...] = ()
        self.prev_call = -1
        self.prev_e_cov = 0
        self.prev_figure = 0
        self.prev_baseline_figure = 0
        self.prev_e_rec_cov = 0
        self.rebased = False
        self.rec_base_change = False
        self.stuck: _Stuck | None = None
        """The last compaction attempt changed nothing, and the context has not been rebuilt
        since (cleared by every rebase)."""

    def copy(self) -> _State:
        other = _State.__new__(_State)
        other.base = self.base
        other.base_pos = self.base_pos
        other.base_tokens = self.base_tokens
        other.e_sim = self.e_sim
        other.n_events = self.n_events
        other.pending = self.pending
        other.pending_events = self.pending_events
        other.prev_baseline_figure = self.prev_baseline_figure
        other.prev_call = self.prev_call
        other.prev_e_cov = self.prev_e_cov
        other.prev_e_rec_cov = self.prev_e_rec_cov
        other.prev_figure = self.prev_figure
        other.rebased = self.rebased
        other.rec_base_change = self.rec_base_change
        other.stuck = self.stuck
        return other


class _Stuck:
    """A compaction attempt that changed nothing: where it was made and what came of it.

    Later attempts that provably end the same way are not made (see ``Replayer._futile``).
    Never modified once made (states share it).
    """

    __slots__ = ("at", "failed", "too_large", "why")

    def __init__(self, at: int, failed: bool, too_large: bool, why: str) -> None:
        self.at = at
        """The message the attempt was made before."""
        self.failed = failed
        """The summary could not be written (else: there was nothing to compact)."""
        self.too_large = too_large
        """The summary request overflowed the summariser at every head size tried, and more
        messages after the conversation cannot make its head shorter by themselves."""
        self.why = why
        """The error, or the reason there was nothing to compact."""


class _Check:
    __slots__ = ("base", "baseline_measure", "checks_now", "fired", "proj", "trigger")

    def __init__(
        self,
        base: int | None,
        proj: int | None,
        checks_now: bool,
        fired: bool,
        trigger: str | None,
        baseline_measure: int | None,
    ) -> None:
        self.base = base
        self.proj = proj
        self.checks_now = checks_now
        self.fired = fired
        self.trigger = trigger
        self.baseline_measure = baseline_measure


class _Trace:
    __slots__ = (
        "checkpoints",
        "checks",
        "compaction_meta",
        "events",
        "final",
        "first_compaction_call",
        "first_overflow_call",
        "first_prune_call",
        "flat",
        "key",
        "noops",
        "overflow_prompt",
        "points",
        "policy",
        "result",
        "rows",
        "run_notes",
        "threshold",
        "window",
    )

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.key = ""
        self.flat: dict[str, Any] = {}
        """The policy's fields by dotted name (what a new policy is compared with)."""
        self.checkpoints: list[_State] = []
        self.checks: list[_Check | None] = []
        self.overflow_prompt: list[tuple[int, bool]] = []
        self.rows: list[tuple[Any, ...]] = []
        self.run_notes: list[tuple[int, str, str]] = []
        """Notes made while walking: (checkpoints taken so far, grouping key, text)."""
        self.noops: list[int] = []
        """Compaction attempts that changed nothing (checkpoints taken so far, for each)."""
        self.points: list[CallPoint] = []
        self.events: list[ReplayEvent] = []
        self.compaction_meta: dict[int, dict[int, str]] = {}
        self.first_compaction_call: int | None = None
        self.first_overflow_call: int | None = None
        self.first_prune_call: int | None = None
        self.final: _State | None = None
        self.result: ReplayResult | None = None
        self.window: int | None = None
        self.threshold: int | None = None


# --- policy differences -------------------------------------------------------------------------

_THRESHOLD_ONLY = {
    "compaction.threshold_rule",
    "compaction.codex_ratio",
    "compaction.auto_compact_token_limit",
    "compaction.output_token_max",
    "compaction.auto",
}
_OUTCOME = {
    "compaction.strategy",
    "compaction.template",
    "compaction.head_tool_output_max_chars",
    "compaction.summary_max_tokens",
    "compaction.user_message_budget_tokens",
    "compaction.max_head_drops",
    "compaction.continuation",
    "compaction.continuation_text",
}
_NO_EFFECT = {"name", "description"}


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and key != "per_tool":
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _policy_key(policy: Policy) -> str:
    return policy.model_dump_json()


# --- the engine ---------------------------------------------------------------------------------


class Replayer:
    """Replays one session under any number of policies, reusing work between runs.

    ``summarizer_factory(policy)`` gives the summariser for a policy (default: the policy's
    ``llm`` — the offline mock unless configured). Runs are serialised by a lock, so a TUI worker
    may call :meth:`run` from any thread.
    """

    MAX_TRACES = 6

    def __init__(
        self,
        session: Session,
        *,
        summarizer_factory: SummarizerFactory | None = None,
    ) -> None:
        self.session = session
        self._factory = summarizer_factory
        self._lock = threading.Lock()
        messages = session.messages
        self._n = n = len(messages)
        self._texts: list[str] | None = None
        self._tokens: dict[str, list[int]] = {}
        self._recorded: dict[str, _RecordedSide] = {}
        self._truncations: dict[str, _Truncation] = {}
        self._trunc_content: dict[tuple[int, str], tuple[str, str, str | None]] = {}
        self._compactions: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        from core.compaction import EntryCache

        self._entry_cache = EntryCache()
        """Serialised head entries shared by this session's compactions (bounded LRU)."""
        self._traces: OrderedDict[str, _Trace] = OrderedDict()
        self._summarizers: dict[str, Summarizer] = {}
        self._states: dict[tuple[Any, ...], MessageState] = {}
        self._backwards: int | None = None
        self._sizes: dict[tuple[str | None, bool], list[tuple[int, int, int]]] | None = None
        self._overflow_reasons: dict[int | None, list[str | None]] = {}
        self._plain_items: dict[str, list[_Item | None]] = {}
        self._links: list[int] | None = None

        # Which messages are in the main conversation, which are calls, turns.
        self._main = [not m.sidechain for m in messages]
        self._walked: list[bool] = []
        """Messages a walk adds to the context: in the main conversation and not owned by a
        recorded compaction (filled once those are known, below)."""
        self._calls: list[int] = []
        self._call_of = [-1] * n
        self._turn_of: list[int] = [0] * n
        self._first_of_turn: list[bool] = []
        turn = -1
        turn_started_since_call = True
        for i, message in enumerate(messages):
            if not self._main[i]:
                self._turn_of[i] = turn
                continue
            if message.is_turn_start:
                turn += 1
                turn_started_since_call = True
            self._turn_of[i] = turn
            if message.is_model_call:
                self._call_of[i] = len(self._calls)
                self._calls.append(i)
                self._first_of_turn.append(turn_started_since_call)
                turn_started_since_call = False
        self._next_call = [-1] * (n + 1)
        upcoming = -1
        for i in range(n - 1, -1, -1):
            if self._call_of[i] >= 0:
                upcoming = self._call_of[i]
            self._next_call[i] = upcoming

        # Recorded usage of each call.
        self._usage_context: list[int | None] = []
        self._usage_prompt: list[int | None] = []
        self._usage_after: list[int | None] = []
        self._kinds: list[RecordedKind] = []
        self._fixed_overflow: list[str | None] = []
        self._usage_notes: list[str] = []
        zero_calls = 0
        first_convention: UsageConvention | None = None
        for i in self._calls:
            message = messages[i]
            usage = usable_usage(message)
            if message.usage is not None and usage is None:
                zero_calls += 1
            if usage is None:
                self._usage_context.append(None)
                self._usage_prompt.append(None)
                self._usage_after.append(None)
            else:
                if first_convention is None:
                    first_convention = usage.convention
                self._usage_context.append(usage.context_tokens)
                self._usage_prompt.append(usage.prompt_tokens)
                self._usage_after.append(usage.context_after_reply)
            reason = overflow_reason(message, None)
            self._fixed_overflow.append(reason)
        default_kind: RecordedKind = "before-reply"
        if first_convention is not None:
            default_kind = (
                "before-reply" if first_convention is UsageConvention.ANTHROPIC else "after-reply"
            )
        elif session.format in (SourceFormat.PI, SourceFormat.CODEX, SourceFormat.OPENCODE):
            default_kind = "after-reply"
        for i in self._calls:
            usage = usable_usage(messages[i])
            self._kinds.append(recorded_kind(usage) if usage is not None else default_kind)
        self._default_kind = default_kind
        self._has_usage = first_convention is not None
        if zero_calls:
            self._usage_notes.append(
                f"{zero_calls} call(s) recorded an all-zero usage (aborted or failed calls); "
                "their context is estimated from the neighbouring calls."
            )

        # Recorded compactions: where they happened, what they own and kept.
        self._ids: dict[str, int] = {}
        for i, message in enumerate(messages):
            self._ids.setdefault(message.id, i)
        self._owned = [False] * n
        self._rc: list[_RecordedCompaction] = []
        self._rc_at: dict[int, list[_RecordedCompaction]] = {}
        for c_index, event in enumerate(session.compactions):
            rc = _RecordedCompaction()
            rc.index = c_index
            rc.m_c = max(0, min(event.message_index, n))
            rc.trigger = event.trigger
            owned: list[int] = []
            j = rc.m_c
            while j < n and (messages[j].meta or messages[j].summary):
                owned.append(j)
                if messages[j].summary:
                    break
                j += 1
            if not any(messages[k].summary for k in owned):
                owned = []
            rc.owned = owned
            rc.owned_end = owned[-1] + 1 if owned else rc.m_c
            for k in owned:
                self._owned[k] = True
            if not owned and event.summary:
                rc.summary_message = Message.model_construct(
                    index=rc.m_c,
                    id=f"recorded-summary:{c_index}",
                    role=Role.USER,
                    text=event.summary,
                    summary=True,
                )
            if event.first_kept_id is not None:
                kept = self._ids.get(event.first_kept_id)
                if kept is not None and kept < rc.m_c:
                    rc.first_kept = kept
            # The call this compaction came before (or, after a failed call, that call).
            prev_call: int | None = None
            for k in range(rc.m_c - 1, -1, -1):
                if self._call_of[k] >= 0:
                    prev_call = self._call_of[k]
                    break
            if prev_call is not None and self._fixed_overflow[prev_call] is not None:
                rc.recorded_call = prev_call
            else:
                nxt = self._next_call[rc.owned_end] if rc.owned_end <= n else -1
                rc.recorded_call = nxt if nxt >= 0 else None
            self._rc.append(rc)
            self._rc_at.setdefault(rc.m_c, []).append(rc)
        self._infer_manual()
        self._walked = [
            main and not owned for main, owned in zip(self._main, self._owned, strict=True)
        ]

    # -- recorded compactions --------------------------------------------------------------

    def _infer_manual(self) -> None:
        """Mark recorded compactions the recording agent's own threshold cannot explain.

        A compaction recorded as ``manual`` is one; so is one of unknown trigger whose context
        before it (``tokens_before``, else the last recorded figure before it, after its reply)
        is below the threshold of the agent's preset.
        """
        native = NATIVE_PRESET.get(self.session.format)
        limit = None
        policy = None
        if native is not None and self.session.context_window:
            policy = PRESETS[native]
            limit = policy_threshold(self.session, policy)
        for rc, event in zip(self._rc, self.session.compactions, strict=True):
            if event.trigger == "manual":
                rc.inferred_manual = True
                continue
            if event.trigger != "unknown" or policy is None or limit is None:
                continue
            before = event.tokens_before
            if not before:
                before = next(
                    (
                        self._usage_after[self._call_of[k]]
                        for k in range(rc.m_c - 1, -1, -1)
                        if self._call_of[k] >= 0 and self._usage_after[self._call_of[k]]
                    ),
                    None,
                )
            if before and not crosses(before, limit, policy):
                rc.inferred_manual = True

    # -- per-estimator data ----------------------------------------------------------------

    def _message_texts(self) -> list[str]:
        if self._texts is None:
            self._texts = [message_text(m) for m in self.session.messages]
        return self._texts

    def _counter(self, policy: Policy) -> TokenCounter:
        return get_counter(policy.estimator)

    def tokens(self, estimator: str) -> list[int]:
        """Tokens of every message under ``estimator`` (counted once, then cached)."""
        cached = self._tokens.get(estimator)
        if cached is None:
            cached = get_counter(estimator).count_many(self._message_texts())
            self._tokens[estimator] = cached
        return cached

    def _recorded_side(self, estimator: str) -> _RecordedSide:
        side = self._recorded.get(estimator)
        if side is not None:
            return side
        side = _RecordedSide()
        counter = get_counter(estimator)
        tok = self.tokens(estimator)
        n = self._n
        main = self._main
        owned = self._owned
        # First pass: the recorded context at each call, in estimated tokens.
        items: list[tuple[int, int]] = []  # current base: (index, tokens)
        base_sum = 0
        walk = 0
        walk_start = 0
        in_ctx = [False] * n
        e_cov: list[int] = []
        rc_changed_before: list[bool] = []
        changed = False
        for i in range(n):
            for rc in self._rc_at.get(i, ()):
                kept: list[tuple[int, int]] = []
                if rc.first_kept is not None:
                    for j in range(rc.first_kept, rc.m_c):
                        if in_ctx[j]:
                            kept.append((j, tok[j]))
                for j in range(rc.m_c):
                    in_ctx[j] = False
                summary_items: list[tuple[int, int]] = [(j, tok[j]) for j in rc.owned]
                if rc.summary_message is not None:
                    summary_items.append((-1 - rc.index, counter.count(rc.summary_message.text)))
                for j, _t in kept:
                    in_ctx[j] = True
                for j in rc.owned:
                    in_ctx[j] = True
                items = summary_items + kept
                base_sum = sum(t for _j, t in items)
                walk = 0
                walk_start = rc.owned_end
                side.bases[rc.index] = (tuple(items), walk_start)
                changed = True
            c = self._call_of[i]
            if c >= 0:
                cov = base_sum + walk
                if self._kinds[c] == "after-reply" and main[i]:
                    cov += tok[i]
                e_cov.append(cov)
                rc_changed_before.append(changed)
                changed = False
            if main[i] and not owned[i] and i >= walk_start:
                walk += tok[i]
                in_ctx[i] = True
        side.e_rec_cov = e_cov
        # Overhead: the first recorded figure minus the estimated messages before it.
        for c, figure in enumerate(self._usage_context):
            if figure is not None:
                side.overhead = max(0, figure - e_cov[c])
                side.overhead_known = True
                break
        # Baselines: recorded, else projected from the last recorded figure, else estimated.
        last: tuple[int, int] | None = None
        for c, i in enumerate(self._calls):
            if rc_changed_before[c]:
                last = None
            figure = self._usage_context[c]
            after = self._kinds[c] == "after-reply"
            reply = tok[i] if main[i] else 0
            side.e_rec_after.append(e_cov[c] + (0 if after else reply))
            if figure is not None:
                prompt = self._usage_prompt[c]
                side.baseline.append(figure)
                side.baseline_prompt.append(prompt if prompt is not None else figure)
                side.baseline_after.append(self._usage_after[c] or figure)
                side.baseline_prov.append(Provenance.RECORDED)
                last = (figure, e_cov[c])
            else:
                if last is not None:
                    value = max(0, last[0] + e_cov[c] - last[1])
                else:
                    value = side.overhead + e_cov[c]
                side.baseline.append(value)
                side.baseline_prompt.append(max(0, value - reply) if after else value)
                side.baseline_after.append(value if after else value + reply)
                side.baseline_prov.append(counter.provenance)
        ratios = sorted(
            (self._usage_context[c] or 0) / e_cov[c] - side.overhead / e_cov[c]
            for c in range(len(self._calls))
            if self._usage_context[c] is not None and e_cov[c] > 0
        )
        if ratios:
            side.ratio = min(_MAX_RATIO, max(_MIN_RATIO, ratios[len(ratios) // 2]))
        self._recorded[estimator] = side
        return side

    # -- truncation ------------------------------------------------------------------------

    def _truncation(self, policy: Policy) -> _Truncation:
        key = policy.estimator + "\x00" + policy.truncation.model_dump_json()
        cached = self._truncations.get(key)
        if cached is not None:
            return cached
        from core.truncate import truncate_tool_output

        tok = self.tokens(policy.estimator)
        counter = self._counter(policy)
        rules = policy.truncation
        result = _Truncation()
        result.tokens = list(tok)
        result.truncated = [False] * self._n
        text_key = rules.model_dump_json(
            include={
                "middle_unit",
                "hint_template",
                "subagent_hint_template",
                "use_subagent_hint",
                "respect_tool_truncation",
            }
        )
        messages = self.session.messages
        # The outputs over their tool's limits, in message order (sizes measured once).
        over: list[tuple[int, int, int, Any]] = []
        for (name, by_tool), outputs in self._output_sizes().items():
            enabled, max_lines, max_bytes, direction = rules.limits_for(name)
            if not enabled or (by_tool and rules.respect_tool_truncation):
                continue
            line_limit = max_lines if max_lines > 0 else 1 << 62
            over.extend(
                (i, max_lines, max_bytes, direction)
                for i, size, lines in outputs
                if size > max_bytes or lines > line_limit
            )
        over.sort()
        for i, max_lines, max_bytes, direction in over:
            message = messages[i]
            tool_result = message.tool_result
            assert tool_result is not None
            output = tool_result.output
            cache_key = (i, f"{max_lines}|{max_bytes}|{direction}|{text_key}")
            entry = self._trunc_content.get(cache_key)
            if entry is None:
                outcome = truncate_tool_output(
                    output,
                    tool_name=tool_result.tool_name,
                    call_id=tool_result.call_id,
                    policy=rules,
                    spill=False,
                )
                if not outcome.truncated:
                    entry = (output, "", None)
                else:
                    what = f"{outcome.removed:,} {outcome.unit or 'bytes'}"
                    entry = (
                        outcome.content,
                        f"...{what} truncated... (would spill to {outcome.output_path})",
                        f"{tool_result.tool_name or 'tool'} output of {outcome.total_lines:,} "
                        f"lines / {outcome.total_bytes:,} bytes is over the "
                        f"{outcome.limit_hit or 'size'} limit ({max_lines:,} lines, "
                        f"{max_bytes:,} bytes): {what} cut, the {direction} kept.",
                    )
                self._trunc_content[cache_key] = entry
            content, note, reason = entry
            if reason is None:
                continue
            copy = message.model_copy(
                update={"tool_result": tool_result.model_copy(update={"output": content})}
            )
            result.messages[i] = copy
            result.tokens[i] = counter.count(message_text(copy))
            result.truncated[i] = True
            result.notes[i] = note
            result.reasons[i] = reason
        self._truncations[key] = result
        return result

    def _output_sizes(self) -> dict[tuple[str | None, bool], list[tuple[int, int, int]]]:
        """``(message index, UTF-8 bytes, lines)`` of every non-empty tool output, by tool name
        and whether the tool truncated it itself, measured once per session (each truncation
        setting compares them with its limits for that tool)."""
        if self._sizes is None:
            sizes: dict[tuple[str | None, bool], list[tuple[int, int, int]]] = {}
            for i, message in enumerate(self.session.messages):
                tool_result = message.tool_result
                if tool_result is None or not tool_result.output:
                    continue
                output = tool_result.output
                size = len(output) if output.isascii() else len(output.encode("utf-8"))
                group = (tool_result.tool_name, tool_result.truncated_by_tool)
                sizes.setdefault(group, []).append((i, size, output.count("\n") + 1))
            self._sizes = sizes
        return self._sizes

    # -- summarisers and compaction --------------------------------------------------------

    def _summarizer(self, policy: Policy, window: int | None) -> Summarizer:
        if self._factory is not None:
            return self._factory(policy)
        key = policy.llm.model_dump_json() + f"|{window}"
        cached = self._summarizers.get(key)
        if cached is None:
            cached = make_summarizer(policy.llm, context_limit_tokens=window)
            self._summarizers[key] = cached
        return cached

    def _compact(
        self,
        items: Sequence[_Item],
        policy: Policy,
        window: int,
        auto: bool,
        now_ms: int,
    ) -> Any:
        """Run :func:`core.compaction.compact_outline` on a context (cached by its exact input).

        The key is everything the outcome depends on: the policy's estimator, pruning, split,
        compaction and LLM settings, the window, whether it is automatic, the summariser
        factory, and each item's message id, tokens and session index, plus the text of items
        that are not session messages (summaries and continuations written by earlier
        compactions). It is a tuple of values the session already holds (ids, counts, texts),
        hashed without copying them; at most :data:`_MAX_CACHED_COMPACTIONS` results are kept
        (least recently used first out), each a :class:`core.compaction.CompactionOutline`
        (the summary, the output messages, ids and prune reasons: no request text).
        """
        from core.compaction import CompactionError, CompactionOutline, compact_outline

        messages = [item.message for item in items]
        tokens = [item.tokens for item in items]
        indices = [item.index for item in items]
        key = (
            policy.model_dump_json(include={"estimator", "pruning", "split", "compaction", "llm"}),
            window,
            auto,
            id(self._factory),
            tuple([message.id for message in messages]),
            tuple(tokens),
            tuple(indices),
            tuple([item.message.text for item in items if item.index < 0]),
        )
        cached = self._compactions.get(key)
        if cached is not None:
            self._compactions.move_to_end(key)
            return cached
        summarizer = self._summarizer(policy, window)
        coroutine = compact_outline(
            messages,
            policy,
            summarizer,
            window=window,
            counter=self._counter(policy),
            auto=auto,
            token_counts=tokens,
            now_ms=now_ms,
            entry_cache=self._entry_cache,
        )
        outcome: CompactionOutline | CompactionError
        try:
            outcome = _run_coroutine(coroutine)
        except CompactionError as exc:
            # Kept for its message and flags; not its traceback, whose frames hold the head and
            # the last summary request (megabytes for a long head), nor the error behind it.
            outcome = exc.with_traceback(None)
            outcome.__cause__ = outcome.__context__ = None
        self._compactions[key] = outcome
        if len(self._compactions) > _MAX_CACHED_COMPACTIONS:
            self._compactions.popitem(last=False)
        return outcome

    def _linked_back(self) -> list[int]:
        """For each message, the first earlier message that shares a tool call id with it (the
        call a result answers, or an earlier message holding or answering the same id); the
        message's own index when there is none."""
        if self._links is None:
            first: dict[str, int] = {}
            links = list(range(self._n))
            for i, message in enumerate(self.session.messages):
                ids = [call.id for call in message.tool_calls]
                if message.tool_result is not None:
                    ids.append(message.tool_result.call_id)
                for call_id in ids:
                    seen = first.setdefault(call_id, i)
                    if seen < links[i]:
                        links[i] = seen
            self._links = links
        return self._links

    def _futile(self, stuck: _Stuck, appended: Sequence[_Item], policy: Policy) -> bool:
        """An attempt now would end as the ``stuck`` one did: the context is the one it was made
        on plus ``appended`` (it has not been rebuilt since), and nothing appended can change
        the outcome.

        With nothing appended the input is the same. Otherwise only a summary request that
        overflowed at every head size tried (``too_large``) stays futile, when the appended
        messages can only lengthen the head it sends:

        * none is a summary (the prompt quotes the conversation's last summary);
        * none shares a tool call id with a message before the attempt: a result answering an
          older call could move the split point earlier, and a call id held again could relabel
          an older result's entry;
        * when the policy prunes, none starts a turn (the skip boundary would move and older
          outputs could be pruned; with ``protect_turns = 0`` every message moves it).

        Then the head of ``summary-only`` and ``codex`` (the whole context) gains the appended
        messages, and the cut of ``tail`` only moves later (the tail reaches its budget, or its
        last turns, no earlier than before; the pinned leading context is unchanged, as the failed
        head held a message after it) — unless the head was everything only because the tail
        would have been (``head_may_shrink``, not ``too_large`` then): every request of the new
        attempt extends the one of the same size in the failed attempt, so the summariser
        overflows again.
        """
        if not appended:
            return True
        if not stuck.too_large:
            return False
        links = self._linked_back()
        pruning = policy.pruning
        if pruning.enabled and pruning.protect_turns == 0:
            return False
        turns_matter = pruning.enabled
        since = stuck.at
        for item in appended:
            message = item.message
            if message.summary or (item.index >= 0 and links[item.index] < since):
                return False
            if turns_matter and message.is_turn_start:
                return False
        return True

    # -- running ---------------------------------------------------------------------------

    def run(
        self,
        policy: Policy,
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> ReplayResult:
        """Replay the session under ``policy``, resuming from the most recent run it can."""
        with self._lock, _gc_paused():
            key = _policy_key(policy)
            trace = self._traces.get(key)
            if trace is not None and trace.result is not None:
                self._traces.move_to_end(key)
                return trace.result
            flat = _flatten(policy.model_dump(mode="json"))
            old, resume = self._best_trace(policy, flat)
            trace = _Trace(policy)
            trace.key = key
            trace.flat = flat
            result = self._simulate(policy, trace, old, resume, progress, cancel)
            trace.result = result
            self._traces[key] = trace
            if len(self._traces) > self.MAX_TRACES:
                self._traces.popitem(last=False)
            return result

    def _best_trace(self, policy: Policy, flat: dict[str, Any]) -> tuple[_Trace | None, int]:
        """The trace to resume from and the call to resume at (``flat``: the policy's fields,
        as :func:`_flatten` gives them)."""
        best: _Trace | None = None
        best_call = 0
        for trace in reversed(self._traces.values()):
            call = self._resume_call(trace, policy, flat, best_call)
            if call > best_call:
                best, best_call = trace, call
        return best, best_call

    def _resume_call(
        self, trace: _Trace, policy: Policy, flat: dict[str, Any], beyond: int = 0
    ) -> int:
        """The first call of ``trace`` that ``policy`` may change (0: replay from the start).

        Work stops as soon as the answer is known to be ``beyond`` or earlier (a resume point
        another trace already offers): the value returned then is no later than ``beyond``.
        """
        calls = len(self._calls)
        if trace.final is None or len(trace.checkpoints) != calls:
            return 0
        old = trace.policy
        if old.estimator != policy.estimator or is_recording_policy(
            self.session, old
        ) != is_recording_policy(self.session, policy):
            return 0
        a = trace.flat or _flatten(old.model_dump(mode="json"))
        b = flat
        changed = {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)} - _NO_EFFECT
        resume = calls
        if not changed:
            return resume
        window_old = effective_window(self.session, old)
        window_new = effective_window(self.session, policy)
        remaining = set(changed)
        if "context_window" in remaining and window_old == window_new:
            remaining.discard("context_window")
        if any(k.startswith("truncation.") for k in remaining):
            remaining = {k for k in remaining if not k.startswith("truncation.")}
            resume = min(resume, self._first_truncation_difference(old, policy))
        pruning_turn_end = (old.pruning.enabled and old.pruning.budget_rule) or (
            policy.pruning.enabled and policy.pruning.budget_rule
        )
        if any(k.startswith("pruning.") for k in remaining):
            remaining = {k for k in remaining if not k.startswith("pruning.")}
            if pruning_turn_end:
                return 0
            resume = min(resume, _or(trace.first_compaction_call, calls))
        outcome = {
            k for k in remaining if k in _OUTCOME or k.startswith("split.") or k.startswith("llm.")
        }
        if outcome:
            remaining -= outcome
            resume = min(resume, _or(trace.first_compaction_call, calls))
        decision = {k for k in remaining if k in _THRESHOLD_ONLY}
        structural = {"context_window", "compaction.reserve_tokens"} & remaining
        if structural:
            decision |= structural
            # The window also bounds the mock summariser's context; window and reserve set the
            # tail budget of every compaction. A reserve change that leaves the budget as it was
            # only moves the threshold.
            budget_changed = old.compaction.strategy == "tail" and self._tail_budget(
                old, window_old
            ) != self._tail_budget(policy, window_new)
            if window_old != window_new or budget_changed:
                resume = min(resume, _or(trace.first_compaction_call, calls))
        remaining -= decision
        if "compaction.overflow_recovery" in remaining:
            remaining.discard("compaction.overflow_recovery")
            resume = min(resume, _or(trace.first_overflow_call, calls))
        if remaining:
            return 0  # schedule flags and anything else: from the start
        if decision and resume > beyond:
            resume = self._first_decision_difference(trace, policy, resume)
        return resume

    @staticmethod
    def _tail_budget(policy: Policy, window: int | None) -> int | None:
        if not window:
            return None
        return policy.split.tail_budget(max(window - policy.compaction.reserve_tokens, 0))

    def _first_truncation_difference(self, old: Policy, new: Policy) -> int:
        first = self._truncation(old)
        second = self._truncation(new)
        # Only outputs one of the two truncates can differ (the others keep their own tokens).
        for i in sorted(first.notes.keys() | second.notes.keys()):
            if (
                first.tokens[i] != second.tokens[i]
                or first.truncated[i] != second.truncated[i]
                or first.notes.get(i) != second.notes.get(i)
                or first.reasons.get(i) != second.reasons.get(i)
            ):
                return self._checkpoint_before(i)
        return len(self._calls)

    def _checkpoint_before(self, message_index: int) -> int:
        """The last call at or before ``message_index`` (its checkpoint precedes the message)."""
        nxt = self._next_call[message_index]
        if nxt < 0:
            nxt = len(self._calls)
        # Checkpoint nxt is taken before message calls[nxt] >= message_index; the state it holds
        # already includes message_index when calls[nxt] > message_index, so go one call back.
        if nxt < len(self._calls) and self._calls[nxt] == message_index:
            return nxt
        return max(0, nxt - 1) if nxt > 0 else 0

    def _first_decision_difference(self, trace: _Trace, policy: Policy, stop: int) -> int:
        """The first call before ``stop`` whose threshold check or overflow verdict ``policy``
        decides otherwise than ``trace`` did (``stop`` when none does)."""
        window = effective_window(self.session, policy)
        new_limit = policy_threshold(self.session, policy)
        same_window = window == trace.window
        pending_new = False
        checkpoints = trace.checkpoints
        checks = trace.checks
        overflow_prompt = trace.overflow_prompt
        for c in range(min(stop, len(checks))):
            check = checks[c]
            if check is not None:
                fired_new, pending_new = _decide(check, new_limit, policy, pending_new)
                if fired_new != check.fired:
                    return c
                if fired_new and _trigger_of(check, new_limit, policy) != check.trigger:
                    return c  # fires either way, but on another figure
                # A projection that crossed mid-turn under one threshold only: the checkpoints
                # after this check hold the other run's flag.
                after = checkpoints[c + 1] if c + 1 < len(checkpoints) else trace.final
                if after is not None and after.pending != pending_new:
                    return c
            if same_window:
                continue
            prompt, delta_not_negative = overflow_prompt[c]
            if self._overflows(c, prompt, delta_not_negative, window) != self._overflows(
                c, prompt, delta_not_negative, trace.window
            ):
                return c
        return stop

    def _recorded_overflow(self, c: int, window: int | None) -> str | None:
        """Why recorded call ``c`` overflowed against ``window`` (None: it did not)."""
        return self._recorded_overflows(window)[c]

    def _recorded_overflows(self, window: int | None) -> list[str | None]:
        """:meth:`_recorded_overflow` of every call, worked out once per window (a list of
        the calls' length for each window a policy used)."""
        reasons = self._overflow_reasons.get(window)
        if reasons is None:
            reasons = []
            for c, fixed in enumerate(self._fixed_overflow):
                prompt = self._usage_prompt[c]
                if fixed is None and window and prompt is not None and prompt > window:
                    fixed = "over-window"
                reasons.append(fixed)
            self._overflow_reasons[window] = reasons
        return reasons

    def _overflows(
        self, c: int, prompt_sim: int, delta_not_negative: bool, window: int | None
    ) -> bool:
        """The simulated call overflows: its prompt exceeds the window, or the recording
        overflowed there and the policy removed nothing."""
        if not window:
            return False
        if prompt_sim > window:
            return True
        return delta_not_negative and self._recorded_overflows(window)[c] is not None

    # -- the walk --------------------------------------------------------------------------

    def _simulate(
        self,
        policy: Policy,
        trace: _Trace,
        old: _Trace | None,
        resume: int,
        progress: ProgressFn | None,
        cancel: threading.Event | None,
    ) -> ReplayResult:
        session = self.session
        messages = session.messages
        n = self._n
        calls = self._calls
        main = self._main
        owned = self._owned
        estimator = policy.estimator
        counter = self._counter(policy)
        tok = self.tokens(estimator)
        rec = self._recorded_side(estimator)
        trunc = self._truncation(policy)
        ttok = trunc.tokens
        window = effective_window(session, policy)
        limit = policy_threshold(session, policy)
        trace.window, trace.threshold = window, limit
        native = is_recording_policy(session, policy)
        comp = policy.compaction
        turn_end_prune = policy.pruning.enabled and policy.pruning.budget_rule
        project = comp.project_after_tool_results
        every_call = comp.check_before_each_call

        # Resume from a checkpoint of an earlier run, or start afresh.
        if old is not None and 0 < resume <= len(calls) and old.final is not None:
            if resume == len(calls):
                state = old.final.copy()
                pos = n
            else:
                state = old.checkpoints[resume].copy()
                pos = calls[resume]
            trace.checkpoints = old.checkpoints[:resume]
            trace.checks = old.checks[:resume]
            trace.overflow_prompt = old.overflow_prompt[:resume]
            trace.rows = old.rows[:resume]
            trace.events = old.events[: state.n_events]
            trace.compaction_meta = {
                k: v for k, v in old.compaction_meta.items() if k < state.n_events
            }
            trace.run_notes = [note for note in old.run_notes if note[0] <= resume]
            trace.noops = [taken for taken in old.noops if taken <= resume]
            for name in ("first_compaction_call", "first_overflow_call", "first_prune_call"):
                value = getattr(old, name)
                setattr(trace, name, value if value is not None and value < resume else None)
            reuse_points = old.window == window and old.threshold == limit
            trace.points = old.points[:resume] if reuse_points else []
        else:
            resume = 0
            state = _State()
            pos = 0
        events = trace.events

        def note(key: str, text: str) -> None:
            trace.run_notes.append((len(trace.checkpoints), key, text))

        def add_event(fields: dict[str, Any], meta: dict[int, str] | None = None) -> int:
            full = {
                "kind": fields["kind"],
                "message_index": fields["message_index"],
                "call_index": fields.get("call_index"),
                "trigger": fields.get("trigger"),
                "reason": fields["reason"],
                "tokens_before": fields.get("tokens_before"),
                "tokens_after": fields.get("tokens_after"),
                "head_indices": fields.get("head_indices", []),
                "tail_indices": fields.get("tail_indices", []),
                "pruned_indices": fields.get("pruned_indices", []),
                "summary": fields.get("summary"),
                "dropped_head_messages": fields.get("dropped_head_messages", 0),
                "trigger_call_index": fields.get("trigger_call_index"),
                "at_message_index": fields.get("at_message_index"),
                "summary_tokens": fields.get("summary_tokens"),
                "recorded_index": fields.get("recorded_index"),
            }
            events.append(_build(ReplayEvent, full))
            event_id = len(events) - 1
            if meta:
                trace.compaction_meta[event_id] = meta
            state.pending_events = (*state.pending_events, event_id)
            return event_id

        if trunc.items is None:
            # The session's own messages (shared by every truncation setting of this
            # estimator), with the outputs this setting truncates in their place.
            plain = self._plain_items.get(estimator)
            if plain is None:
                plain = self._plain_items[estimator] = [
                    _Item(messages[j], j, tok[j]) if walked else None
                    for j, walked in enumerate(self._walked)
                ]
            trunc.items = list(plain)
            for j, copy in trunc.messages.items():
                if self._walked[j]:
                    trunc.items[j] = _Item(copy, j, ttok[j])
        all_items = trunc.items

        def walk_items(start: int, stop: int) -> list[_Item]:
            return [item for item in all_items[start:stop] if item is not None]

        def context_items(at: int) -> list[_Item]:
            return [*state.base, *walk_items(state.base_pos, at)]

        def rebase(items: Sequence[_Item], at: int) -> None:
            state.base = tuple(items)
            state.base_pos = at
            state.base_tokens = sum(item.tokens for item in items)
            state.e_sim = state.base_tokens
            state.rebased = True
            state.stuck = None

        def adopt(rc: _RecordedCompaction, at: int) -> None:
            base_items, start = rec.bases[rc.index]
            items: list[_Item] = []
            for j, t in base_items:
                if j < 0:
                    assert rc.summary_message is not None
                    items.append(_Item(rc.summary_message, -1, t))
                elif owned[j]:
                    items.append(_Item(messages[j], j, t))
                else:
                    item = all_items[j]
                    assert item is not None  # in the recorded context, so in the main one
                    items.append(item)
            rebase(items, start)
            state.e_sim += sum(ttok[j] for j in range(start, at) if main[j] and not owned[j])

        def ratio_now() -> float:
            return rec.ratio

        def now_ms_at(at: int) -> int:
            stamp = messages[min(at, n - 1)].timestamp if n else None
            if stamp:
                try:
                    return int(
                        datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000
                    )
                except ValueError:
                    pass
            return 0

        def changed_nothing(
            at: int, call: int | None, trigger: Trigger, failed: bool, why: str
        ) -> None:
            """Note a compaction attempt that left the context as it was."""
            trace.noops.append(len(trace.checkpoints))
            where = f"call {call}" if call is not None else f"message {at}"
            fired = {
                "threshold": f"the context crossed the threshold before {where}",
                "projection": f"the projected context crossed the threshold before {where}",
                "overflow": f"{where} would not fit the window",
                "manual": f"the user compacted before message {at} in the recording",
                "recorded": f"the recording compacted before {where}",
            }[trigger]
            if failed:
                note("failed", f"{fired}, but the compaction failed: {why}")
            else:
                note(f"nothing-{trigger}", f"{fired}, but there was nothing to compact: {why}")

        def own_compaction(
            at: int,
            call: int | None,
            trigger: Trigger,
            trigger_call: int | None,
            figure: int,
        ) -> bool:
            """Run the policy's compaction before message ``at``; True when it changed anything."""
            if not window:
                return False
            stuck = state.stuck
            if stuck is not None and self._futile(stuck, walk_items(stuck.at, at), policy):
                # It would end as the last attempt did: not made again.
                state.stuck = _Stuck(at, stuck.failed, stuck.too_large, stuck.why)
                changed_nothing(at, call, trigger, stuck.failed, stuck.why)
                return False
            items = context_items(at)
            if not items:
                return False
            # Any attempt depends on how the policy compacts, whatever comes of it.
            if trace.first_compaction_call is None:
                trace.first_compaction_call = max(0, len(trace.checkpoints) - 1)
            outcome = self._compact(items, policy, window, trigger != "manual", now_ms_at(at))
            if isinstance(outcome, Exception):
                too_large = getattr(outcome, "too_large", False) and not getattr(
                    outcome, "head_may_shrink", False
                )
                state.stuck = _Stuck(at, True, too_large, str(outcome))
                changed_nothing(at, call, trigger, True, str(outcome))
                return False
            if not outcome.compacted and not outcome.pruned_ids:
                state.stuck = _Stuck(at, False, False, outcome.reason)
                changed_nothing(at, call, trigger, False, outcome.reason)
                return False
            by_id: dict[str, _Item] = {item.message.id: item for item in items}
            before = state.e_sim
            new_items: list[_Item] = []
            tail: list[int] = []
            summary_tokens = 0
            continued = False
            for out in outcome.output_messages:
                source = by_id.get(out.id)
                if source is not None and out is source.message:
                    new_items.append(source)  # kept as it was (an earlier summary included)
                    if source.index >= 0:
                        tail.append(source.index)
                elif source is not None and source.index >= 0:
                    new_items.append(_Item(out, source.index, counter.message_tokens(out)))
                    tail.append(source.index)
                else:  # written by this compaction: its summary and continuation
                    t = counter.message_tokens(out)
                    new_items.append(_Item(out, -1, t))
                    summary_tokens += t
                    continued = continued or out.synthetic
            # Ids map to the last item of that id (by_id), as everywhere in this function.
            head_items = [item for h in outcome.head_ids if (item := by_id.get(h)) is not None]
            head = [item.index for item in head_items if item.index >= 0]
            pruned = [
                item.index
                for p in outcome.pruned_ids
                if (item := by_id.get(p)) is not None and item.index >= 0
            ]
            meta: dict[int, str] = {}
            if outcome.prune_reasons:  # one per item (none when the policy does not prune)
                # With every id once, by_id gives each item back (the usual case: no lookups).
                owners = items if len(by_id) == len(items) else [by_id[i.message.id] for i in items]
                meta = {
                    index: why
                    for source, why in zip(owners, outcome.prune_reasons, strict=True)
                    if (index := source.index) >= 0
                }
            rebase(new_items, at)
            after_tokens = figure - round(ratio_now() * (before - state.e_sim))
            if outcome.compacted:
                head_tokens = sum(item.tokens for item in head_items)
                reason = {
                    "threshold": "the context crossed the threshold",
                    "projection": "the projected context (with the tool results since the last "
                    "call) crossed the threshold",
                    "overflow": "the call would not fit the window",
                    "manual": "the user compacted here in the recording",
                    "recorded": "the recording compacted here",
                }[trigger]
                add_event(
                    {
                        "kind": "compact",
                        "message_index": cut_index(head, tail, at),
                        "call_index": call,
                        "trigger": trigger,
                        "reason": f"Compacted because {reason} ({figure:,} tokens): "
                        f"{len(head)} messages ({head_tokens:,} tokens) summarised, "
                        f"{len(tail)} kept. {outcome.reason}",
                        "tokens_before": figure,
                        "tokens_after": max(0, after_tokens),
                        "head_indices": head,
                        "tail_indices": tail,
                        "pruned_indices": pruned,
                        "summary": outcome.summary,
                        "dropped_head_messages": outcome.dropped_head_messages,
                        "trigger_call_index": trigger_call,
                        "at_message_index": at,
                        "summary_tokens": summary_tokens,
                    },
                    meta,
                )
                if continued:
                    add_event(
                        {
                            "kind": "continue",
                            "message_index": at,
                            "call_index": call,
                            "trigger": trigger,
                            "reason": "A synthetic message asks the agent to carry on after the "
                            "automatic compaction.",
                            "at_message_index": at,
                        }
                    )
            else:
                add_event(
                    {
                        "kind": "prune",
                        "message_index": pruned[0] if pruned else at,
                        "call_index": call,
                        "trigger": trigger,
                        "reason": f"Nothing to summarise, but pruning freed "
                        f"{before - state.e_sim:,} tokens. {outcome.reason}",
                        "tokens_before": figure,
                        "tokens_after": max(0, after_tokens),
                        "pruned_indices": pruned,
                        "trigger_call_index": trigger_call,
                        "at_message_index": at,
                    },
                    meta,
                )
            return True

        def turn_end_pruning(at: int, call: int) -> None:
            from core.prune import prune

            items = context_items(at)
            outcome = prune(
                [item.message for item in items],
                policy.pruning,
                counter=counter,
                now_ms=now_ms_at(at),
            )
            if trace.first_prune_call is None:
                trace.first_prune_call = max(0, len(trace.checkpoints) - 1)
            if not outcome.pruned_ids:
                return
            pruned_set = set(outcome.pruned_ids)
            new_items = []
            pruned: list[int] = []
            meta: dict[int, str] = {}
            for item, out, decision in zip(items, outcome.messages, outcome.decisions, strict=True):
                if item.index >= 0:
                    meta[item.index] = decision.reason.value
                if item.message.id in pruned_set:
                    new_items.append(_Item(out, item.index, counter.message_tokens(out)))
                    if item.index >= 0:
                        pruned.append(item.index)
                else:
                    new_items.append(item)
            before = state.e_sim
            rebase(new_items, at)
            add_event(
                {
                    "kind": "prune",
                    "message_index": pruned[0] if pruned else at,
                    "call_index": call,
                    "trigger": None,
                    "reason": f"At the end of the turn, {outcome.summary[0].lower()}"
                    f"{outcome.summary[1:]}",
                    "tokens_before": before,
                    "tokens_after": state.e_sim,
                    "pruned_indices": pruned,
                    "at_message_index": at,
                },
                meta,
            )

        total = n
        next_progress = pos + _PROGRESS_EVERY
        # Points built before the resume point are reused; rows hold the raw data of every call.
        checkpoints = trace.checkpoints
        call_of = self._call_of
        rc_at = self._rc_at
        walked = self._walked
        truncated_of = trunc.truncated
        call_step = self._call_step
        sim_provenance = counter.provenance
        recorded_overflow = self._recorded_overflows(window)

        for i in range(pos, n):
            if i >= next_progress:
                next_progress = i + _PROGRESS_EVERY
                if cancel is not None and cancel.is_set():
                    raise ReplayCancelled("replay cancelled")
                if progress is not None:
                    progress(i, total)
            c = call_of[i]
            if c >= 0:
                state.n_events = len(events)
                checkpoints.append(state.copy())
            # Recorded compactions happening before message i.
            for rc in rc_at.get(i, ()):
                state.rec_base_change = True
                if not rc.inferred_manual:
                    continue
                if native:
                    before = state.e_sim
                    adopt(rc, i)
                    nxt = self._next_call[i]
                    add_event(
                        {
                            "kind": "recorded-compaction",
                            "message_index": rc.first_kept if rc.first_kept is not None else i,
                            "call_index": nxt if nxt >= 0 else None,
                            "trigger": "manual",
                            "reason": "The user compacted here in the recording (below the "
                            "agent's threshold); the recorded summary and kept messages are used.",
                            "tokens_before": None,
                            "tokens_after": None,
                            "tail_indices": [j for j, _t in rec.bases[rc.index][0] if j >= 0],
                            "summary": session.compactions[rc.index].summary,
                            "at_message_index": i,
                            "recorded_index": rc.index,
                            "summary_tokens": sum(
                                t for j, t in rec.bases[rc.index][0] if j < 0 or owned[j]
                            ),
                        }
                    )
                    del before
                else:
                    nxt = self._next_call[i]
                    figure = state.prev_figure + (state.e_sim - state.prev_e_cov)
                    if own_compaction(i, nxt if nxt >= 0 else None, "manual", None, figure):
                        last = events[-1] if events else None
                        if last is not None and last.kind in ("compact", "prune"):
                            last.recorded_index = rc.index
            if c >= 0:
                call_step(
                    c,
                    i,
                    state,
                    policy,
                    native,
                    window,
                    limit,
                    rec,
                    tok,
                    ttok,
                    turn_end_prune,
                    project,
                    every_call,
                    own_compaction,
                    turn_end_pruning,
                    adopt,
                    add_event,
                    trace,
                    sim_provenance,
                    recorded_overflow,
                )
            if walked[i]:
                state.e_sim += ttok[i]
                if truncated_of[i]:
                    nxt = self._next_call[i + 1] if i + 1 <= n else -1
                    add_event(
                        {
                            "kind": "truncate",
                            "message_index": i,
                            "call_index": nxt if nxt >= 0 else None,
                            "trigger": None,
                            "reason": trunc.reasons.get(i, "truncated"),
                            "tokens_before": tok[i],
                            "tokens_after": ttok[i],
                            "at_message_index": i,
                        }
                    )
            if c >= 0:
                state.prev_e_cov = state.e_sim
        state.n_events = len(events)
        trace.final = state.copy()
        if progress is not None:
            progress(n, total)
        return self._assemble(policy, trace, resume, rec, tok, trunc, window, limit, native)

    def _call_step(
        self,
        c: int,
        i: int,
        state: _State,
        policy: Policy,
        native: bool,
        window: int | None,
        limit: int | None,
        rec: _RecordedSide,
        tok: list[int],
        ttok: list[int],
        turn_end_prune: bool,
        project: bool,
        every_call: bool,
        own_compaction: Callable[[int, int | None, Trigger, int | None, int], bool],
        turn_end_pruning: Callable[[int, int], None],
        adopt: Callable[[_RecordedCompaction, int], None],
        add_event: Callable[..., int],
        trace: _Trace,
        sim_provenance: Provenance,
        recorded_overflow: list[str | None],
    ) -> None:
        comp = policy.compaction
        first_of_turn = self._first_of_turn[c]
        checks_now = every_call or first_of_turn
        # 1. Turn-end pruning (opencode's budget rule runs after every turn).
        if turn_end_prune and first_of_turn and c > 0:
            turn_end_pruning(i, c)
        # 2. The threshold check before this call, on the previous call's context after its
        # reply (what every anchor agent compares) plus, when projecting, what came since.
        reply_tokens = tok[i] if self._main[i] else 0
        base: int | None = None
        proj: int | None = None
        baseline_measure: int | None = None
        if state.prev_call >= 0:
            added = state.e_sim - state.prev_e_cov
            if not state.rebased:
                base = state.prev_figure
            if project:
                proj = state.prev_figure + added
            rec_added = rec.e_rec_after[c] - reply_tokens - state.prev_e_rec_cov
            baseline_measure = state.prev_baseline_figure + (rec_added if project else 0)
        elif project:
            proj = rec.overhead + state.e_sim
            baseline_measure = rec.overhead + rec.e_rec_after[c] - reply_tokens
        check = _Check(base, proj, checks_now, False, None, baseline_measure)
        fired, state.pending = _decide(check, limit, policy, state.pending)
        if fired:
            trigger = _trigger_of(check, limit, policy)
            figure = base if trigger == "threshold" and base is not None else (proj or 0)
            check.fired = True
            check.trigger = trigger
            done = False
            if native:
                rc = self._recorded_here(c)
                if rc is not None and rc.index in rec.bases:
                    before = state.e_sim
                    adopt(rc, i)
                    base_items = rec.bases[rc.index][0]
                    add_event(
                        {
                            "kind": "compact",
                            "message_index": i,
                            "call_index": c,
                            "trigger": trigger,
                            "reason": f"Compacted because the context crossed the threshold "
                            f"({figure:,} tokens), where the recording compacted: the "
                            "recorded summary and kept messages are used.",
                            "tokens_before": figure,
                            "tokens_after": max(
                                0, figure - round(rec.ratio * (before - state.e_sim))
                            ),
                            "tail_indices": [
                                j for j, _t in base_items if j >= 0 and not self._owned[j]
                            ],
                            "summary": self.session.compactions[rc.index].summary,
                            "trigger_call_index": c - 1 if c > 0 else None,
                            "at_message_index": i,
                            "recorded_index": rc.index,
                            "summary_tokens": sum(
                                t for j, t in base_items if j < 0 or self._owned[j]
                            ),
                        }
                    )
                    if trace.first_compaction_call is None:
                        trace.first_compaction_call = max(0, len(trace.checkpoints) - 1)
                    done = True
            if not done:
                own_compaction(i, c, trigger, c - 1 if c > 0 else None, figure)
        trace.checks.append(check if (base is not None or proj is not None) else None)
        # 3. The simulated context of this call.
        after = self._kinds[c] == "after-reply"
        reply = tok[i] if (after and self._main[i]) else 0
        delta, figure_sim, prompt_sim, after_sim = _figures(rec, c, state.e_sim + reply)
        overflow_rec_reason = recorded_overflow[c]
        recorded_over = overflow_rec_reason is not None and delta >= 0
        trace.overflow_prompt.append((prompt_sim, delta >= 0))
        # As _overflows(c, prompt_sim, delta >= 0, window), with the reason at hand.
        overflow_sim = bool(window) and (prompt_sim > (window or 0) or recorded_over)
        if overflow_sim:
            if trace.first_overflow_call is None:
                trace.first_overflow_call = c
            recovered = False
            if (
                comp.overflow_recovery
                and window
                and own_compaction(i, c, "overflow", c, prompt_sim)
            ):
                delta, figure_sim, prompt_sim, after_sim = _figures(rec, c, state.e_sim + reply)
                recorded_over = overflow_rec_reason is not None and delta >= 0
                recovered = not (prompt_sim > window or recorded_over)
            if not recovered:
                add_event(
                    {
                        "kind": "overflow",
                        "message_index": i,
                        "call_index": c,
                        "trigger": None,
                        "reason": (
                            f"The call would send {prompt_sim:,} tokens to a {window:,}-token "
                            "window"
                            + (
                                " (the recording overflowed here and the policy removed nothing)"
                                if recorded_over and prompt_sim <= (window or 0)
                                else ""
                            )
                            + (
                                "; compacting and retrying once did not make it fit."
                                if comp.overflow_recovery
                                else "; overflow recovery is off."
                            )
                        ),
                        "tokens_before": prompt_sim,
                        "tokens_after": None,
                        "at_message_index": i,
                    }
                )
            overflow_sim = not recovered
        provenance = rec.baseline_prov[c] if delta == 0 else sim_provenance
        trace.rows.append(
            (
                c,
                i,
                figure_sim,
                provenance,
                overflow_rec_reason,
                overflow_sim,
                state.pending_events,
                check,
            )
        )
        state.pending_events = ()
        # 4. What the next check will look at.
        state.prev_call = c
        state.prev_figure = after_sim
        state.prev_baseline_figure = rec.baseline_after[c]
        state.prev_e_rec_cov = rec.e_rec_after[c]
        state.rebased = False
        state.rec_base_change = False
        # (prev_e_cov is set once the reply itself has been added to the context)

    def _recorded_here(self, c: int) -> _RecordedCompaction | None:
        """An automatic recorded compaction in the gap just before call ``c``."""
        for rc in self._rc:
            if not rc.inferred_manual and rc.recorded_call == c:
                return rc
        return None

    # -- assembling the result -------------------------------------------------------------

    def _assemble(
        self,
        policy: Policy,
        trace: _Trace,
        resume: int,
        rec: _RecordedSide,
        tok: list[int],
        trunc: _Truncation,
        window: int | None,
        limit: int | None,
        native: bool,
    ) -> ReplayResult:
        session = self.session
        events = trace.events
        counter = self._counter(policy)
        prov = counter.provenance
        kinds = self._kinds

        # Points (reusing the ones of the unchanged prefix).
        points = trace.points
        rows = trace.rows
        turn_of = self._turn_of
        usage_context = self._usage_context
        recorded_overflow = self._recorded_overflows(window)
        baseline, baseline_prov, baseline_after = (
            rec.baseline,
            rec.baseline_prov,
            rec.baseline_after,
        )
        for c in range(len(points), len(rows)):
            _c, i, figure_sim, provenance, _reason, overflow_sim, event_ids, check = rows[c]
            reason = recorded_overflow[c]
            recorded = usage_context[c]
            checked = check.checks_now and (check.base is not None or check.proj is not None)
            measure = None
            if checked:
                if check.fired:
                    measure = check.base if check.trigger == "threshold" else check.proj
                else:
                    measure = check.proj if check.proj is not None else check.base
            points.append(
                _build(
                    CallPoint,
                    {
                        "call_index": c,
                        "message_index": i,
                        "turn_index": turn_of[i],
                        "recorded_tokens": recorded,
                        "recorded_kind": kinds[c],
                        "simulated_tokens": figure_sim,
                        "simulated_provenance": provenance,
                        "window": window,
                        "threshold": limit,
                        "overflow_recorded": reason is not None,
                        "overflow_simulated": overflow_sim,
                        "event_ids": list(event_ids),
                        "baseline_tokens": baseline[c],
                        "baseline_provenance": baseline_prov[c],
                        "baseline_after_tokens": baseline_after[c],
                        "overflow_recorded_reason": reason,
                        "checked": checked,
                        "check_tokens": measure,
                        "baseline_check_tokens": check.baseline_measure if checked else None,
                        "check_fired": check.fired,
                    },
                )
            )
        # Trailing events (after the last call) are attached to nothing.

        # Message states, derived from the events.
        n = self._n
        summarised_by: list[int | None] = [None] * n
        kept_by: list[int | None] = [None] * n
        pruned = [False] * n
        prune_reason: list[str | None] = [None] * n
        for event_id, event in enumerate(events):
            if event.kind in ("compact", "recorded-compaction"):
                for j in event.head_indices:
                    summarised_by[j] = event_id
                for j in event.tail_indices:
                    kept_by[j] = event_id
            if event.kind in ("compact", "prune"):
                for j in event.pruned_indices:
                    pruned[j] = True
                meta = trace.compaction_meta.get(event_id)
                if meta:
                    for j, why in meta.items():
                        prune_reason[j] = why
        in_context = [False] * n
        final = trace.final
        assert final is not None
        for item in final.base:
            if item.index >= 0:
                in_context[item.index] = True
        for j in range(final.base_pos, n):
            if self._main[j] and not self._owned[j]:
                in_context[j] = True
        # Messages the recording compacted away stay out only when the policy applied that.
        protected_reasons = {"protected tool", "inside skip boundary", "inside protect budget"}
        ttok = trunc.tokens
        # Message states are shared between results when nothing about them changed.
        cache = self._states
        states: list[MessageState] = []
        append = states.append
        lookup = cache.get
        note_of: list[str | None] = [None] * n
        for j, note in trunc.notes.items():
            note_of[j] = note
        # One key per message, made by zip (in C) from the per-message columns.
        columns = (
            range(n),
            tok,
            ttok,
            [prov] * n,
            trunc.truncated,
            note_of,
            pruned,
            prune_reason,
            summarised_by,
            kept_by,
            in_context,
        )
        for key in zip(*columns, strict=True):
            state = lookup(key)
            if state is None:
                (
                    j,
                    tokens,
                    tokens_after,
                    _prov,
                    truncated,
                    note,
                    was_pruned,
                    why,
                    by,
                    kept,
                    inside,
                ) = key
                state = cache[key] = _build(
                    MessageState,
                    {
                        "message_index": j,
                        "tokens": tokens,
                        "tokens_after_truncation": tokens_after,
                        "provenance": prov,
                        "truncated": truncated,
                        "truncation_note": note,
                        "pruned": was_pruned,
                        "prune_reason": why,
                        "protected": why in protected_reasons,
                        "summarised_by": by,
                        "kept_by": kept,
                        "in_context_at_end": inside,
                    },
                )
            append(state)
        if len(cache) > 4 * n + _STATES_SLACK:
            # Bounded: keep this run's states only (the next run most likely shares most).
            self._states = dict(zip(zip(*columns, strict=True), states, strict=True))

        fidelity = self._fidelity(events, native)
        summary = self._summary(rows, recorded_overflow, events, trunc, tok, len(trace.noops))
        notes = self._notes(policy, window, rec, native) + _grouped(trace.run_notes)
        result = _build_result(
            {
                "schema_version": SCHEMA_VERSION,
                "session_id": session.id,
                "policy": policy,
                "window": window,
                "threshold": limit,
                "points": list(points),
                "events": list(events),
                "messages": states,
                "fidelity": fidelity,
                "summary": summary,
                "notes": notes,
                "recording_policy": native,
                "overhead_tokens": rec.overhead,
                "estimator": policy.estimator,
                "window_source": "policy" if policy.context_window else session.window_source,
            }
        )
        _set(result, "__pydantic_private__", {"_resumed_from_call": resume if resume else None})
        return result

    def _fidelity(self, events: list[ReplayEvent], native: bool) -> list[FidelityRow]:
        rows: list[FidelityRow] = []
        own = [
            (event_id, event)
            for event_id, event in enumerate(events)
            if event.kind == "compact"
            and event.trigger != "manual"
            and event.call_index is not None
        ]
        used: set[int] = set()
        for position, rc in enumerate(self._rc):
            event = self.session.compactions[rc.index]
            if rc.inferred_manual:
                note = (
                    "recorded as manual"
                    if event.trigger == "manual"
                    else "below the recording agent's threshold, so a manual compaction"
                )
                rows.append(
                    FidelityRow(
                        recorded_index=rc.index,
                        message_index=rc.m_c,
                        trigger="manual",
                        tokens_before=event.tokens_before,
                        outcome="manual",
                        replay_call_index=rc.recorded_call,
                        call_delta=0 if rc.recorded_call is not None else None,
                        recorded_call_index=rc.recorded_call,
                        note=note + "; applied where it happened",
                    )
                )
                continue
            target = rc.recorded_call
            # The replay compactions that may answer this one lie between its neighbours.
            lower = -1
            upper = 1 << 60
            for other in self._rc[:position]:
                if not other.inferred_manual and other.recorded_call is not None:
                    lower = max(lower, other.recorded_call)
            for other in self._rc[position + 1 :]:
                if not other.inferred_manual and other.recorded_call is not None:
                    upper = min(upper, other.recorded_call)
                    break
            best: tuple[int, int] | None = None
            if target is not None:
                for event_id, replay_event in own:
                    call = replay_event.call_index
                    assert call is not None
                    if event_id in used or not (lower < call < upper):
                        continue
                    distance = abs(call - target)
                    if (
                        best is None
                        or distance < best[0]
                        or (distance == best[0] and call <= target)
                    ):
                        best = (distance, event_id)
            if best is None:
                rows.append(
                    FidelityRow(
                        recorded_index=rc.index,
                        message_index=rc.m_c,
                        trigger=event.trigger,
                        tokens_before=event.tokens_before,
                        outcome="missed",
                        replay_call_index=None,
                        call_delta=None,
                        recorded_call_index=target,
                        note="the policy did not compact anywhere near here",
                    )
                )
                continue
            used.add(best[1])
            call = events[best[1]].call_index
            assert call is not None and target is not None
            delta = call - target
            outcome: Outcome = "same" if delta == 0 else ("earlier" if delta < 0 else "later")
            rows.append(
                FidelityRow(
                    recorded_index=rc.index,
                    message_index=rc.m_c,
                    trigger=event.trigger,
                    tokens_before=event.tokens_before,
                    outcome=outcome,
                    replay_call_index=call,
                    call_delta=delta,
                    recorded_call_index=target,
                    note=events[best[1]].trigger or "",
                )
            )
        return rows

    def _summary(
        self,
        rows: list[tuple[Any, ...]],
        recorded_overflow: list[str | None],
        events: list[ReplayEvent],
        trunc: _Truncation,
        tok: list[int],
        noops: int,
    ) -> ReplaySummary:
        """The figures of a run, from its rows (one per call, as its points hold them)."""
        figures = [row[2] for row in rows]
        peak_sim = max(figures, default=0)
        peak_call = figures.index(peak_sim) if figures else None  # the first call at the peak
        recorded = [figure for figure in self._usage_context if figure is not None]
        over_recorded = [reason is not None for reason in recorded_overflow[: len(rows)]]
        over_simulated = [row[5] for row in rows]
        compactions = 0
        tokens_pruned = 0
        tokens_summarised = 0
        summary_tokens = 0
        tail_tokens = 0
        manual = 0
        messages = trunc.tokens
        for event in events:
            if event.kind in ("compact", "recorded-compaction"):
                compactions += 1
                if event.trigger == "manual":
                    manual += 1
                tokens_summarised += sum(map(messages.__getitem__, event.head_indices))
                summary_tokens += event.summary_tokens or 0
                tail_tokens += sum(map(messages.__getitem__, event.tail_indices))
            if event.kind in ("compact", "prune") and event.pruned_indices:
                tokens_pruned += sum(map(messages.__getitem__, event.pruned_indices))
        truncated = sum(tok[j] - messages[j] for j in trunc.notes)  # the truncated outputs
        both = sum(map(bool.__and__, over_recorded, over_simulated))
        return ReplaySummary(
            calls=len(rows),
            peak_recorded=max(recorded) if recorded else None,
            peak_simulated=peak_sim,
            peak_call_index=peak_call,
            compactions=compactions,
            overflows_recorded=sum(over_recorded),
            overflows_simulated=sum(over_simulated),
            tokens_truncated=truncated,
            tokens_pruned=tokens_pruned,
            tokens_summarised=tokens_summarised,
            summary_tokens=summary_tokens,
            tail_tokens=tail_tokens,
            overflows_avoided=sum(over_recorded) - both,
            overflows_caused=sum(over_simulated) - both,
            manual_compactions=manual,
            final_tokens=figures[-1] if figures else None,
            noop_compactions=noops,
        )

    def _notes(
        self, policy: Policy, window: int | None, rec: _RecordedSide, native: bool
    ) -> list[str]:
        notes: list[str] = []
        counter = self._counter(policy)
        how = (
            "counted with " + policy.estimator
            if counter.provenance is Provenance.COUNTED
            else ("estimated with " + policy.estimator)
        )
        if not self._calls:
            notes.append("the session has no model calls: there is no context to replay")
        elif not self._has_usage:
            notes.append(
                f"no recorded usage: every figure is estimated ({how}), and the system prompt "
                "and tool schemas are not included"
            )
        else:
            missing = sum(1 for figure in self._usage_context if figure is None)
            if missing:
                notes.append(
                    f"{missing} of {len(self._calls)} calls have no usable usage; their context "
                    "is projected from the last recorded figure"
                )
            notes.append(
                f"recorded overhead (system prompt + tool schemas): {rec.overhead:,} tokens, "
                "calibrated from the first recorded call"
            )
        notes.extend(self._usage_notes)
        backwards = self._backwards_without_compaction()
        if backwards:
            notes.append(
                f"recorded context fell at {backwards} call(s) with no compaction in between "
                "(kept as recorded)"
            )
        if counter.note:
            notes.append(counter.note)
        if window is None:
            notes.append(
                f"unknown context window for model {self.session.model or '(unknown)'}: no "
                "threshold or overflow can be evaluated; pass --window N"
            )
        elif self._calls and rec.overhead_known and rec.overhead >= window:
            notes.append(
                f"the window ({window:,}) is smaller than the recorded overhead of "
                f"{rec.overhead:,} tokens (system prompt + tool schemas): every call overflows "
                "and no compaction can make it fit"
            )
        if native:
            notes.append(
                f"{policy.name} is the policy of the agent that recorded this session: recorded "
                "compactions it would also make are taken as recorded"
            )
        if self.session.compactions and not any(rc.owned or rc.summary_message for rc in self._rc):
            notes.append("the recorded compactions carry no summary text")
        return notes

    def _backwards_without_compaction(self) -> int:
        """Recorded figures that fell with no compaction in between (policy-independent, so
        counted once per session)."""
        if self._backwards is None:
            self._backwards = self._count_backwards()
        return self._backwards

    def _count_backwards(self) -> int:
        count = 0
        previous: int | None = None
        rc_calls = {rc.recorded_call for rc in self._rc}
        for c, figure in enumerate(self._usage_context):
            if figure is None:
                continue
            if previous is not None and figure < previous and c not in rc_calls:
                count += 1
            previous = figure
        return count


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for one run.

    A run allocates many short-lived objects next to a large, long-lived session; every
    generation-2 collection would walk the whole session again (a fifth of a run's time in
    measurements). Reference counting still frees everything; the collector resumes after.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _grouped(run_notes: list[tuple[int, str, str]]) -> list[str]:
    """The first note of each kind, with how many more of that kind there were."""
    first: dict[str, str] = {}
    counts: dict[str, int] = {}
    for _when, key, text in run_notes:
        first.setdefault(key, text)
        counts[key] = counts.get(key, 0) + 1
    return [
        text if counts[key] == 1 else f"{text} (and {counts[key] - 1} more like it)"
        for key, text in first.items()
    ]


def _figures(rec: _RecordedSide, c: int, e_sim_cov: int) -> tuple[int, int, int, int]:
    """Call ``c`` as the policy sees it, from its simulated context ``e_sim_cov`` (estimated
    tokens, on the side of the reply the recorded figure is measured on): ``(delta, figure,
    prompt, after reply)``, each the recording's figure plus ``ratio x delta``, where ``delta``
    is the simulated minus the recorded context."""
    delta = e_sim_cov - rec.e_rec_cov[c]
    scaled = round(delta * rec.ratio)
    return (
        delta,
        max(0, rec.baseline[c] + scaled),
        max(0, rec.baseline_prompt[c] + scaled),
        max(0, rec.baseline_after[c] + scaled),
    )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def _trigger_of(check: _Check, limit: int | None, policy: Policy) -> Trigger:
    """What made a firing check fire: the last figure itself, or only its projection."""
    if check.base is not None and limit is not None and crosses(check.base, limit, policy):
        return "threshold"
    return "projection"


def _decide(check: _Check, limit: int | None, policy: Policy, pending: bool) -> tuple[bool, bool]:
    """Whether a check fires under ``limit`` and the projection flag it leaves behind."""
    if limit is None or not policy.compaction.auto:
        return False, pending
    base_hit = check.base is not None and crosses(check.base, limit, policy)
    proj_hit = check.proj is not None and crosses(check.proj, limit, policy)
    if proj_hit:
        pending = True
    if check.checks_now and (base_hit or pending):
        return True, False
    return False, pending


_loops = threading.local()


def _run_coroutine(coroutine: Any) -> Any:
    """Run ``coroutine`` to completion, also from a thread that already runs an event loop.

    A private loop per thread is kept and reused (``asyncio.run`` would install a SIGINT handler
    on the main thread each time, and its repr of the task formats every message of the head).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        loop = getattr(_loops, "loop", None)
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            _loops.loop = loop
        return loop.run_until_complete(coroutine)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = _run_coroutine(coroutine)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="ctxscope-compaction")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


# --- module-level entry points ------------------------------------------------------------------


def replay(
    session: Session,
    policy: Policy,
    *,
    summarizer: Summarizer | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> ReplayResult:
    """Replay ``session`` under ``policy`` once (see the module docstring).

    ``summarizer`` overrides the policy's LLM for every compaction.
    """
    factory = (lambda _policy: summarizer) if summarizer is not None else None
    return Replayer(session, summarizer_factory=factory).run(
        policy, progress=progress, cancel=cancel
    )


def compare(
    session: Session,
    policies: Sequence[Policy],
    *,
    progress: ProgressFn | None = None,
    replayer: Replayer | None = None,
) -> CompareResult:
    """Replay ``session`` under each policy and put the figures side by side."""
    engine = replayer or Replayer(session)
    rows: list[CompareRow] = []
    per_policy: list[tuple[str, list[str]]] = []
    total = max(1, len(policies)) * max(1, len(session.messages))
    for position, policy in enumerate(policies):
        offset = position * max(1, len(session.messages))

        def step(done: int, _total: int, offset: int = offset) -> None:
            if progress is not None:
                progress(offset + done, total)

        result = engine.run(policy, progress=step if progress is not None else None)
        counts = {outcome: 0 for outcome in ("same", "earlier", "later", "missed", "manual")}
        for row in result.fidelity:
            counts[row.outcome] += 1
        rows.append(
            CompareRow(
                policy=policy.name,
                description=policy.description,
                window=result.window,
                threshold=result.threshold,
                summary=result.summary,
                fidelity=counts,
            )
        )
        per_policy.append((policy.name, result.notes))
    # Notes every policy shares once; the others with the policy they belong to.
    notes: list[str] = []
    for name, policy_notes in per_policy:
        for note in policy_notes:
            if all(note in other for _n, other in per_policy):
                if note not in notes:
                    notes.append(note)
            else:
                notes.append(f"{name}: {note}")
    window = effective_window(session, policies[0]) if policies else session.context_window
    return CompareResult(session_id=session.id, window=window, rows=rows, notes=notes)
