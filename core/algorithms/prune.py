"""T9 — pruning: replace old tool outputs with a placeholder before compacting.

Entry point: :func:`prune`. It never mutates its input; it returns new messages (pruned ones are
copies whose :class:`~core.model.session.ToolResult` holds the placeholder and ``compacted_at_ms``) and
one :class:`PruneDecision` per message saying what happened to it and why. :func:`plan_prune`
makes the same decisions as columns (:class:`PrunePlan`), for compaction in the replay engine,
which needs neither a decision object per message nor the copies of messages it summarises.

Rules, in the order they are checked for each message:

1. **Not a tool output** — only tool messages carry outputs.
2. **Inside the skip boundary** — the skip boundary is the index of the ``protect_turns``-th real
   user message (:attr:`~core.model.session.Message.is_turn_start`) counted from the end; that message and
   everything after it is kept. With fewer user turns than ``protect_turns`` the boundary is 0 and
   *nothing* is pruned (the seed's code and opencode both do this; the seed's comment says the
   opposite). ``protect_turns = 0`` puts the boundary after the last message.
3. **Earlier summary** — the walk from newest to oldest stops at a compaction summary: what lies
   before it is not in the model's context any more.
4. **Protected tool** — outputs of ``protected_tools`` (default ``skill``: its output is the agent's
   instructions) are never pruned.
5. **Already pruned** — an output with ``compacted_at_ms`` set (or already equal to the
   placeholder) is left alone. With the budget rule the walk *stops* there, as opencode's does
   (so older outputs stay too; opencode bug #30807 describes the same effect).

Without the budget rule (the seed) every remaining output before the boundary is pruned. With
``budget_rule`` (opencode) the outputs before the boundary are walked newest to oldest, adding
their tokens to a running total; an output is **inside the protect budget** while that total,
itself included, is at most ``protect_tokens`` (opencode prunes once ``total > PRUNE_PROTECT``).
The rest are pruned only when their tokens add up to at least ``minimum_tokens`` — the spec says
"at least"; opencode tests ``> PRUNE_MINIMUM``, which differs only at exact equality — otherwise
they are **below minimum** and nothing is pruned at all.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from core.model.fastmodel import build
from core.model.session import Message, Role, ToolResult, replace
from core.model.tokens import TokenCounter
from core.policy import PruningPolicy


class PruneReason(StrEnum):
    """Why a message was or was not pruned (the UI colours rows by this)."""

    PRUNED = "pruned"
    """The output was replaced by the placeholder."""
    NOT_TOOL_OUTPUT = "not a tool output"
    """Only tool results are pruned."""
    INSIDE_SKIP_BOUNDARY = "inside skip boundary"
    """At or after the skip boundary (the last ``protect_turns`` user turns)."""
    PROTECTED_TOOL = "protected tool"
    """The tool is in ``protected_tools``."""
    ALREADY_PRUNED = "already pruned"
    """The output was pruned before (``compacted_at_ms`` set or the placeholder in place)."""
    BEFORE_SUMMARY = "before an earlier summary"
    """Older than a compaction summary: already summarised, so not walked."""
    BEFORE_PRUNED = "older than a pruned output"
    """Budget rule: the walk stopped at an already-pruned output, so older ones were not walked."""
    INSIDE_PROTECT_BUDGET = "inside protect budget"
    """Budget rule: among the newest ``protect_tokens`` of tool output."""
    BELOW_MINIMUM = "below minimum"
    """Budget rule: pruning would have freed fewer than ``minimum_tokens``, so nothing was pruned."""
    DISABLED = "pruning disabled"
    """The policy turns pruning off."""


class PruneDecision(BaseModel):
    """What happened to one message, and why."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    index: int
    """Position of the message in the input."""
    id: str
    """Id of the message."""
    reason: PruneReason
    """The rule that decided."""
    detail: str
    """One sentence for the UI, with the numbers behind the rule."""
    tool_name: str | None = None
    """The tool, for tool outputs."""
    output_tokens: int = 0
    """Tokens of the tool output before pruning (0 for other messages)."""

    @property
    def pruned(self) -> bool:
        """The output was replaced."""
        return self.reason is PruneReason.PRUNED


