"""Policies: every limit of every context-management algorithm, in one model.

A :class:`Policy` is what the replay engine runs and what the TUI's policy panel edits. The
docstring under each field is its help text (read by :func:`core.model.fastmodel.documented`), so the panel
and ``ctxscope policy show`` explain each limit in the same words.

Presets (:data:`PRESETS`): ``seed`` (the numbers of the seed documents), ``opencode`` (2026
defaults), ``codex``, ``pi``, ``claude-code`` (observed behaviour), ``gemini-cli`` and
``qwen-code`` (from their source, :mod:`core.agents.constants`), ``copilot-cli`` (its SDK's
documented thresholds). Policies load from and save
to TOML; a bad file raises :class:`PolicyError` naming the file and the field.
"""

# (No ``from __future__ import annotations`` here: the models' field annotations are evaluated
# once by the class body, not compiled and evaluated from strings by pydantic for each field as
# each class is created; tests/unit/test_model_annotations.py holds it.)

import math
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from annotated_types import Ge, Gt, Le
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.agents.constants import value as agent_value
from core.formats.file_kind import open_regular, unreadable_reason
from core.model.tokens import validate_estimator

Direction = Literal["head", "tail", "middle"]
ThresholdRule = Literal["pi", "opencode", "codex", "claude-code", "gemini-cli", "qwen-code"]
ReplyRecount = Literal["none", "text", "all"]
CompactionStrategy = Literal["tail", "summary-only", "codex"]
SummaryTemplate = Literal["t12", "anchored", "pi", "state-snapshot"]
SplitMode = Literal["messages", "turns", "history-share"]

DEFAULT_HINT = (
    "This tool output was too long, so only part of it is shown here. The complete output "
    "is saved at {path}. Search that file, or read it a range of lines at a time, for the "
    "parts you still need; do not read the whole file back into the conversation."
)
DEFAULT_SUBAGENT_HINT = (
    "This tool output was too long, so only part of it is shown here. The complete output "
    "is saved at {path}. Hand that file to a sub-agent and ask it to search or read the "
    "ranges you need and report back, instead of reading the whole file yourself."
)
DEFAULT_CONTINUATION = (
    "The earlier part of this conversation was condensed into the summary above. Carry on "
    "with the next step of the task if it is clear; if you are not sure how to proceed, "
    "stop and ask."
)
SHELL_TOOLS = ["bash", "Bash", "shell", "exec_command", "local_shell", "unified_exec"]


class _Section(BaseModel):
    model_config = ConfigDict(
        extra="forbid", validate_assignment=True, defer_build=True, protected_namespaces=()
    )  # (no protected namespaces: as core.model.fastmodel.Documented's)

    def key(self, include: Collection[str] | None = None) -> tuple[Any, ...]:
        """The values of this section's fields (or of those named in ``include``), in field
        order, as a hashable tuple: two sections of one class have the same key exactly when
        every field holds the same value of the same type, i.e. when their
        ``model_dump_json(include=...)`` is the same. The replay's caches key on it: it needs no
        serialiser, so a command that only runs presets never builds the policy's schema."""
        values = self.__dict__
        return tuple(
            _key_of(values[name])
            for name in type(self).model_fields
            if include is None or name in include
        )


def _key_of(value: Any) -> Any:
    """A field's value as part of :meth:`_Section.key` (lists and dicts as tuples, in their
    order; a float by its exact text, so ``1.0`` is not the int ``1`` and ``-0.0`` not ``0.0``)."""
    if isinstance(value, _Section):
        return value.key()
    if isinstance(value, list):
        return tuple([_key_of(item) for item in value])
    if isinstance(value, dict):
        return tuple([(name, _key_of(item)) for name, item in value.items()])
    if isinstance(value, float):
        return (float, value.hex())
    return value


class ToolLimits(_Section):
    """Per-tool overrides of the truncation limits; unset fields use the policy's values."""

    enabled: bool | None = None
    """Truncate this tool's output at all."""
    max_lines: Annotated[int | None, Ge(0)] = None
    """Most lines kept for this tool (0: no line limit)."""
    max_bytes: Annotated[int | None, Ge(1)] = None
    """Most UTF-8 bytes kept for this tool."""
    direction: Direction | None = None
    """Which part of this tool's output is kept."""


