"""A replay's point at each model call and state of each message (:class:`~core.replay.results.
ReplayResult`'s ``points`` and ``messages``): a module of their own, imported when one is built
(``replay --json``, the TUI), so that ``analyze``, which reads a result's columns, does not
create their classes."""

# (No ``from __future__ import annotations``: tests/unit/test_model_annotations.py.)

from core.algorithms.overflow import RecordedKind
from core.model.fastmodel import Documented
from core.model.session import Provenance
from core.replay.results import CheckBasis, ThresholdSource


class CallPoint(Documented):
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
    check_basis: CheckBasis | None = None
    """How the checked figure was made: ``recorded`` (the last call's usage as it is),
    ``projected`` (that usage plus estimates of what came since) or ``estimated`` (no usage to
    start from)."""
    threshold_source: ThresholdSource | None = None
    """Where this call's threshold comes from (see ``ReplayResult.thresholds``)."""


class MessageState(Documented):
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