class PruneResult(BaseModel):
    """The pruned conversation and the reasons behind it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, defer_build=True)
    # (messages: structs)

    messages: list[Message]
    """The conversation after pruning: same length and order; pruned messages are new copies."""
    decisions: list[PruneDecision]
    """One decision per input message, in order."""
    pruned_ids: list[str]
    """Ids of the messages whose output was replaced."""
    skip_boundary: int
    """Index of the first message protected by the skip boundary (``len(messages)`` when none)."""
    tokens_before: int
    """Tokens of the pruned outputs before pruning (opencode compares this with the minimum)."""
    tokens_freed: int
    """Net tokens saved: outputs removed minus the placeholders put in their place."""
    compacted_at_ms: int | None
    """Epoch ms stamped on the pruned outputs (None when nothing was pruned)."""
    summary: str
    """One sentence saying what pruning did."""


def skip_boundary(messages: Sequence[Message], protect_turns: int) -> int:
    """Index of the ``protect_turns``-th user turn from the end; 0 when there are fewer turns.

    Everything at or after the returned index is protected. ``protect_turns = 0`` returns
    ``len(messages)`` (nothing protected).
    """
    if protect_turns <= 0:
        return len(messages)
    seen = 0
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].is_turn_start:
            seen += 1
            if seen >= protect_turns:
                return i
    return 0


_ROLE_DETAIL = {role: f"a {role.value} message" for role in Role}
_REASON_TEXT = {reason: reason.value for reason in PruneReason}
"""The detail of a message that is not a tool output, by role."""


def _tool_names(messages: Sequence[Message]) -> dict[str, str]:
    names: dict[str, str] = {}
    for message in messages:
        for call in message.tool_calls:
            names[call.id] = call.name
    return names


def prune(
    messages: Sequence[Message],
    policy: PruningPolicy,
    *,
    counter: TokenCounter,
    now_ms: int | None = None,
) -> PruneResult:
    """Prune old tool outputs of ``messages`` under ``policy`` (see the module docstring).

    ``counter`` measures the outputs (the budget rule and the freed-token figures);
    ``now_ms`` is the ``compacted_at_ms`` stamp (default: the current time).
    """
    total = len(messages)
    if not policy.enabled:
        decisions = [
            PruneDecision(
                index=i,
                id=m.id,
                reason=PruneReason.DISABLED,
                detail="pruning is turned off in this policy",
                tool_name=_name_of(m, {}),
            )
            for i, m in enumerate(messages)
        ]
        return PruneResult(
            messages=list(messages),
            decisions=decisions,
            pruned_ids=[],
            skip_boundary=total,
            tokens_before=0,
            tokens_freed=0,
            compacted_at_ms=None,
            summary="Pruning is turned off in this policy.",
        )

    return plan_prune(messages, policy, counter=counter, now_ms=now_ms).result()


class PrunePlan:
    """What pruning decided, in columns: a reason, a detail, a tool name and an output size per
    message, the pruned copies in ``working``, and the totals.

    :meth:`result` turns it into the :class:`PruneResult` :func:`prune` returns (one decision
    object per message). Compaction run for the replay engine reads the columns and never
    builds those objects (see :func:`core.algorithms.compact.compact`, ``outline``).
    """

    __slots__ = (
        "boundary",
        "details",
        "messages",
        "output_tokens",
        "placeholder",
        "placeholder_tokens",
        "pruned_at",
        "pruned_ids",
        "pruned_set",
        "stamp",
        "summary",
        "tokens_before",
        "tokens_freed",
        "tool_names",
        "why",
        "working",
    )

    def __init__(self, messages: Sequence[Message]) -> None:
        self.messages = messages
        """The input."""
        self.working: list[Message] = []
        """The conversation after pruning: pruned messages are new copies — once made (a plan
        made with ``copies=False`` holds the input there until :meth:`materialise`)."""
        self.pruned_at: list[int] = []
        """Positions of the pruned messages, in order."""
        self.pruned_set: set[int] = set()
        """The same positions, as a set."""
        self.placeholder = ""
        """The text that replaces a pruned output."""
        self.placeholder_tokens: tuple[TokenCounter, int] | None = None
        """The placeholder's tokens, and the counter that counted them."""
        self.why: list[PruneReason] = []
        """The rule that decided, per message."""
        self.details: list[str] = []
        """The sentence saying why, per message (for pruned outputs: written by :meth:`result`,
        the only reader of these sentences)."""
        self.tool_names: list[str | None] = []
        """The tool of each tool output (None for other messages)."""
        self.output_tokens: list[int] = []
        """Tokens of each tool output before pruning (0 for other messages)."""
        self.pruned_ids: list[str] = []
        self.boundary = 0
        self.tokens_before = 0
        self.tokens_freed = 0
        self.stamp: int | None = None
        self.summary = ""

    def reasons(self) -> list[str]:
        """The reason of every message as text (``PruneReason.value``), in order."""
        return list(map(_REASON_TEXT.__getitem__, self.why))

    def materialise(self, positions: Iterable[int]) -> None:
        """Put the pruned copy in ``working`` at each of ``positions`` that was pruned."""
        update = {"output": self.placeholder, "compacted_at_ms": self.stamp}
        working = self.working
        messages = self.messages
        pruned = self.pruned_set
        for i in positions:
            if i in pruned and working[i] is messages[i]:
                message = messages[i]
                assert message.tool_result is not None  # only tool outputs are pruned
                working[i] = replace(message, tool_result=replace(message.tool_result, **update))

    def tokens_of(self, i: int, counter: TokenCounter) -> int:
        """``counter.message_tokens(working[i])`` (the pruned copy's tokens for a pruned message),
        without making a copy not made yet when the message holds nothing but its output: the
        copy's text is then the placeholder itself (see :func:`core.model.tokens.message_text`)."""
        message = self.working[i]
        if message is self.messages[i] and i in self.pruned_set:
            if message.text or message.reasoning or message.tool_calls:
                self.materialise((i,))
                return counter.message_tokens(self.working[i])
            known = self.placeholder_tokens
            if known is not None and known[0] is counter:
                return known[1]
            return counter.count(self.placeholder)
        result = message.tool_result
        if (
            result is not None
            and not message.text
            and not message.reasoning
            and not message.tool_calls
        ):
            return counter.output_tokens(result)
        return counter.message_tokens(message)

    def result(self) -> PruneResult:
        """The :class:`PruneResult` of this plan (a decision object per message)."""
        self.materialise(self.pruned_at)
        for i in self.pruned_at:
            if not self.details[i]:
                self.details[i] = (
                    f"output of {self.output_tokens[i]:,} tokens replaced by the placeholder"
                )
        # Built without validation: a replay prunes every compaction's input, and validating
        # one decision per message took most of a pruning in profiles.
        decisions = [
            build(
                PruneDecision,
                {
                    "index": i,
                    "id": message.id,
                    "reason": reason,
                    "detail": detail or reason.value,
                    "tool_name": name,
                    "output_tokens": tokens,
                },
            )
            for i, message, reason, detail, name, tokens in zip(
                range(len(self.messages)),
                self.messages,
                self.why,
                self.details,
                self.tool_names,
                self.output_tokens,
                strict=True,
            )
        ]
        return PruneResult(
            messages=self.working,
            decisions=decisions,
            pruned_ids=self.pruned_ids,
            skip_boundary=self.boundary,
            tokens_before=self.tokens_before,
            tokens_freed=self.tokens_freed,
            compacted_at_ms=self.stamp,
            summary=self.summary,
        )


