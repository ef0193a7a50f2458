"""Which policy, window and threshold a replay of a session uses.

The recording agent's own preset (detected from the session's format), the window (the policy's
override, else the session's) and the threshold of a policy for that window.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.agents.constants import value as agent_value
from core.algorithms.overflow import threshold
from core.model.session import Session, SourceFormat
from core.policy import Policy, preset_for

NATIVE_PRESET: dict[SourceFormat, str] = {
    SourceFormat.PI: "pi",
    SourceFormat.CODEX: "codex",
    SourceFormat.CLAUDE_CODE: "claude-code",
    SourceFormat.OPENCODE: "opencode",
    SourceFormat.GEMINI_CLI: "gemini-cli",
    SourceFormat.QWEN_CODE: "qwen-code",
    SourceFormat.COPILOT_CLI: "copilot-cli",
}
"""The preset that models the agent which records each format."""


def native_policy(session: Session) -> Policy:
    """The preset of the agent that recorded ``session`` (``seed`` for our own format), as that
    agent's recorded version behaves."""
    return preset_for(NATIVE_PRESET.get(session.format, "seed"), agent_version(session))


def agent_version(session: Session) -> str | None:
    """The version the agent's presets are chosen by: the one the session records, else (pi,
    which records none) its session format version."""
    if session.agent_version:
        return session.agent_version
    if session.format is SourceFormat.PI:
        value = session.metadata.get("pi_version")
        return str(value) if value is not None else "1"
    return None


INFERRED = "inferred"
"""The name of the policy built from a session's own compactions (the recording agent's preset
with the threshold they show): it is the recording agent's too."""


def is_recording_policy(session: Session, policy: Policy) -> bool:
    """Whether ``policy`` is the recording agent's own preset (by name), or the one inferred
    from the session's compactions."""
    name = NATIVE_PRESET.get(session.format)
    return name is not None and policy.name in (name, INFERRED)


def effective_window(session: Session, policy: Policy) -> int | None:
    """The window a replay uses: the policy's override, else the session's."""
    return policy.context_window or session.context_window


def _input_limit(session: Session) -> int | None:
    value = session.metadata.get("input_limit") if session.metadata else None
    return value if isinstance(value, int) and value > 0 else None


def policy_threshold(session: Session, policy: Policy, window: int | None = None) -> int | None:
    """The compaction threshold of ``policy`` for a ``window`` of ``session`` (default: the
    session's first window; None: window unknown)."""
    window = window or effective_window(session, policy)
    if not window:
        return None
    return threshold(
        policy,
        window,
        session.max_output_tokens,
        input_limit=_input_limit(session),
        model_window=_model_window(session, policy, window),
    )


def _model_window(session: Session, policy: Policy, window: int) -> int | None:
    """The model's whole window when ``window`` is the reduced one the agent records (Codex writes
    95% of the model's window into its rollout and compacts at 90% of the whole)."""
    if policy.context_window or session.window_source != "recorded":
        return None
    if session.format is SourceFormat.CODEX:
        percent = agent_value("codex", "effective_window_percent", session.agent_version)
        return round(window * 100 / percent)
    value = session.metadata.get("model_window") if session.metadata else None
    return value if isinstance(value, int) and value > 0 else None


def call_windows(session: Session, policy: Policy, calls: Sequence[int]) -> list[int | None]:
    """The window at each call (``calls``: their message indices): the policy's override, else
    the session's, as it changed during the session (Codex records it per turn)."""
    first = effective_window(session, policy)
    if policy.context_window or not session.window_changes:
        return [first] * len(calls)
    changes = sorted(session.window_changes, key=lambda change: change.message_index)
    windows: list[int | None] = []
    current: int | None = first
    k = 0
    for message_index in calls:
        while k < len(changes) and changes[k].message_index <= message_index:
            current = changes[k].context_window
            k += 1
        windows.append(current)
    return windows


def rule_thresholds(
    session: Session, policy: Policy, windows: Sequence[int | None]
) -> list[int | None]:
    """The policy's threshold at each call, for the window at that call (worked out once per
    window; the list is made in C)."""
    of = {
        window: policy_threshold(session, policy, window) if window else None
        for window in set(windows)
    }
    return list(map(of.__getitem__, windows))