class TruncationPolicy(_Section):
    """T15: cap each tool output, keep a preview, spill the full output to disk."""

    enabled: bool = True
    """Truncate tool outputs at all."""
    max_lines: Annotated[int, Ge(0)] = 2000
    """Most lines of a tool output the model is shown (0: no line limit)."""
    max_bytes: Annotated[int, Ge(1)] = 51200
    """Most UTF-8 bytes of a tool output the model is shown."""
    direction: Direction = "head"
    """Which part is kept: the head, the tail, or both ends with a marker in the middle."""
    tail_tools: list[str] = Field(default_factory=lambda: list(SHELL_TOOLS))
    """Tools whose output keeps its tail (the end of a shell log holds the result and the error)."""
    middle_unit: Literal["tokens", "chars"] = "tokens"
    """Unit of the middle marker: ``…N tokens truncated…`` or ``…N chars truncated…`` (Codex)."""
    per_tool: dict[str, ToolLimits] = Field(default_factory=dict)
    """Overrides by tool name."""
    hint_template: str = DEFAULT_HINT
    """Text added to a truncated output; ``{path}`` is the spill file."""
    subagent_hint_template: str = DEFAULT_SUBAGENT_HINT
    """Hint used when the agent can delegate to a sub-agent; ``{path}`` is the spill file."""
    use_subagent_hint: bool = False
    """The agent has a sub-agent (task) tool, so the hint asks it to delegate."""
    spill_dir: str | None = None
    """Folder for full outputs (None: ``$XDG_DATA_HOME/ctxscope/tool-output``)."""
    retention_days: Annotated[float, Gt(0)] = 7.0
    """Spill files older than this are deleted (only files ctxscope wrote)."""
    respect_tool_truncation: bool = True
    """Skip outputs a tool already truncated itself (opencode ``metadata.truncated``)."""

    def limits_for(self, tool_name: str | None) -> tuple[bool, int, int, Direction]:
        """``(enabled, max_lines, max_bytes, direction)`` for one tool, overrides applied (0 lines: no limit)."""
        direction: Direction = self.direction
        if direction == "head" and tool_name in self.tail_tools:
            direction = "tail"
        override = self.per_tool.get(tool_name or "")
        if override is None:
            return self.enabled, self.max_lines, self.max_bytes, direction
        return (
            self.enabled if override.enabled is None else override.enabled,
            self.max_lines if override.max_lines is None else override.max_lines,
            self.max_bytes if override.max_bytes is None else override.max_bytes,
            direction if override.direction is None else override.direction,
        )


class PruningPolicy(_Section):
    """T9: replace old tool outputs with a placeholder before compacting."""

    enabled: bool = True
    """Prune old tool outputs before compaction."""
    protected_tools: list[str] = Field(default_factory=lambda: ["skill"])
    """Tools whose output is never pruned (a skill's output is the agent's instructions)."""
    protect_turns: Annotated[int, Ge(0)] = 2
    """The last N user turns are never pruned (the skip boundary)."""
    placeholder: str = "<tool-output-compacted />"
    """Text that replaces a pruned output."""
    budget_rule: bool = False
    """opencode's rule: keep the newest ``protect_tokens`` of tool output, prune only if it frees ``minimum_tokens``."""
    protect_tokens: Annotated[int, Ge(0)] = 40000
    """With the budget rule: newest tool-output tokens that are always kept."""
    minimum_tokens: Annotated[int, Ge(0)] = 20000
    """With the budget rule: prune only when at least this many tokens are freed."""


class SplitPolicy(_Section):
    """T8: where the kept tail starts; everything before it (the head) is summarised."""

    mode: SplitMode = "messages"
    """``messages``: walk back message by message; ``turns``: keep whole recent turns (opencode 2026); ``history-share``: keep the newest ``tail_ratio`` of the history, cut at a user message (Gemini CLI)."""
    tail_budget_tokens: Annotated[int | None, Ge(0)] = None
    """Fixed tail budget; None derives it from the window (ratio, clamped to min..max)."""
    tail_ratio: Annotated[float, Ge(0), Le(1)] = 0.25
    """Share of the usable window (window - reserve) kept as tail; in ``history-share`` mode, share of the history itself."""
    tail_min_tokens: Annotated[int, Ge(0)] = 2000
    """Lower clamp of the derived tail budget."""
    tail_max_tokens: Annotated[int, Ge(0)] = 8000
    """Upper clamp of the derived tail budget."""
    min_tail_messages: Annotated[int, Ge(1)] = 2
    """The tail holds at least this many messages (messages mode)."""
    tail_turns: Annotated[int, Ge(0)] = 2
    """Whole turns kept (turns mode); the turn that does not fit keeps its fitting suffix."""

    def tail_budget(self, usable_tokens: int) -> int:
        """Tail budget for a usable window: ``min(max, max(min, floor(usable * ratio)))``."""
        if self.tail_budget_tokens is not None:
            return self.tail_budget_tokens
        derived = math.floor(max(usable_tokens, 0) * self.tail_ratio)
        return min(self.tail_max_tokens, max(self.tail_min_tokens, derived))


