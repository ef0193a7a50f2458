"""What a run reads that depends on its policy, gathered once by the engine from its caches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.model.tokens import TokenCounter
from core.policy import Policy
from core.replay.calls import Calls
from core.replay.recorded import RecordedSide
from core.replay.results import ThresholdSpan
from core.replay.state import Item, all_same
from core.replay.truncation import Truncation


@dataclass(slots=True)
class Setting:
    """One policy over one session: its windows and thresholds, its estimator's counts, the
    recorded side in those counts, and its truncation of every output."""

    policy: Policy
    window: int | None
    """The window of the run at its start (the policy's override, else the session's)."""
    windows: list[int | None]
    """The window at each call (Codex records it per turn)."""
    limits: list[int | None]
    """The threshold at each call (None: window unknown)."""
    native: bool
    """The policy is the recording agent's own preset."""
    counter: TokenCounter
    """The policy's estimator."""
    tokens: list[int]
    """Every message's tokens as recorded, under the estimator."""
    rec: RecordedSide
    """The recording's own context, in the estimator's tokens."""
    truncation: Truncation
    """The policy's truncation of every output."""
    items: Sequence[Item | None]
    """The context item of every message a walk adds (truncated where the policy truncates)."""
    check_tokens: list[int]
    """What each message adds to the figure the threshold check measures (the agent's own
    estimate where the policy uses it, else the message's tokens as the policy sends it)."""
    reply_recount: list[int] = field(default_factory=list)
    """What the check counts again of each reply, after it (``compaction.recount_reply_blocks``;
    empty: nothing)."""
    spans: list[ThresholdSpan] = field(default_factory=list)
    """Where the thresholds come from, stretch by stretch."""
    follow_recording: bool = False
    """The run makes exactly the recording's compactions, where they happened, and nothing else:
    it measures what the policy's check would have seen on the recording."""

    @property
    def limit(self) -> int | None:
        """The threshold at the first call (what a single figure reports)."""
        return self.limits[0] if self.limits else None

    def recorded_reasons(self, calls: Calls) -> list[str | None]:
        """Why each recorded call of ``calls`` overflowed against its window (one list when the
        window is the same at every call, the usual case)."""
        windows = self.windows
        if all_same(windows):
            return calls.recorded_overflows(windows[0] if windows else None)
        return [calls.recorded_overflows(window)[c] for c, window in enumerate(windows)]