def plan_prune(
    messages: Sequence[Message],
    policy: PruningPolicy,
    *,
    counter: TokenCounter,
    now_ms: int | None = None,
    copies: bool = True,
) -> PrunePlan:
    """What :func:`prune` decides, as a :class:`PrunePlan` (``policy.enabled`` must be set).

    ``copies=False`` leaves the pruned copies to be made on demand (:meth:`PrunePlan.materialise`),
    for a caller that needs only some of them.
    """
    if not policy.enabled:
        raise ValueError("plan_prune needs a policy with pruning enabled")
    boundary = skip_boundary(messages, policy.protect_turns)
    plan = PrunePlan(messages)
    plan.working = list(messages)
    plan.boundary = boundary
    candidates = _walk(plan, policy, counter)
    to_prune = _apply_budget(plan, policy, candidates) if policy.budget_rule else candidates

    placeholder = policy.placeholder
    placeholder_tokens = counter.count(placeholder)
    pruned_set = set(to_prune)
    pruned_at = sorted(pruned_set)
    why, output_tokens = plan.why, plan.output_tokens
    tokens_before = 0
    pruned_reason = PruneReason.PRUNED
    for i in pruned_at:
        tokens_before += output_tokens[i]
        why[i] = pruned_reason  # its detail is written by PrunePlan.result()
    plan.placeholder = placeholder
    plan.placeholder_tokens = (counter, placeholder_tokens)
    plan.pruned_at = pruned_at
    plan.pruned_set = pruned_set
    plan.stamp = (now_ms if now_ms is not None else int(time.time() * 1000)) if to_prune else None
    if copies:
        plan.materialise(pruned_at)
    plan.pruned_ids = [messages[i].id for i in pruned_at]
    plan.tokens_before = tokens_before
    plan.tokens_freed = tokens_before - placeholder_tokens * len(pruned_set)
    plan.summary = _summary(plan, policy)
    return plan