class CompactionPolicy(_Section):
    """T7/T8/T11/T12: when compaction fires, what it keeps, and how the head is summarised."""

    auto: bool = True
    """Compact automatically when the threshold is crossed."""
    threshold_rule: ThresholdRule = "opencode"
    """``pi``: tokens > window - reserve; ``opencode``: tokens >= usable; ``codex`` and ``gemini-cli``: tokens >= ratio x window; ``claude-code``: tokens >= window - min(output limit, reserve) - buffer; ``qwen-code``: tokens >= min(ratio x window, window - reserve - buffer)."""
    reserve_tokens: Annotated[int, Ge(0)] = 20000
    """Tokens kept free below the window (pi reserve, opencode ``reserved``, Claude Code's reserve for the summary's output); also sets usable = window - reserve."""
    autocompact_buffer_tokens: Annotated[int, Ge(0)] = 13000
    """claude-code rule: the buffer kept below the window on top of the reserve."""
    output_token_max: Annotated[int, Ge(1)] = 32000
    """opencode: the model's output limit is capped at this (``OUTPUT_TOKEN_MAX``)."""
    codex_ratio: Annotated[float, Gt(0), Le(1)] = 0.9
    """codex, gemini-cli and qwen-code rules: compact at this share of the window."""
    auto_compact_token_limit: Annotated[int | None, Ge(1)] = None
    """An explicit threshold that replaces the rule's (Codex ``model_auto_compact_token_limit``; the threshold inferred from a recording)."""
    project_after_tool_results: bool = True
    """Check the projected context (last usage + new messages) after each tool result (phase 2)."""
    check_before_each_call: bool = True
    """Check before every model call inside a turn, not only at the end of a turn."""
    turn_start_check_sees_prompt: bool = True
    """The check before a turn's first call counts the user's new message (Codex checks before recording it)."""
    use_agent_estimates: bool = False
    """Project with the recording agent's own size estimates where the session has them (Codex: bytes/4 of each item)."""
    recount_reply_blocks: ReplyRecount = "none"
    """Add to the checked figure the blocks of the last reply after its first one, though its usage already holds them (Claude Code walks back to a response's first block: ``text`` from 2.1.69, ``all`` with thinking and tool calls from 2.1.74)."""
    count_earlier_reasoning: bool = False
    """Add the estimated encrypted reasoning of earlier turns to the checked figure (Codex with ChatGPT sign-in)."""
    overflow_recovery: bool = True
    """A call that overflowed triggers compaction and one retry (phase 3)."""
    strategy: CompactionStrategy = "tail"
    """``tail``: summarise the head, keep the tail; ``summary-only``: summarise everything; ``codex``: keep recent user messages + summary."""
    template: SummaryTemplate = "t12"
    """Summary template: ``t12`` (five sections), ``anchored`` (update-in-place), ``pi`` (six sections), ``state-snapshot`` (Gemini CLI's and Qwen Code's XML snapshot)."""
    head_tool_output_max_chars: Annotated[int, Ge(0)] = 2000
    """Tool outputs in the summary request are cut to this many characters."""
    summary_max_tokens: Annotated[int, Ge(1)] = 4096
    """Most tokens the summary may take."""
    user_message_budget_tokens: Annotated[int, Ge(0)] = 20000
    """codex strategy: tokens of recent user messages kept beside the summary."""
    max_head_drops: Annotated[int, Ge(0)] = 16
    """When the summary request itself overflows, drop up to this many oldest head messages."""
    continuation: bool = True
    """After an automatic compaction, add a synthetic user message asking the agent to go on (T11)."""
    continuation_text: str = DEFAULT_CONTINUATION
    """The text of that message."""


