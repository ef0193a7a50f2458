"""What a replay returns: the result models of docs/REPLAY_API.md, and the JSON schema version.

Every model documents its fields with attribute docstrings (read by
:func:`core.model.fastmodel.documented`): they are the descriptions of ``model_json_schema()`` and of the
field reference in docs/REPLAY_API.md.
"""

# (No ``from __future__ import annotations`` here: the models' field annotations are evaluated
# once by the class body, not compiled and evaluated from strings by pydantic for each field as
# each class is created; tests/unit/test_model_annotations.py holds it.)

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import Field, PrivateAttr

from core.model.fastmodel import Documented as Documented  # (the result models' base, here too)
from core.model.fastmodel import build_filled
from core.model.lazy_types import lazy_field_types
from core.policy import Policy

if TYPE_CHECKING:
    from core.replay.points import CallPoint as CallPoint
    from core.replay.points import MessageState as MessageState

# (a result holds its points and message states as columns until asked: ``analyze`` builds
# none, and does not create their classes)
__getattr__ = lazy_field_types(
    __name__, CallPoint="core.replay.points", MessageState="core.replay.points"
)


SCHEMA_VERSION = 1
"""Version of the JSON written by ``--json`` (bumped on any incompatible change)."""

EventKind = Literal["truncate", "prune", "compact", "continue", "overflow", "recorded-compaction"]
Trigger = Literal["threshold", "projection", "overflow", "manual", "recorded"]
Outcome = Literal["same", "earlier", "later", "missed", "manual", "untestable"]
ThresholdSource = Literal["rule", "inferred"]
CheckBasis = Literal["recorded", "projected", "estimated"]


class ReplayEvent(Documented):
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


class FidelityRow(Documented):
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
    """``same``, ``earlier``, ``later``, ``missed`` (no replay compaction near it), ``manual``
    (the user's or a hook's: applied where it happened) or ``untestable`` (the file starts at it:
    nothing before it to replay)."""
    replay_call_index: int | None
    """The call the matching replay compaction fired before."""
    call_delta: int | None
    """Replay call - recorded call (negative: the replay compacted earlier)."""
    recorded_call_index: int | None = None
    """The call the recorded compaction happened before (or the failed call it recovered)."""
    note: str = ""
    """What matched it (the replay trigger), or why none did."""
    automatic: bool = False
    """The agent's own decision (its threshold, or a refused request): what a replay of the
    agent must reproduce. Manual and hook compactions are the user's (or an extension's)."""
    trigger_evidence: str = ""
    """What the trigger rests on: the field the agent wrote, the order of the records around it,
    or the threshold it crossed (or did not)."""
    check_tokens: int | None = None
    """What the policy's check measured before the recorded call."""
    threshold: int | None = None
    """The threshold that check was compared with."""
    threshold_source: ThresholdSource | None = None
    """``rule`` (the policy's rule for the window) or ``inferred`` (the recording contradicts
    the rule there; see ``ReplayResult.thresholds``)."""


def fidelity_row(**fields: Any) -> FidelityRow:
    """A :class:`FidelityRow` of the replay's own figures, built, not validated (a validated
    row built the class's schema: 2.5 M instructions of ``analyze``, which writes it without)."""
    return build_filled(FidelityRow, fields)


class ThresholdSpan(Documented):
    """The threshold over a stretch of calls between two recorded compactions, and why."""

    first_call: int
    """The first call of the stretch."""
    last_call: int
    """The last call of the stretch (the one a recorded automatic compaction came before)."""
    threshold: int | None
    """The threshold used over the stretch (None: window unknown)."""
    source: ThresholdSource
    """``rule``: the policy's rule for the window; ``inferred``: what the recording shows,
    because it contradicts the rule there."""
    rule_threshold: int | None
    """What the policy's rule gives for the stretch."""
    low: int | None
    """The largest figure a check of the stretch measured without the agent compacting: the
    agent's threshold is above it."""
    high: int | None
    """The figure of the check before a recorded automatic compaction: the agent's threshold is
    at or below it (None: the stretch ends without one)."""
    recorded_index: int | None
    """The recorded automatic compaction that ends the stretch."""
    note: str
    """Why an inferred threshold was needed (empty when the rule fits)."""