def _walk(plan: PrunePlan, policy: PruningPolicy, counter: TokenCounter) -> list[int]:
    """Walk the messages newest to oldest, deciding each one by the rules before the budget;
    the tool outputs that are left, newest first (the candidates)."""
    messages, boundary = plan.messages, plan.boundary
    total = len(messages)
    # Why each message was or was not pruned, and the sentence saying so (every message gets
    # one below); the loop uses local names, as it runs over every message of every head.
    why = [PruneReason.NOT_TOOL_OUTPUT] * total
    details = [""] * total
    tool_names: list[str | None] = [None] * total
    output_tokens = [0] * total
    plan.why, plan.details, plan.tool_names, plan.output_tokens = (
        why,
        details,
        tool_names,
        output_tokens,
    )
    names = _NamesOnDemand(messages)  # for results that do not name their tool
    protected = set(policy.protected_tools)
    candidates: list[int] = []  # newest first
    stop_detail: str | None = None
    stop_reason = PruneReason.BEFORE_SUMMARY
    inside_detail = _inside_detail(policy.protect_turns, boundary)
    # (an output's tokens from the lengths it is held with: the text of an output held as
    # UTF-8 is decoded only where it may be the placeholder, as long as it)
    tokens_of = counter.output_tokens
    # Enum members are slow to look up; these run for every message of every head.
    tool_role = Role.TOOL
    inside_reason = PruneReason.INSIDE_SKIP_BOUNDARY
    placeholder = policy.placeholder
    # (no output held as UTF-8 has a lone surrogate: its text was encoded strictly)
    placeholder_utf8 = placeholder.encode(errors="surrogatepass")
    for i in range(total - 1, -1, -1):
        message = messages[i]
        result = message.tool_result
        if result is not None:
            tool_names[i] = name = result.tool_name or names.get(result.call_id)
        if stop_detail is not None:
            why[i] = stop_reason
            details[i] = stop_detail
            continue
        if message.summary:
            details[i] = "a compaction summary"
            stop_reason = PruneReason.BEFORE_SUMMARY
            stop_detail = f"older than the compaction summary at #{i}, so already summarised"
            continue
        role = message.role
        if role is not tool_role or result is None:
            details[i] = _ROLE_DETAIL.get(role) or f"a {role.value} message"
            continue
        output_tokens[i] = tokens_of(result)
        if i >= boundary:
            why[i] = inside_reason
            details[i] = inside_detail
        elif name in protected:
            why[i] = PruneReason.PROTECTED_TOOL
            details[i] = f"`{name}` is a protected tool; its output is kept"
        elif result.compacted_at_ms is not None or _holds(result, placeholder, placeholder_utf8):
            why[i] = PruneReason.ALREADY_PRUNED
            details[i] = "this output was pruned earlier"
            if policy.budget_rule:
                stop_reason = PruneReason.BEFORE_PRUNED
                stop_detail = f"older than the already-pruned output at #{i}; the walk stops there"
        else:
            candidates.append(i)
    return candidates