class LLMConfig(_Section):
    """The model that writes summaries. API keys are read from the environment, never stored."""

    provider: Literal["mock", "openai"] = "mock"
    """``mock``: offline and deterministic; ``openai``: any OpenAI-compatible endpoint."""
    base_url: str | None = None
    """Endpoint, e.g. ``http://127.0.0.1:8000/v1``."""
    model: str | None = None
    """Model name sent to the endpoint."""
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the API key (the key itself is never saved)."""
    temperature: Annotated[float, Ge(0), Le(2)] = 0.0
    """Sampling temperature of summary requests."""
    max_tokens: Annotated[int | None, Ge(1)] = None
    """Cap on the summary's length (None: the compaction policy's ``summary_max_tokens``)."""
    timeout_s: Annotated[float, Gt(0)] = 60.0
    """Deadline of one summary request in seconds: connecting, the first byte and the whole
    answer, retries and their waits included. A server that never answers, or drips, costs at
    most this much per compaction."""
    max_retries: Annotated[int, Ge(0)] = 3
    """Retries on 429 and 5xx, with exponential backoff (honouring Retry-After), within the
    deadline."""
    max_answer_bytes: Annotated[int, Ge(1024)] = 16 * 1024 * 1024
    """Most bytes an answer may take as it arrives (streamed or not); a longer one fails the
    request. A summary needs far less: this stops a runaway server, not a long summary."""
    max_consecutive_failures: Annotated[int, Ge(1)] = 3
    """After this many summary requests in a row have failed, the run stops calling the LLM:
    its remaining compactions fail at once, saying so."""
    first_byte_timeout_s: Annotated[float, Gt(0)] = 10.0
    """A streamed answer's headers must arrive within this many seconds of the request (an
    endpoint that accepts and never answers, or sends headers without end, fails here)."""
    stall_timeout_s: Annotated[float, Gt(0)] = 10.0
    """While a streamed answer arrives, each line of it (an event, a keep-alive) must come within
    this many seconds of the one before (a stream that stalls or drips fails here); an answer not
    streamed must not go this long without new bytes once its headers came."""
    max_failing_s: Annotated[float, Gt(0)] = 30.0
    """The run's budget for failing requests: no request is given more than what is left of it,
    and once the summary requests that failed in a row have taken it together the run stops
    calling the LLM. A dead endpoint, streamed or not, is given up on within it (30 s by
    default)."""
    stream: bool = True
    """Stream the summary as it is written."""


class Policy(_Section):
    """Every limit of one agent's context management."""

    name: str = "custom"
    """Preset or file name."""
    description: str = ""
    """What this policy models."""
    estimator: str = "chars/4"
    """How message tokens are estimated: ``chars/4``, ``bytes/4``, ``ceil(chars/4)`` or ``tiktoken:<encoding>``."""
    context_window: Annotated[int | None, Ge(1)] = None
    """Override the session's context window (None: use the session's)."""
    truncation: TruncationPolicy = Field(default_factory=TruncationPolicy)
    pruning: PruningPolicy = Field(default_factory=PruningPolicy)
    split: SplitPolicy = Field(default_factory=SplitPolicy)
    compaction: CompactionPolicy = Field(default_factory=CompactionPolicy)
    llm: LLMConfig = Field(default_factory=LLMConfig)

    @field_validator("estimator")
    @classmethod
    def _known_estimator(cls, value: str) -> str:
        return validate_estimator(value)

    def by_name(self) -> dict[str, Any]:
        """Every field by dotted name (``truncation.max_lines``; a section's ``per_tool``
        overrides as one value), each as a part of :meth:`key` (immutable: a later edit of the
        policy leaves it as it was)."""
        values: dict[str, Any] = {}
        for name, value in self.__dict__.items():
            if isinstance(value, _Section):
                for field, item in value.__dict__.items():
                    values[f"{name}.{field}"] = _key_of(item)
            else:
                values[name] = _key_of(value)
        return values

    def to_toml(self) -> str:
        """This policy as TOML (readable by :func:`load_policy`)."""
        return dumps_toml(self.model_dump(mode="json", exclude_none=True))


def _fact(agent: str, name: str) -> int:
    """A whole-number constant of ``agent`` as documented now (:mod:`core.agents.constants`); a
    session's own version is applied by :func:`preset_for`."""
    return int(agent_value(agent, name))


def _preset(**fields: Any) -> Policy:
    """A built-in policy from our own known-good values, built without validation (a policy
    the user writes or edits is validated: :func:`policy_from_dict`, and every assignment to a
    field); a section it leaves out has its defaults. Each preset equals its validated copy
    (tests/unit/test_policy_keys.py)."""
    for name, section in _SECTIONS.items():
        if name not in fields:
            fields[name] = section.model_construct()
    return Policy.model_construct(**fields)


_SECTIONS: dict[str, type[_Section]] = {
    "truncation": TruncationPolicy,
    "pruning": PruningPolicy,
    "split": SplitPolicy,
    "compaction": CompactionPolicy,
    "llm": LLMConfig,
}
"""The sections of a :class:`Policy` by field name."""


