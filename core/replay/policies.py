"""Which policy, window and threshold a replay of a session uses.

The recording agent's own preset (detected from the session's format), the window (the policy's
override, else the session's) and the threshold of a policy for that window.
"""

from __future__ import annotations

from core.models import Session, SourceFormat
from core.overflow import threshold
from core.policy import Policy, get_preset

NATIVE_PRESET: dict[SourceFormat, str] = {
    SourceFormat.PI: "pi",
    SourceFormat.CODEX: "codex",
    SourceFormat.CLAUDE_CODE: "claude-code",
    SourceFormat.OPENCODE: "opencode",
}
"""The preset that models the agent which records each format."""


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
