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
    """``claude-code``, ``codex``, ``opencode``, ``pi``, ``gemini-cli`` or ``qwen-code``."""
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


_CC_NPM = "npm @anthropic-ai/claude-code"
_CC_RESERVE_UNCAPPED = (
    f"{_CC_NPM} 2.0.76, 2.1.4, 2.1.19 and 2.1.20 cli.js (the auto-compact threshold: effective "
    "window = window - maxOutputTokens(model), where maxOutputTokens = min(CLAUDE_CODE_MAX_OUTPUT_"
    "TOKENS, default 32,000, the model's own maximum); diffed against 2.1.21"
)
_CC_RESERVE_CAPPED = (
    f"{_CC_NPM} 2.1.21 cli.js (effective window = window - min(maxOutputTokens(model), 20,000): "
    "the cap first appears in 2.1.21, not in 2.1.20); the same in 2.1.39 and 2.1.226"
)
_CC_BUFFER = (
    f"{_CC_NPM} 2.0.76, 2.0.77, 2.1.0-2.1.4, 2.1.19-2.1.21, 2.1.39 and 2.1.226 (threshold = effective "
    "window - 13,000, or CLAUDE_AUTOCOMPACT_PCT_OVERRIDE percent of it when lower)"
)
_CC_COUNT_USAGE = (
    f"{_CC_NPM} 2.0.76-2.1.1 cli.js (the check compares the last response's usage: input + cache "
    "creation + cache read + output, nothing for the messages added since)"
)
_CC_COUNT_ESTIMATE = (
    f"{_CC_NPM} 2.1.2 cli.js, diffed against 2.1.1 (the last response's usage with its output, plus "
    "an estimate of the messages added since: text and tool results by length, 2,000 per image); "
    "the same in 2.1.4, 2.1.21, 2.1.39"
)
_CODEX_MODELS = (
    "openai/codex codex-rs/protocol/src/openai_models.rs; codex-rs/core/models.json @ 21dac7d7"
)
_CODEX_HISTORY = "openai/codex codex-rs/core/src/context_manager/history.rs (get_total_token_usage)"
_OPENCODE_OVERFLOW = (
    "sst/opencode packages/opencode/src/session/overflow.ts (isOverflow) @ 08f74b9b"
)
_COPILOT_SDK = (
    "github/copilot-sdk InfiniteSessionConfig (nodejs/src/types.ts; docs.rs github-copilot-sdk "
    "types::InfiniteSessionConfig; copilot-sdk-java InfiniteSessionConfig): 'Default: 0.80' / "
    "'Default: 0.95'"
)
_PI_COMPACTION = (
    "badlogic/pi-mono packages/coding-agent/src/core/compaction/compaction.ts @ 83378aad "
    "(DEFAULT_COMPACTION_SETTINGS, shouldCompact)"
)

