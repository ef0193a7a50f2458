"""What a run reads that depends on its policy, gathered once by the engine from its caches."""

from __future__ import annotations

from dataclasses import dataclass

from core.policy import Policy
from core.replay.recorded import RecordedSide
from core.replay.state import Item
from core.replay.truncation import Truncation
from core.tokens import TokenCounter


@dataclass(slots=True)
class Setting:
    """One policy over one session: its window and threshold, its estimator's counts, the
    recorded side in those counts, and its truncation of every output."""

    policy: Policy
    window: int | None
    """The window of the run (the policy's override, else the session's)."""
    limit: int | None
    """The policy's threshold for that window (None: window unknown)."""
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
    items: list[Item | None]
    """The context item of every message a walk adds (truncated where the policy truncates)."""
