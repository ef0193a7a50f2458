"""The result models of ``ctxscope compare``: several policies over one session, side by side.

Here, not beside the replay's own results: every command that replays defines those, and only
``compare`` (:func:`core.replay.compare.compare`) makes these (two model classes, ~2.6 M
instructions to define, in each ``analyze`` that never compared).
"""

from __future__ import annotations

from core.model.fastmodel import Documented
from core.replay.results import SCHEMA_VERSION, ReplaySummary


class CompareRow(Documented):
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


class CompareResult(Documented):
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
