"""Replay a recorded session under a policy, holding the agent's actions fixed.

Entry points: :func:`replay` (one run), :class:`Replayer` (incremental re-simulation for the TUI,
which replays on every keystroke of a limit change) and :func:`compare` (several policies side by
side). The result models are the public API of docs/REPLAY_API.md. How a replay walks a session,
the context it gives a model call and the package's files in the order a run uses them:
docs/architecture.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.replay.compare import compare

if TYPE_CHECKING:
    from core.algorithms.overflow import RecordedKind
    from core.replay.compare_results import CompareResult, CompareRow
    from core.replay.context import CompactionAt, ContextAt
    from core.replay.engine import Replayer, SummarizerFactory, replay
    from core.replay.policies import (
        INFERRED,
        NATIVE_PRESET,
        agent_version,
        effective_window,
        is_recording_policy,
        native_policy,
        policy_threshold,
    )
    from core.replay.results import (
        SCHEMA_VERSION,
        CallPoint,
        EventKind,
        FidelityRow,
        InferredThreshold,
        MessageState,
        Outcome,
        ReplayEvent,
        ReplayResult,
        ReplaySummary,
        ThresholdSpan,
        Trigger,
        cut_index,
    )
    from core.replay.simulate import ProgressFn, ReplayCancelled
    from core.replay.truncation import sent_output

_ON_FIRST_USE = {
    **dict.fromkeys(("RecordedKind",), "core.algorithms.overflow"),
    **dict.fromkeys(("CompactionAt", "ContextAt"), "core.replay.context"),
    **dict.fromkeys(("Replayer", "SummarizerFactory", "replay"), "core.replay.engine"),
    **dict.fromkeys(
        (
            "INFERRED",
            "NATIVE_PRESET",
            "agent_version",
            "effective_window",
            "is_recording_policy",
            "native_policy",
            "policy_threshold",
        ),
        "core.replay.policies",
    ),
    **dict.fromkeys(
        (
            "SCHEMA_VERSION",
            "CallPoint",
            "EventKind",
            "FidelityRow",
            "InferredThreshold",
            "MessageState",
            "Outcome",
            "ReplayEvent",
            "ReplayResult",
            "ReplaySummary",
            "ThresholdSpan",
            "Trigger",
            "cut_index",
        ),
        "core.replay.results",
    ),
    **dict.fromkeys(("CompareResult", "CompareRow"), "core.replay.compare_results"),
    **dict.fromkeys(("ProgressFn", "ReplayCancelled"), "core.replay.simulate"),
    **dict.fromkeys(("sent_output",), "core.replay.truncation"),
}
"""Names imported when first asked for, with the module that defines them: importing one
submodule (``core.replay.recorded``, as ``ctxscope breakdown`` does) runs this package's
``__init__`` first, and it loads neither the replay engine nor its result models then (a replay
that never compacts, ``analyze`` of most sessions, starts without the compaction algorithms
:mod:`core.replay.context` brings either)."""


def __getattr__(name: str) -> Any:
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "INFERRED",
    "NATIVE_PRESET",
    "SCHEMA_VERSION",
    "CallPoint",
    "CompactionAt",
    "CompareResult",
    "CompareRow",
    "ContextAt",
    "EventKind",
    "FidelityRow",
    "InferredThreshold",
    "MessageState",
    "Outcome",
    "ProgressFn",
    "RecordedKind",
    "ReplayCancelled",
    "ReplayEvent",
    "ReplayResult",
    "ReplaySummary",
    "Replayer",
    "SummarizerFactory",
    "ThresholdSpan",
    "Trigger",
    "agent_version",
    "compare",
    "cut_index",
    "effective_window",
    "is_recording_policy",
    "native_policy",
    "policy_threshold",
    "replay",
    "sent_output",
]