def _seed() -> Policy:
    return _preset(
        name="seed",
        description="The numbers of the seed documents (T7-T15): 2000 lines / 50,000 bytes keeping the tail, "
        "skill protected, last 2 turns kept, tail 25% of usable clamped to 2k-8k, >= usable.",
        estimator="chars/4",
        truncation=TruncationPolicy.model_construct(
            max_lines=2000, max_bytes=50000, direction="tail"
        ),
        pruning=PruningPolicy.model_construct(placeholder="<tool-output-compacted />"),
        split=SplitPolicy.model_construct(mode="messages"),
        compaction=CompactionPolicy.model_construct(
            threshold_rule="opencode", reserve_tokens=20000
        ),
    )


def _opencode() -> Policy:
    return _preset(
        name="opencode",
        description="opencode 2026 defaults: head truncation at 2000 lines / 50 KiB (tail for bash), "
        "pruning off unless enabled (budget rule 40k/20k), last 2 turns within 2k-8k, anchored summary.",
        estimator="chars/4",
        truncation=TruncationPolicy.model_construct(
            max_lines=_fact("opencode", "tool_output_max_lines"),
            max_bytes=_fact("opencode", "tool_output_max_bytes"),
            direction="head",
            tail_tools=["bash"],
        ),
        pruning=PruningPolicy.model_construct(
            enabled=False,
            placeholder="[Old tool result content cleared]",
            budget_rule=True,
            protect_tokens=_fact("opencode", "prune_protect_tokens"),
            minimum_tokens=_fact("opencode", "prune_minimum_tokens"),
        ),
        split=SplitPolicy.model_construct(mode="turns", tail_turns=_fact("opencode", "tail_turns")),
        compaction=CompactionPolicy.model_construct(
            threshold_rule="opencode",
            reserve_tokens=_fact("opencode", "compaction_buffer_tokens"),
            output_token_max=_fact("opencode", "output_token_max"),
            template="anchored",
            # opencode compares the last step's recorded tokens at each step's end and before
            # the next loop step: no projection (packages/opencode/src/session/overflow.ts).
            project_after_tool_results=False,
        ),
    )


def _codex() -> Policy:
    return _preset(
        name="codex",
        description="Codex: tool outputs cut in the middle to 10k tokens (x1.2 serialisation allowance), "
        "compaction at 90% of the window keeping recent user messages (20k) and a summary.",
        estimator="bytes/4",
        truncation=TruncationPolicy.model_construct(
            max_lines=0,
            max_bytes=_fact("codex", "tool_output_max_bytes"),
            direction="middle",
            middle_unit="tokens",
            tail_tools=[],
            hint_template="",  # Codex cuts inline and keeps no copy: the marker is all the model sees
        ),
        pruning=PruningPolicy.model_construct(enabled=False),
        split=SplitPolicy.model_construct(mode="messages"),
        compaction=CompactionPolicy.model_construct(
            threshold_rule="codex",
            codex_ratio=float(agent_value("codex", "auto_compact_ratio")),
            reserve_tokens=0,
            strategy="codex",
            user_message_budget_tokens=_fact("codex", "user_message_budget_tokens"),
            # Codex checks after each sampling request once its tool outputs are recorded, on
            # the last total plus its own bytes/4 estimate of what came since and of the
            # encrypted reasoning of earlier turns; the turn-start check runs before the user's
            # new message is recorded (codex-rs core/src/session/turn.rs, history.rs).
            project_after_tool_results=True,
            turn_start_check_sees_prompt=False,
            use_agent_estimates=True,
            count_earlier_reasoning=True,
            continuation=False,
        ),
    )


def _pi() -> Policy:
    return _preset(
        name="pi",
        description="pi: 2000 lines / 50 KiB (head, tail for bash), compaction when tokens > window - 16384, "
        "keeping the last 20,000 estimated tokens at a turn-safe cut, six-section summary.",
        estimator="ceil(chars/4)",
        truncation=TruncationPolicy.model_construct(
            max_lines=_fact("pi", "tool_output_max_lines"),
            max_bytes=_fact("pi", "tool_output_max_bytes"),
            direction="head",
            tail_tools=["bash"],
        ),
        pruning=PruningPolicy.model_construct(enabled=False),
        split=SplitPolicy.model_construct(
            mode="messages",
            tail_budget_tokens=_fact("pi", "keep_recent_tokens"),
            min_tail_messages=_fact("pi", "min_kept_messages"),
        ),
        compaction=CompactionPolicy.model_construct(
            threshold_rule="pi",
            reserve_tokens=_fact("pi", "reserve_tokens"),
            template="pi",
            summary_max_tokens=_fact("pi", "summary_max_tokens"),
            project_after_tool_results=False,
            check_before_each_call=False,
            continuation=False,
        ),
    )