_GEMINI_COMPRESSION = (
    "google-gemini/gemini-cli packages/core/src/services/chatCompressionService.ts @ 02b2885c"
)
_GEMINI_LIMITS = (
    "google-gemini/gemini-cli packages/core/src/core/tokenLimits.ts @ 04fbf507 (tokenLimit: "
    "every listed model and DEFAULT_TOKEN_LIMIT)"
)
_QWEN_COMPRESSION = (
    "QwenLM/qwen-code packages/core/src/services/chatCompressionService.ts @ 00b481a3 "
    "(computeThresholds; before PR #4345 a single ratio COMPRESSION_TOKEN_THRESHOLD = 0.7 with "
    "the newest 30% kept, a release this table cannot date)"
)
_CC_RECOUNT_NONE = (
    f"{_CC_NPM} 2.1.68 cli.js and before (the estimate starts after the last message with usage)"
)
_CC_RECOUNT_TEXT = (
    f"{_CC_NPM} 2.1.69 cli.js, diffed against 2.1.68 (the estimate starts after the *first* "
    "transcript line of the last response, so its later blocks are counted again; the estimate "
    "counts text, images and tool results only, through 2.1.73)"
)
_CC_RECOUNT_ALL = (
    f"{_CC_NPM} 2.1.74 cli.js, diffed against 2.1.73 (tool_use blocks now count as name + JSON "
    "of the input, thinking by its text); the same in 2.1.75, 2.1.112 and 2.1.226"
)
_CC_BASH = (
    f"{_CC_NPM} 2.1.39 cli.js (BASH_MAX_OUTPUT_LENGTH: default 30,000 characters, capped at "
    "150,000)"
)
_CODEX_COMPACT = "openai/codex codex-rs/core/src/compact.rs (COMPACT_USER_MESSAGE_MAX_TOKENS)"
_CODEX_TRUNCATION = (
    "openai/codex codex-rs/core/src/context_manager/history.rs and truncate.rs (tool output "
    "limit of 10,000 tokens at 4 bytes a token, times the serialisation allowance 1.2)"
)
_CODEX_TRUNCATE_RS = "openai/codex codex-rs/utils/string (APPROX_BYTES_PER_TOKEN: ceil(bytes / 4))"
_CODEX_IMAGES = (
    f"{_CODEX_HISTORY} (RESIZED_IMAGE_BYTES_ESTIMATE; detail 'original': 32-pixel patches, at most "
    "10,000; openai/codex#12717)"
)
_CODEX_REDACTED = (
    "not Codex's: ctxscope's own fit on unredacted Codex rollouts (encrypted length = 922 + 6.3 x "
    "reasoning tokens; the fit's notes are not in this repository), used only where a shared file "
    "redacted the encrypted reasoning; never fitted to the compactions scored"
)
_OPENCODE_TRUNCATE = "sst/opencode packages/opencode/src/tool/truncation.ts (MAX_LINES, MAX_BYTES)"
_OPENCODE_COMPACTION = (
    "sst/opencode packages/opencode/src/session/compaction.ts (PRUNE_PROTECT, PRUNE_MINIMUM, "
    "DEFAULT_TAIL_TURNS)"
)
_PI_TRUNCATE = (
    "badlogic/pi-mono packages/coding-agent/src/core/tools/truncate.ts (DEFAULT_MAX_LINES, "
    "DEFAULT_MAX_BYTES)"
)
_PI_SUMMARY = (
    "badlogic/pi-mono packages/coding-agent/src/core/compaction/compaction.ts (generateSummary: "
    "maxTokens = floor(0.8 x reserveTokens) = 13,107 for the default 16,384; findCutPoint keeps "
    "whole entries back to keepRecentTokens, possibly a single one)"
)