class ReplaySummary(Documented):
    """The figures of a replay in one row."""

    calls: int
    """Model calls."""
    peak_recorded: int | None
    """Largest recorded context (None: no usage)."""
    peak_simulated: int
    """Largest simulated context."""
    peak_call_index: int | None
    """The call of the simulated peak (the first at it); the recording's peak and its call are
    ``session.peak_tokens`` / ``session.peak_call_index`` in ``analyze --json``."""
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


def replay_summary(**fields: Any) -> ReplaySummary:
    """A :class:`ReplaySummary` of the replay's own figures, built, not validated (trusted
    values; a validated summary built the class's schema, which ``analyze`` does not need)."""
    return build_filled(ReplaySummary, fields)


class LazyStates(Protocol):
    """The message states of a result, as columns (built by :mod:`core.replay.timeline`)."""

    count: int

    def all(self) -> "list[MessageState]": ...

    def one(self, index: int) -> "MessageState": ...

    def column(self, name: str) -> Sequence[Any]: ...


class LazyPoints(Protocol):
    """The points of a result, not built yet (by :mod:`core.replay.timeline`)."""

    count: int

    def all(self) -> "list[CallPoint]": ...

    def one(self, call_index: int) -> "CallPoint": ...

    def column(self, name: str) -> Sequence[Any]: ...