def _claude_code() -> Policy:
    return _preset(
        name="claude-code",
        description="Claude Code: Bash output capped at 30,000 characters (its other tools cap "
        "their own output), no pruning, the whole history summarised once the context reaches the "
        "window minus the summary's output reserve (20k; 32k before 2.1.21) and a 13k buffer "
        "(167k of a 200k window), checked before every request.",
        estimator="chars/4",
        truncation=TruncationPolicy.model_construct(
            enabled=False,
            max_lines=0,
            max_bytes=_fact("claude-code", "bash_output_max_chars"),
            tail_tools=[],
            per_tool={"Bash": ToolLimits.model_construct(enabled=True)},
        ),
        pruning=PruningPolicy.model_construct(enabled=False),
        split=SplitPolicy.model_construct(mode="messages"),
        compaction=CompactionPolicy.model_construct(
            threshold_rule="claude-code",
            reserve_tokens=_fact("claude-code", "output_reserve_tokens"),
            autocompact_buffer_tokens=_fact("claude-code", "autocompact_buffer_tokens"),
            strategy="summary-only",
            continuation=False,
        ),
    )


def _gemini_cli() -> Policy:
    return _preset(
        name="gemini-cli",
        description="Gemini CLI: compresses once the last prompt reaches half of the model's "
        "token limit (1,048,576), keeping the newest 30% of the history (cut at a user message) "
        "after a <state_snapshot> summary; tool outputs beyond the newest 50,000 tokens are cut "
        "first. Its tool-output truncation is not modelled.",
        estimator="chars/4",
        truncation=TruncationPolicy.model_construct(enabled=False),
        pruning=PruningPolicy.model_construct(
            enabled=True,
            protected_tools=[],
            protect_turns=0,
            budget_rule=True,
            protect_tokens=_fact("gemini-cli", "function_response_budget_tokens"),
            minimum_tokens=0,
        ),
        split=SplitPolicy.model_construct(
            mode="history-share",
            tail_ratio=float(agent_value("gemini-cli", "preserve_fraction")),
            min_tail_messages=1,
        ),
        compaction=CompactionPolicy.model_construct(
            threshold_rule="gemini-cli",
            codex_ratio=float(agent_value("gemini-cli", "compression_threshold")),
            reserve_tokens=0,
            template="state-snapshot",
            # Gemini CLI compares the last recorded prompt before each request it sends (a
            # turn's first and every tool-result continuation), without estimating what was
            # added since (packages/core/src/core/client.ts, chatCompressionService.ts).
            project_after_tool_results=False,
            turn_start_check_sees_prompt=False,
            continuation=False,
        ),
    )


def _qwen_code() -> Policy:
    return _preset(
        name="qwen-code",
        description="Qwen Code: compacts the whole history into a <state_snapshot> once the "
        "prompt (the last one plus an estimate of what was added) reaches min(85% of the window, "
        "window - 20,000 - 13,000), before the request.",
        estimator="chars/4",
        truncation=TruncationPolicy.model_construct(enabled=False),
        pruning=PruningPolicy.model_construct(enabled=False),
        split=SplitPolicy.model_construct(mode="messages"),
        compaction=CompactionPolicy.model_construct(
            threshold_rule="qwen-code",
            codex_ratio=float(agent_value("qwen-code", "auto_compact_ratio")),
            reserve_tokens=_fact("qwen-code", "summary_reserve_tokens"),
            autocompact_buffer_tokens=_fact("qwen-code", "autocompact_buffer_tokens"),
            strategy="summary-only",
            template="state-snapshot",
            summary_max_tokens=_fact("qwen-code", "summary_reserve_tokens"),
            project_after_tool_results=True,
            continuation=False,
        ),
    )


def _copilot_cli() -> Policy:
    background = agent_value("copilot-cli", "background_compaction_ratio", None)
    blocking = agent_value("copilot-cli", "buffer_exhaustion_ratio", None)
    return _preset(
        name="copilot-cli",
        description=f"Copilot CLI: compaction starts in the background at {background:.0%} of the "
        f"window and the session waits for it at {blocking:.0%} (its SDK's documented defaults); "
        "the history is summarised. Its files record no prompt size: every figure is estimated.",
        estimator="chars/4",
        truncation=TruncationPolicy.model_construct(enabled=False),
        pruning=PruningPolicy.model_construct(enabled=False),
        split=SplitPolicy.model_construct(mode="messages"),
        compaction=CompactionPolicy.model_construct(
            threshold_rule="codex",
            codex_ratio=float(background),
            reserve_tokens=0,
            strategy="summary-only",
            continuation=False,
        ),
    )