def _holds(result: ToolResult, text: str, utf8: bytes) -> bool:
    """``result.output == text`` (``utf8``: the text's UTF-8), without decoding an output held
    as UTF-8: its bytes are compared."""
    held = result.output_held
    return held == text if type(held) is str else held.data == utf8  # type: ignore[union-attr]


class _NamesOnDemand:
    """Tool call id -> tool name over the messages, worked out on the first look-up."""

    __slots__ = ("_messages", "_names")

    def __init__(self, messages: Sequence[Message]) -> None:
        self._messages = messages
        self._names: dict[str, str] | None = None

    def get(self, call_id: str) -> str | None:
        if self._names is None:
            self._names = _tool_names(self._messages)
        return self._names.get(call_id)


def _inside_detail(protect_turns: int, boundary: int) -> str:
    turns_word = "turn" if protect_turns == 1 else "turns"
    if boundary > 0:
        return f"inside the last {protect_turns} user {turns_word} (skip boundary at #{boundary})"
    return (
        f"fewer than {protect_turns} user {turns_word}, so every message is "
        "inside the skip boundary"
    )


def _apply_budget(plan: PrunePlan, policy: PruningPolicy, candidates: list[int]) -> list[int]:
    """The budget rule (opencode): the newest ``protect_tokens`` of tool output are kept, and
    the rest pruned only when they add up to at least ``minimum_tokens``."""
    why, details, output_tokens = plan.why, plan.details, plan.output_tokens
    to_prune: list[int] = []
    running = 0
    for i in candidates:
        running += output_tokens[i]
        if running <= policy.protect_tokens:
            why[i] = PruneReason.INSIDE_PROTECT_BUDGET
            details[i] = (
                f"within the newest {policy.protect_tokens:,} tokens of tool output "
                f"({running:,} so far)"
            )
        else:
            to_prune.append(i)
    would_free = sum(output_tokens[i] for i in to_prune)
    if not to_prune or would_free >= policy.minimum_tokens:
        return to_prune
    for i in to_prune:
        why[i] = PruneReason.BELOW_MINIMUM
        details[i] = (
            f"pruning would free only {would_free:,} tokens, under the "
            f"{policy.minimum_tokens:,}-token minimum, so nothing is pruned"
        )
    return []


def _summary(plan: PrunePlan, policy: PruningPolicy) -> str:
    """One sentence saying what pruning did."""
    if plan.pruned_ids:
        count_pruned = len(plan.pruned_ids)
        return (
            f"Pruned {count_pruned} tool output{'s' if count_pruned != 1 else ''}, "
            f"freeing {plan.tokens_freed:,} tokens."
        )
    if PruneReason.BELOW_MINIMUM in plan.why:
        return f"Nothing pruned: it would free fewer than {policy.minimum_tokens:,} tokens."
    if plan.boundary == 0 and policy.protect_turns > 0:
        turns_word = "turn" if policy.protect_turns == 1 else "turns"
        return f"Nothing pruned: fewer than {policy.protect_turns} user {turns_word}."
    return "Nothing pruned: no tool output outside the protected ones."


def _name_of(message: Message, names: dict[str, str]) -> str | None:
    result = message.tool_result
    if result is None:
        return None
    return result.tool_name or names.get(result.call_id)