class ReplayResult(Documented):
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
    points: "list[CallPoint]"
    """One per model call, in order."""
    events: list[ReplayEvent]
    """What the policy did, in order; ``event_ids`` and ``*_by`` fields index this list."""
    messages: "list[MessageState]"
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
    """Where the window came from: ``recorded``, ``table``, ``inferred``, ``user``, ``policy`` or
    ``unknown``."""
    window_evidence: str | None = None
    """Why the window is what it is (one sentence)."""
    thresholds: list[ThresholdSpan] = Field(default_factory=list)
    """The threshold over each stretch of calls between recorded compactions, and where it comes
    from (the policy's rule, or the recording where it contradicts the rule)."""

    _resumed_from_call: int | None = PrivateAttr(default=None)
    _lazy_messages: LazyStates | None = PrivateAttr(default=None)
    _lazy_points: LazyPoints | None = PrivateAttr(default=None)

    @property
    def resumed_from_call(self) -> int | None:
        """The call the incremental run resumed from (None: a full run)."""
        return self._resumed_from_call

    # The points and the message states are kept as columns until something asks for the
    # objects: a 100 MB session has 50,000 calls and 100,000 messages (a second and 150 MB to
    # build), and the TUI's gauge and flags read a few columns and one object at a time.
    # ``points`` and ``messages`` build their list on first access; every way of dumping,
    # comparing or copying a result builds both first.

    def __getattr__(self, name: str) -> Any:
        if name == "messages":
            return self._complete_messages()
        if name == "points":
            return self._complete_points()
        return super().__getattr__(name)  # type: ignore[misc]  # pydantic's private attributes

    def _complete(self) -> None:
        if self._lazy_messages is None and self._lazy_points is None:
            return
        self._complete_messages()
        self._complete_points()
        # the fields in their declared order again (JSON keeps it: points before events)
        fields = self.__dict__
        order = {name: fields[name] for name in type(self).model_fields if name in fields}
        order.update(fields)
        fields.clear()
        fields.update(order)

    def _complete_messages(self) -> "list[MessageState]":
        lazy = self._lazy_messages
        if lazy is None:
            messages: list[MessageState] = self.__dict__["messages"]
            return messages
        built = lazy.all()
        self.__dict__["messages"] = built
        self._lazy_messages = None
        return built

    def _complete_points(self) -> "list[CallPoint]":
        lazy = self._lazy_points
        if lazy is None:
            points: list[CallPoint] = self.__dict__["points"]
            return points
        built = lazy.all()
        self.__dict__["points"] = built
        self._lazy_points = None
        return built

    def point(self, call_index: int) -> "CallPoint":
        """The point of call ``call_index`` (without building the others)."""
        lazy = self._lazy_points
        return lazy.one(call_index) if lazy is not None else self.points[call_index]

    def point_column(self, name: str) -> Sequence[Any]:
        """One field of every point, in call order (the usual ones without building points)."""
        lazy = self._lazy_points
        if lazy is not None:
            return lazy.column(name)
        return [getattr(point, name) for point in self.points]

    @property
    def call_count(self) -> int:
        """How many points (model calls) the result has."""
        lazy = self._lazy_points
        return lazy.count if lazy is not None else len(self.points)

    def message_state(self, index: int) -> "MessageState":
        """The state of message ``index`` (without building the others)."""
        lazy = self._lazy_messages
        return lazy.one(index) if lazy is not None else self.messages[index]

    def message_column(self, name: str) -> Sequence[Any]:
        """One field of every message state, in message order (without building the states)."""
        lazy = self._lazy_messages
        if lazy is not None:
            return lazy.column(name)
        return [getattr(state, name) for state in self.messages]

    @property
    def message_count(self) -> int:
        """How many message states the result has."""
        lazy = self._lazy_messages
        return lazy.count if lazy is not None else len(self.messages)

    def fill_lazy_fields(self) -> None:
        """Build the points and message states held as columns: what the JSON writer
        (:func:`core.model.plain_json.model_encoder`) calls before it reads the fields, as
        ``model_dump_json`` does."""
        self._complete()

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self._complete()
        return super().model_dump(*args, **kwargs)

    def model_dump_json(self, *args: Any, **kwargs: Any) -> str:
        self._complete()
        return super().model_dump_json(*args, **kwargs)

    def model_copy(self, *args: Any, **kwargs: Any) -> "ReplayResult":
        self._complete()
        return super().model_copy(*args, **kwargs)

    def __eq__(self, other: object) -> bool:
        self._complete()
        if isinstance(other, ReplayResult):
            other._complete()
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # as every mutable pydantic model

    def __copy__(self) -> "ReplayResult":
        self._complete()
        return super().__copy__()

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> "ReplayResult":
        self._complete()
        return super().__deepcopy__(memo)

    def __getstate__(self) -> dict[Any, Any]:
        self._complete()
        return super().__getstate__()

    def __repr_args__(self) -> Any:
        self._complete()
        return super().__repr_args__()


def cut_index(head: Sequence[int], tail: Sequence[int], default: int) -> int:
    """Where a compaction cut the conversation: the first tail message after the head.

    Leading system prompts and injected context stay verbatim and sit in the tail *before* the
    head, so the first tail index is not the cut.
    """
    last_head = max(head) if head else -1
    return next((j for j in tail if j > last_head), default)


class InferredThreshold(Documented):
    """The agent's threshold as one session shows it: above every figure its checks measured
    without compacting, at or below every figure that made it compact."""

    low: int | None
    """The largest figure a check measured without the agent compacting (the threshold is
    above it); None when no check measured anything."""
    high: int | None
    """The smallest figure that made the agent compact by itself (the threshold is at or below
    it); None when the session has no automatic compaction."""
    value: int | None
    """The threshold the ``inferred`` policy uses: the smallest the interval allows (the rule's
    own when it lies inside and no compaction narrows it)."""
    rule_threshold: int | None
    """What the agent's documented rule gives for the session's window."""
    compactions: int
    """Automatic compactions that bound the interval from above."""
    conflict: bool
    """No single threshold explains the session (a compaction below a figure that did not
    compact): the settings changed during it, or the figures are off."""
    note: str
    """The interval in words ("compacted at 167,094; did not at 166,210 → threshold in
    (166,210, 167,094]")."""