_BUILDERS: dict[str, Callable[[], Policy]] = {
    "seed": _seed,
    "opencode": _opencode,
    "codex": _codex,
    "pi": _pi,
    "claude-code": _claude_code,
    "gemini-cli": _gemini_cli,
    "qwen-code": _qwen_code,
    "copilot-cli": _copilot_cli,
}
"""Each built-in policy's maker by its name (:func:`get_preset` makes a fresh one, from values
known good: no validation, and no copy of every field)."""


class _Presets(Mapping[str, Policy]):
    """The built-in policies by name, each made the first time it is asked for: a command
    runs one preset at most, and :func:`get_preset` makes its own copy (building all eight
    was a fifth of this module's import)."""

    def __init__(self, builders: dict[str, Callable[[], Policy]]) -> None:
        self._builders = builders
        self._made: dict[str, Policy] = {}

    def __getitem__(self, name: str) -> Policy:
        made = self._made.get(name)
        if made is None:
            made = self._made[name] = self._builders[name]()
        return made

    def __contains__(self, name: object) -> bool:
        return name in self._builders

    def __iter__(self) -> Iterator[str]:
        return iter(self._builders)

    def __len__(self) -> int:
        return len(self._builders)


PRESETS: Mapping[str, Policy] = _Presets(_BUILDERS)
"""The built-in policies by name (a read-only mapping, in the order of :data:`_BUILDERS`)."""


class PolicyError(ValueError):
    """A policy that cannot be used; the message names the file and the field."""


def get_preset(name: str) -> Policy:
    """A fresh copy of a built-in policy."""
    try:
        build = _BUILDERS[name]
    except KeyError:
        raise PolicyError(f"unknown policy {name!r}; presets are: {', '.join(PRESETS)}") from None
    return build()


def preset_for(name: str, version: str | None = None) -> Policy:
    """The preset ``name`` as the agent behaves at ``version`` (its constants from
    :mod:`core.agents.constants`; an unknown version gets the agent as documented now).

    pi records no app version: ``version`` is then the session format version, which tells its
    eras apart.
    """
    policy = get_preset(name)
    changes = _version_changes(policy, version)
    if not changes:
        return policy
    own = changes.pop("", {})
    sections = {
        section: getattr(policy, section).model_copy(update=values)
        for section, values in changes.items()
    }
    return policy.model_copy(update={**own, **sections})


def _version_changes(preset: Policy, version: str | None) -> dict[str, dict[str, Any]]:
    """The fields of ``preset`` (a built-in policy, as :func:`get_preset` makes it) that its
    agent at ``version`` sets otherwise, by section (``""``: the policy's own fields). Values
    of each field's type, from :mod:`core.agents.constants`: set without validation."""
    name = preset.name

    def fact(constant: str) -> float:
        return agent_value(name, constant, version)

    if name == "claude-code":
        reserve = int(fact("output_reserve_tokens"))
        buffer = int(fact("autocompact_buffer_tokens"))
        recount = ("none", "text", "all")[int(fact("recounts_reply_blocks"))]
        description = (
            f"{preset.description} Version {version or 'unknown'}: compacts "
            f"{(reserve + buffer) // 1000}k below the window."
        )
        compaction = {
            "reserve_tokens": reserve,
            "autocompact_buffer_tokens": buffer,
            "project_after_tool_results": bool(fact("counts_added_messages")),
            "recount_reply_blocks": recount,
        }
        return {"compaction": compaction, "": {"description": description}}
    if name == "pi":
        return {"compaction": {"check_before_each_call": bool(fact("checks_after_every_reply"))}}
    if name == "gemini-cli":
        return {
            "compaction": {"codex_ratio": float(fact("compression_threshold"))},
            "split": {"tail_ratio": float(fact("preserve_fraction"))},
            "pruning": {"protect_tokens": int(fact("function_response_budget_tokens"))},
        }
    if name == "qwen-code":
        compaction = {
            "codex_ratio": float(fact("auto_compact_ratio")),
            "reserve_tokens": int(fact("summary_reserve_tokens")),
            "autocompact_buffer_tokens": int(fact("autocompact_buffer_tokens")),
        }
        return {"compaction": compaction}
    return {}


