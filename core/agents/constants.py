"""The one table of what each agent does to its context, by version, with where each constant comes
from.

Every figure the agent presets and the fidelity rules use is a row here: the constant, the agent
versions it applies to, and the source it was read from (a file of the agent's repository at a
commit, a documented behaviour, or an issue report where the agent is closed source). The README
prints this table; change a value here and everything that uses it follows.

Version bounds are ``since`` (inclusive) and ``until`` (exclusive); ``None`` leaves that end open.
A session whose agent recorded no version (or one that does not parse) gets the newest row: the
agent as it is documented now.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.agents.versions import in_range, parse_version


@dataclass(frozen=True, slots=True)
class AgentConstant:
    """One constant of one agent, for a range of its versions."""

    agent: str
    """``claude-code``, ``codex``, ``opencode`` or ``pi``."""
    name: str
    """What the constant is (see :data:`CONSTANTS` for the names in use)."""
    value: float
    """Its value (tokens, a ratio or a percentage, as ``name`` says)."""
    since: str | None
    """First version it applies to (None: from the start)."""
    until: str | None
    """First version it no longer applies to (None: still current)."""
    source: str
    """Where it was read: ``repo path @ commit``, documentation, or issue reports."""


_CC_ISSUES_45K = (
    "anthropics/claude-code issues #10266, #15435, #20760 (/context: 'Autocompact buffer: 45.0k'); "
    "recorded compactions of 2.0.76 and 2.1.4 at 155,979-156,595 on 200k"
)
_CC_ISSUES_33K = (
    "anthropics/claude-code issues #23409, #12004 (constants 13,000 and 20,000; /context: "
    "'Autocompact buffer: 33k'); recorded compactions of 2.1.39 and 2.1.226 at 167,009-167,094 on 200k"
)
_CODEX_MODELS = (
    "openai/codex codex-rs/protocol/src/openai_models.rs; codex-rs/core/models.json @ 21dac7d7"
)
_CODEX_HISTORY = "openai/codex codex-rs/core/src/context_manager/history.rs (get_total_token_usage)"
_OPENCODE_OVERFLOW = (
    "sst/opencode packages/opencode/src/session/overflow.ts (isOverflow) @ 08f74b9b"
)
_PI_COMPACTION = (
    "badlogic/pi-mono packages/coding-agent/src/core/compaction/compaction.ts @ 83378aad "
    "(DEFAULT_COMPACTION_SETTINGS, shouldCompact)"
)

CONSTANTS: tuple[AgentConstant, ...] = (
    # --- Claude Code (closed source: documented behaviour and issue reports) -------------------
    AgentConstant("claude-code", "output_reserve_tokens", 32_000, None, "2.1.20", _CC_ISSUES_45K),
    AgentConstant("claude-code", "output_reserve_tokens", 20_000, "2.1.20", None, _CC_ISSUES_33K),
    AgentConstant("claude-code", "autocompact_buffer_tokens", 13_000, None, None, _CC_ISSUES_33K),
    # --- Codex ----------------------------------------------------------------------------------
    AgentConstant(
        "codex",
        "effective_window_percent",
        95,
        None,
        None,
        f"{_CODEX_MODELS} (effective_context_window_percent; the rollout's model_context_window)",
    ),
    AgentConstant(
        "codex", "auto_compact_ratio", 0.9, None, None, f"{_CODEX_MODELS} (context_window * 9 / 10)"
    ),
    AgentConstant(
        "codex",
        "tool_output_serialization_allowance",
        1.2,
        None,
        None,
        "openai/codex codex-rs/core/src/context_manager/history.rs (process_item: policy * 1.2)",
    ),
    AgentConstant(
        "codex",
        "reasoning_overhead_bytes",
        650,
        None,
        None,
        f"{_CODEX_HISTORY} (encrypted reasoning: len * 3/4 - 650 bytes, then bytes/4)",
    ),
    # --- opencode -------------------------------------------------------------------------------
    AgentConstant(
        "opencode",
        "output_token_max",
        32_000,
        None,
        None,
        f"{_OPENCODE_OVERFLOW} (OUTPUT_TOKEN_MAX)",
    ),
    AgentConstant(
        "opencode",
        "compaction_buffer_tokens",
        20_000,
        None,
        None,
        f"{_OPENCODE_OVERFLOW} (reserved)",
    ),
    # --- pi -------------------------------------------------------------------------------------
    AgentConstant("pi", "reserve_tokens", 16_384, None, None, _PI_COMPACTION),
    AgentConstant("pi", "keep_recent_tokens", 20_000, None, None, _PI_COMPACTION),
    # pi records no app version; its session format version tells the eras apart.
    AgentConstant(
        "pi",
        "checks_after_every_reply",
        1,
        None,
        "2",
        "badlogic/pi-mono packages/coding-agent src/tui/tui-renderer.ts (checkAutoCompaction on "
        "every assistant message_end; session format v1, late 2025)",
    ),
    AgentConstant(
        "pi",
        "checks_after_every_reply",
        0,
        "2",
        None,
        "badlogic/pi-mono packages/coding-agent/src/core/agent-session.ts @ 83378aad "
        "(_checkCompaction after agent_end and before each prompt; session format v2/v3)",
    ),
)


class UnknownConstant(LookupError):
    """No row of :data:`CONSTANTS` gives this constant for this agent."""


def constant(agent: str, name: str, version: str | None = None) -> AgentConstant:
    """The row that gives ``name`` for ``agent`` at ``version``.

    An unknown or unparseable version takes the newest row (the agent as it is documented now).
    """
    rows = [row for row in CONSTANTS if row.agent == agent and row.name == name]
    if not rows:
        raise UnknownConstant(f"no {name} for {agent}")
    if parse_version(version) is not None:
        for row in rows:
            if in_range(version, row.since, row.until):
                return row
    return max(rows, key=lambda row: parse_version(row.since) or ())


def value(agent: str, name: str, version: str | None = None) -> float:
    """:func:`constant`'s value."""
    return constant(agent, name, version).value