CONSTANTS: tuple[AgentConstant, ...] = (
    # --- Claude Code (its published npm package: the shipped cli.js of each version) ------------
    AgentConstant(
        "claude-code", "output_reserve_tokens", 32_000, None, "2.1.21", _CC_RESERVE_UNCAPPED
    ),
    AgentConstant(
        "claude-code", "output_reserve_tokens", 20_000, "2.1.21", None, _CC_RESERVE_CAPPED
    ),
    AgentConstant("claude-code", "autocompact_buffer_tokens", 13_000, None, None, _CC_BUFFER),
    AgentConstant("claude-code", "counts_added_messages", 0, None, "2.1.2", _CC_COUNT_USAGE),
    AgentConstant("claude-code", "counts_added_messages", 1, "2.1.2", None, _CC_COUNT_ESTIMATE),
    AgentConstant("claude-code", "recounts_reply_blocks", 0, None, "2.1.69", _CC_RECOUNT_NONE),
    AgentConstant("claude-code", "recounts_reply_blocks", 1, "2.1.69", "2.1.74", _CC_RECOUNT_TEXT),
    AgentConstant("claude-code", "recounts_reply_blocks", 2, "2.1.74", None, _CC_RECOUNT_ALL),
    AgentConstant("claude-code", "bash_output_max_chars", 30_000, None, None, _CC_BASH),
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
    AgentConstant("codex", "tool_output_max_bytes", 48_000, None, None, _CODEX_TRUNCATION),
    AgentConstant("codex", "approx_bytes_per_token", 4, None, None, _CODEX_TRUNCATE_RS),
    AgentConstant("codex", "default_truncation_tokens", 10_000, None, None, _CODEX_MODELS),
    AgentConstant("codex", "resized_image_bytes", 7_373, None, None, _CODEX_IMAGES),
    AgentConstant("codex", "original_image_patch_px", 32, None, None, _CODEX_IMAGES),
    AgentConstant("codex", "original_image_max_patches", 10_000, None, None, _CODEX_IMAGES),
    AgentConstant("codex", "redacted_reasoning_base_chars", 922, None, None, _CODEX_REDACTED),
    AgentConstant("codex", "redacted_reasoning_chars_per_token", 6.3, None, None, _CODEX_REDACTED),
    AgentConstant("codex", "user_message_budget_tokens", 20_000, None, None, _CODEX_COMPACT),
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
    # --- Gemini CLI -----------------------------------------------------------------------------
    AgentConstant("gemini-cli", "token_limit", 1_048_576, None, None, _GEMINI_LIMITS),
    AgentConstant(
        "gemini-cli",
        "compression_threshold",
        0.5,
        None,
        None,
        f"{_GEMINI_COMPRESSION} (DEFAULT_COMPRESSION_TOKEN_THRESHOLD: compress when the last "
        "prompt >= threshold x tokenLimit(model))",
    ),
    AgentConstant(
        "gemini-cli",
        "preserve_fraction",
        0.3,
        None,
        None,
        f"{_GEMINI_COMPRESSION} (COMPRESSION_PRESERVE_THRESHOLD; findCompressSplitPoint cuts at "
        "a user message that is not a function response)",
    ),
    AgentConstant(
        "gemini-cli",
        "function_response_budget_tokens",
        50_000,
        None,
        None,
        f"{_GEMINI_COMPRESSION} (COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET: older tool outputs "
        "beyond the newest 50,000 tokens are cut, truncateHistoryToBudget)",
    ),
    # --- Qwen Code ------------------------------------------------------------------------------
    AgentConstant(
        "qwen-code",
        "auto_compact_ratio",
        0.85,
        None,
        None,
        f"{_QWEN_COMPRESSION} (DEFAULT_PCT)",
    ),
    AgentConstant(
        "qwen-code",
        "summary_reserve_tokens",
        20_000,
        None,
        None,
        f"{_QWEN_COMPRESSION} (SUMMARY_RESERVE = COMPACT_MAX_OUTPUT_TOKENS)",
    ),
    AgentConstant(
        "qwen-code",
        "autocompact_buffer_tokens",
        13_000,
        None,
        None,
        f"{_QWEN_COMPRESSION} (AUTOCOMPACT_BUFFER: auto = min(pct x window, window - reserve "
        "- buffer) when that ceiling is positive)",
    ),
    AgentConstant("opencode", "tool_output_max_lines", 2_000, None, None, _OPENCODE_TRUNCATE),
    AgentConstant("opencode", "tool_output_max_bytes", 51_200, None, None, _OPENCODE_TRUNCATE),
    AgentConstant("opencode", "prune_protect_tokens", 40_000, None, None, _OPENCODE_COMPACTION),
    AgentConstant("opencode", "prune_minimum_tokens", 20_000, None, None, _OPENCODE_COMPACTION),
    AgentConstant("opencode", "tail_turns", 2, None, None, _OPENCODE_COMPACTION),
    # --- Copilot CLI (closed source: its SDK's documented defaults) ------------------------------
    AgentConstant("copilot-cli", "background_compaction_ratio", 0.8, None, None, _COPILOT_SDK),
    AgentConstant("copilot-cli", "buffer_exhaustion_ratio", 0.95, None, None, _COPILOT_SDK),
    # --- pi -------------------------------------------------------------------------------------
    AgentConstant("pi", "tool_output_max_lines", 2_000, None, None, _PI_TRUNCATE),
    AgentConstant("pi", "tool_output_max_bytes", 51_200, None, None, _PI_TRUNCATE),
    AgentConstant("pi", "summary_max_tokens", 13_107, None, None, _PI_SUMMARY),
    AgentConstant("pi", "min_kept_messages", 1, None, None, _PI_SUMMARY),
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