def _describe_validation(error: ValidationError, source: str) -> str:
    problems = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "(policy)"
        message = "unknown field" if item["type"] == "extra_forbidden" else item["msg"]
        problems.append(f"{field}: {message}")
    return f"{source}: " + "; ".join(problems)


RETIRED_FIELDS = ("threshold_from_evidence",)
"""Compaction fields older versions wrote and no longer use: a policy file that holds one still
loads (the field is dropped). ``threshold_from_evidence`` took a stretch's threshold from the
very compactions a replay is scored on; a replay's threshold now comes from its policy alone."""


def policy_from_dict(data: dict[str, Any], source: str = "policy") -> Policy:
    """Validate a policy from plain data; errors name ``source`` and the field."""
    compaction = data.get("compaction")
    if isinstance(compaction, dict):
        data = {
            **data,
            "compaction": {k: v for k, v in compaction.items() if k not in RETIRED_FIELDS},
        }
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(_describe_validation(exc, source)) from None


def load_policy(path: str | Path) -> Policy:
    """Read a policy from a TOML file.

    A file may start from a preset with ``base = "<preset>"``; its other keys override it.
    """
    import tomllib  # (only a policy file needs it: not every command's start-up)

    path = Path(path)
    try:
        data = tomllib.loads(_policy_text(path))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:
        raise PolicyError(f"{path}: not valid TOML (nested too deep)") from None
    base = data.pop("base", None)
    data.setdefault("name", path.stem)  # a file is named after itself unless it says otherwise
    if base is not None:
        if not isinstance(base, str):
            raise PolicyError(f"{path}: base: expected a preset name")
        try:
            merged = _deep_merge(get_preset(base).model_dump(mode="json"), data)
        except PolicyError as exc:
            raise PolicyError(f"{path}: base: {exc}") from None
        data = merged
    return policy_from_dict(data, str(path))


MAX_POLICY_BYTES = 1_000_000
"""Largest policy file read (a policy is a few hundred bytes; ``/dev/zero`` never ends)."""


def _policy_text(path: Path) -> str:
    """The text of the policy file ``path``: a regular file (a FIFO or a device is refused
    before it is read, the open never blocks) of at most :data:`MAX_POLICY_BYTES`."""
    reason = unreadable_reason(path)
    if reason is not None:
        raise PolicyError(f"{path}: cannot read ({reason})")
    try:
        with open_regular(path) as handle:
            raw = handle.read(MAX_POLICY_BYTES + 1)
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > MAX_POLICY_BYTES:
        raise PolicyError(
            f"{path}: larger than {MAX_POLICY_BYTES:,} bytes; not a policy file, refused"
        )
    return raw.decode("utf-8")


def resolve_policy(name_or_path: str) -> Policy:
    """A preset by name, or a policy file by path."""
    if name_or_path in PRESETS:
        return get_preset(name_or_path)
    if name_or_path.endswith(".toml") or Path(name_or_path).exists():
        return load_policy(name_or_path)
    raise PolicyError(
        f"unknown policy {name_or_path!r}: not a preset ({', '.join(PRESETS)}) nor a TOML file"
    )


def save_policy(policy: Policy, path: str | Path) -> None:
    """Write ``policy`` as TOML."""
    Path(path).write_text(policy.to_toml(), encoding="utf-8")


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


# --- a small TOML writer (the standard library only reads TOML) ---------------------------------


def _toml_key(key: str) -> str:
    if key and all(c.isalnum() or c in "-_" for c in key):
        return key
    return _toml_string(key)


def _toml_string(value: str) -> str:
    escaped = (
        value.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    escaped = "".join(c if c >= " " else f"\\u{ord(c):04x}" for c in escaped)
    return f'"{escaped}"'


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return (
            "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
        )
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def dumps_toml(data: dict[str, Any], _prefix: str = "") -> str:
    """Serialise nested dicts of TOML scalars and lists; non-empty dicts become tables."""
    scalars: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            tables.append((key, value))
        else:
            scalars.append(f"{_toml_key(key)} = {_toml_value(value)}")
    chunks: list[str] = []
    if _prefix and (scalars or not tables):
        chunks.append("\n".join([f"[{_prefix}]", *scalars]))
    elif scalars:
        chunks.append("\n".join(scalars))
    for key, table in tables:
        name = f"{_prefix}.{_toml_key(key)}" if _prefix else _toml_key(key)
        chunks.append(dumps_toml(table, name).rstrip("\n"))
    return "\n\n".join(chunks) + "\n"
