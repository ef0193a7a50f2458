"""Compaction — T8 + T9 + T11 + T12: replace the older part of a conversation with a summary.

Entry points: :func:`compact` (async) and :func:`compact_sync` (the same, run with
``asyncio.run``; for worker threads and the replay engine — do not call it from a thread that
already runs an event loop). :func:`compact_outline` runs the same pipeline and returns only
what the replay engine keeps (:class:`CompactionOutline`); :class:`EntryCache` keeps serialised
head entries across the compactions of one session.

Pipeline:

1. **Prune** (T9, :func:`core.prune.prune`) when the policy enables it.
2. **Choose the head** by ``CompactionPolicy.strategy``:

   * ``tail`` — :func:`core.split.split` (T8): the head is summarised, the tail kept verbatim;
   * ``summary-only`` — everything is head (Claude Code);
   * ``codex`` — everything is head; the real user messages are kept, newest to oldest, within
     ``user_message_budget_tokens`` (the one that does not fit is cut in the middle), and tool
     calls, outputs and assistant text are dropped (Codex's local compaction).

3. **Summarise the head** (T12): the head is serialised as plain text (the labelled layout of
   :mod:`core.templates`), each tool output cut to ``head_tool_output_max_chars`` with a marker
   saying how many characters were cut. The prompt is the policy's template; when an earlier
   summary exists (a summary message in the conversation, or ``previous_summary``) the *update*
   variant is used and that summary is quoted. If the request overflows the summariser's context
   (:class:`core.llm.ContextOverflowError`) the oldest head message is left out and the request
   retried, up to ``max_head_drops`` times (Codex); when it still overflows,
   :class:`CompactionError` is raised (with ``too_large`` set once every size allowed was tried).
   Any other failure, or a failure part-way through a streamed summary, raises
   :class:`CompactionError` too: a half-written summary is never used.
4. **Reassemble**: one system message ``<prior-conversation-summary>…</prior-conversation-summary>``
   (``summary=True``) followed by the tail — for ``codex``, the kept user messages followed by the
   summary. System prompts and injected context messages that *open* the conversation
   (:func:`core.split.leading_context`; a Codex session starts with its instructions, developer and
   environment messages) are not summarised: they stay verbatim ahead of the summary, as every agent
   keeps its system prompt. Earlier summaries are replaced by the new one.
5. **Continue** (T11): after an automatic compaction, when the policy asks for it, a synthetic user
   message with ``continuation_text``.

The input is never modified. Tail messages in the output keep their ids and original indices, so
the UI can map them back to the session; the summary message takes the index of the first head
message.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Hashable, Sequence

from pydantic import BaseModel, ConfigDict

from core.llm.protocol import (
    ChatMessage,
    ContextOverflowError,
    DeltaCallback,
    LLMError,
    LLMUsage,
    Summarizer,
)
from core.models import Message, Role
from core.policy import CompactionStrategy, Policy
from core.prune import PrunePlan, PruneResult, plan_prune
from core.split import SplitResult, leading_context, split
from core.templates import (
    CUT_MARKER,
    LABEL_ASSISTANT,
    LABEL_REASONING,
    LABEL_SYSTEM,
    LABEL_TOOL_CALL,
    LABEL_TOOL_ERROR,
    LABEL_TOOL_RESULT,
    LABEL_USER,
    SYSTEM_PROMPT,
    build_transcript,
    get_template,
    unwrap_summary,
    wrap_summary,
)
from core.tokens import TokenCounter, arguments_text


class CompactionError(Exception):
    """Compaction could not produce a summary; ``str(error)`` is one line for the UI."""

    def __init__(
        self,
        message: str,
        *,
        dropped_head_messages: int = 0,
        too_large: bool = False,
        head_may_shrink: bool = False,
    ) -> None:
        super().__init__(message)
        self.dropped_head_messages = dropped_head_messages
        """Head messages left out of the request before giving up."""
        self.too_large = too_large
        """The summary request overflowed the summariser's context with the whole head and with
        each of the ``max_head_drops`` shorter heads tried: a head that extends this one (the
        same messages first, more after them) overflows it too, at every size tried."""
        self.head_may_shrink = head_may_shrink
        """The head was the whole conversation only because the tail would have been
        (:attr:`core.split.SplitResult.whole_tail`): with more messages after it, the split can
        keep a tail again and the head be shorter."""


class CompactionResult(BaseModel):
    """Everything one compaction did, for the UI, the CLI and the replay engine."""

    model_config = ConfigDict(frozen=True)

    compacted: bool
    """A summary was written (False: nothing to compact; the output is the pruned input)."""
    reason: str
    """What happened, in a sentence or two (split and prune reasons included)."""
    strategy: CompactionStrategy
    """``tail``, ``summary-only`` or ``codex``."""
    template: str
    """Summary template used."""
    auto: bool
    """The compaction was automatic (decides the T11 continuation)."""
    updated_previous_summary: bool
    """The update variant of the template was used (an earlier summary existed)."""
    tokens_before: int
    """Tokens of the input conversation (counted with the counter given)."""
    tokens_after: int
    """Tokens of the output conversation (summary message + tail + continuation)."""
    summary: str
    """The summary text ("" when nothing was compacted)."""
    head_ids: list[str]
    """Ids of the messages replaced by the summary."""
    tail_ids: list[str]
    """Ids of the messages kept verbatim after the summary (for ``codex``: the kept user messages)."""
    pinned_ids: list[str]
    """Leading system prompts and injected context messages, kept verbatim ahead of the summary
    (for ``tail`` and ``summary-only``, ``pinned_ids + head_ids + tail_ids`` is the input)."""
    pruned_ids: list[str]
    """Ids of the messages whose tool output pruning replaced."""
    dropped_head_ids: list[str]
    """Head messages left out of the summary request because it overflowed."""
    dropped_head_messages: int
    """How many head messages were left out (``len(dropped_head_ids)``)."""
    prune: PruneResult | None
    """The pruning step (None when the policy disables pruning)."""
    split: SplitResult | None
    """The head/tail split (``tail`` strategy only)."""
    request_messages: list[ChatMessage]
    """The messages of the summary request that succeeded (system prompt + serialised head)."""
    prompt: str
    """The template text sent as the last user message of that request."""
    max_tokens: int
    """The summary length limit requested."""
    output_messages: list[Message]
    """The conversation after compaction: what the model sees next."""
    duration_s: float
    """Wall time of the whole compaction, summary request(s) included."""
    usage: LLMUsage | None
    """Tokens the summary request cost, as the summariser reported them."""
    model: str | None
    """Model that wrote the summary."""

    @property
    def tokens_saved(self) -> int:
        """``tokens_before - tokens_after``."""
        return self.tokens_before - self.tokens_after


# --- serialising the head ---------------------------------------------------------------------


def cap_tool_output(output: str, max_chars: int) -> str:
    """``output`` cut to ``max_chars`` characters, followed by a marker counting what was cut."""
    if len(output) <= max_chars:
        return output
    cut = len(output) - max_chars
    return f"{output[:max_chars]}\n\n{CUT_MARKER.format(n=cut)}"


def serialize_message(
    message: Message,
    tool_names: dict[str, str],
    max_output_chars: int,
    *,
    output: str | None = None,
) -> str:
    """One head message as a labelled transcript entry ("" for messages the summary skips).

    ``output`` stands in for a tool result's output (a pruned output's placeholder, when the
    pruned copy was not made).
    """
    if message.summary or message.synthetic:
        return ""  # earlier summaries travel in the prompt; continue-nudges carry nothing
    if message.role is Role.USER:
        return f"{LABEL_SYSTEM if message.meta else LABEL_USER}: {message.text}"
    if message.role is Role.SYSTEM:
        return f"{LABEL_SYSTEM}: {message.text}" if message.text else ""
    if message.role is Role.ASSISTANT:
        parts: list[str] = []
        if message.reasoning:
            parts.append(f"{LABEL_REASONING}: {message.reasoning}")
        if message.text:
            parts.append(f"{LABEL_ASSISTANT}: {message.text}")
        for call in message.tool_calls:
            parts.append(
                f"{LABEL_TOOL_CALL}: {call.name} {arguments_text(call.arguments)}".rstrip()
            )
        return "\n\n".join(parts)
    result = message.tool_result
    if result is None:
        return f"{LABEL_TOOL_RESULT}: tool\n{message.text}" if message.text else ""
    name = result.tool_name or tool_names.get(result.call_id) or "tool"
    label = LABEL_TOOL_ERROR if result.is_error else LABEL_TOOL_RESULT
    text = result.output if output is None else output
    return f"{label}: {name}\n{cap_tool_output(text, max_output_chars)}"


class EntryCache:
    """Serialised head entries, kept across the compactions of one session (the replay engine
    compacts overlapping heads again and again, and serialising is a good part of a compaction).

    Keys that make a hit exact:

    * an **assistant message** or a **tool result** is keyed by the identity of the message
      object; the entry holds the message (so the id cannot be reused while it is cached), the
      character cap and the tool name it was written with, and is used only when they match.
      Messages are never modified once built (:mod:`core.models`), which is what makes an
      identity key safe; copies made by truncation or pruning are other objects;
    * a tool result whose output is **stood in for** (a pruned output's placeholder) is keyed by
      what its entry is made of — error flag, tool name, the text and the cap — so every pruned
      output of a tool shares one entry.

    User and system entries are a single format and not cached. The cache is bounded by the
    characters of the entries it holds (``max_chars``, plus a fixed weight per entry); the
    oldest entries go first.
    """

    ENTRY_OVERHEAD = 200
    """Weight of one entry besides its characters."""

    def __init__(self, max_chars: int = 16_000_000) -> None:
        self.max_chars = max_chars
        self._entries: dict[Hashable, tuple[Message | None, int, str | None, str]] = {}
        self._weight = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def entries(
        self,
        head: Sequence[Message],
        names: dict[str, str] | None,
        max_output_chars: int,
        outputs: Sequence[str | None] | None = None,
    ) -> list[str]:
        """:func:`serialize_message` of each head message (with ``outputs[k]`` standing in for
        the output of message ``k`` when given and not None), from the cache where it can.

        ``names`` maps the head's tool call ids to tool names (None: worked out here when a
        tool result does not name its tool)."""
        out: list[str] = []
        append = out.append
        data = self._entries
        assistant, tool = Role.ASSISTANT, Role.TOOL
        get = data.get
        with self._lock:
            for k, message in enumerate(head):
                if outputs is None or outputs[k] is None:
                    # The common case first: this very message, serialised before with this
                    # cap. Its entry is the cached one unless it is a result that names no tool
                    # (labelled from the head's calls, which may differ).
                    hit = get(id(message))
                    if (
                        hit is not None
                        and hit[0] is message
                        and hit[1] == max_output_chars
                        and (
                            hit[2] is None
                            or ((result := message.tool_result) is not None and result.tool_name)
                        )
                    ):
                        append(hit[3])
                        continue
                if message.summary or message.synthetic:
                    append("")
                    continue
                role = message.role
                result = message.tool_result
                name: str | None = None
                if role is tool and result is not None:
                    name = result.tool_name
                    if not name:
                        if names is None:
                            names = _call_names(head)
                        name = names.get(result.call_id) or "tool"
                elif role is not assistant:
                    # User, system, or a tool message without a result: no tool name needed.
                    append(serialize_message(message, _NO_NAMES, max_output_chars))
                    continue
                output = outputs[k] if outputs is not None else None
                key: Hashable
                if output is None:
                    key = id(message)
                else:
                    assert result is not None
                    key = (result.is_error, name, output, max_output_chars)
                hit = data.get(key)
                if (
                    hit is not None
                    and hit[1] == max_output_chars
                    and hit[2] == name
                    and (hit[0] is message or output is not None)
                ):
                    append(hit[3])
                    continue
                entry = serialize_message(
                    message, _NO_NAMES if names is None else names, max_output_chars, output=output
                )
                append(entry)
                if hit is not None:
                    del data[key]
                    self._weight -= len(hit[3]) + self.ENTRY_OVERHEAD
                data[key] = (message if output is None else None, max_output_chars, name, entry)
                self._weight += len(entry) + self.ENTRY_OVERHEAD
                while self._weight > self.max_chars and data:
                    oldest = next(iter(data))
                    self._weight -= len(data.pop(oldest)[3]) + self.ENTRY_OVERHEAD
        return out


_NO_NAMES: dict[str, str] = {}
"""Call names for entries that name no tool (never written to)."""


def _call_names(head: Sequence[Message]) -> dict[str, str]:
    """Tool call id -> tool name, over the head (how a result that does not name its tool is
    labelled)."""
    return {call.id: call.name for m in head for call in m.tool_calls}


def build_request(
    head: Sequence[Message],
    max_output_chars: int,
    *,
    cache: EntryCache | None = None,
    outputs: Sequence[str | None] | None = None,
) -> list[ChatMessage]:
    """The chat messages of a summary request: the system prompt and the head as one transcript.

    ``cache`` keeps serialised entries across requests (see :class:`EntryCache`); the request
    is the same with or without it. ``outputs``, one per head message, stand in for the tool
    outputs of the messages they are not None for (pruned outputs whose copy was not made).
    """
    return _request(_head_entries(head, max_output_chars, cache, outputs))


def _head_entries(
    head: Sequence[Message],
    max_output_chars: int,
    cache: EntryCache | None,
    outputs: Sequence[str | None] | None,
) -> list[str]:
    """The transcript entry of each head message (see :func:`build_request`)."""
    if cache is not None:
        return cache.entries(head, None, max_output_chars, outputs)
    names = _call_names(head)
    stand_ins = outputs if outputs is not None else [None] * len(head)
    return [
        serialize_message(m, names, max_output_chars, output=o)
        for m, o in zip(head, stand_ins, strict=True)
    ]


def _request(entries: Sequence[str]) -> list[ChatMessage]:
    """The summary request made of a head's entries ("" entries are left out)."""
    return [
        ChatMessage(role="system", content=SYSTEM_PROMPT),
        ChatMessage(role="user", content=build_transcript([e for e in entries if e])),
    ]


def _names_a_result(dropped: Message, rest: Sequence[Message]) -> bool:
    """A tool result in ``rest`` that does not name its tool answers a call ``dropped`` holds:
    its entry is labelled from that call, so it changes once ``dropped`` leaves the head."""
    ids = {call.id for call in dropped.tool_calls}
    return bool(ids) and any(
        (result := m.tool_result) is not None and not result.tool_name and result.call_id in ids
        for m in rest
    )


# --- the codex strategy -----------------------------------------------------------------------


def _cut_middle(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """``text`` with its middle replaced by a ``…N tokens truncated…`` marker to fit ``max_tokens``."""
    total = counter.count(text)
    if total <= max_tokens:
        return text
    keep_chars = max(max_tokens, 0) * 4  # the characters-per-token rule Codex cuts by
    head = text[: keep_chars // 2]
    tail = text[len(text) - (keep_chars - keep_chars // 2) :] if keep_chars > 1 else ""
    removed = max(total - counter.count(head) - counter.count(tail), 0)
    return f"{head}…{removed} tokens truncated…{tail}"


def _codex_user_messages(
    messages: Sequence[Message], budget: int, counter: TokenCounter
) -> list[Message]:
    """Real user messages kept newest to oldest within ``budget``; the first that does not fit is cut."""
    kept: list[Message] = []
    remaining = budget
    for message in reversed(messages):
        if not message.is_turn_start:
            continue
        size = counter.count(message.text)
        if size <= remaining:
            kept.append(message)
            remaining -= size
            continue
        if remaining > 0:
            kept.append(
                message.model_copy(update={"text": _cut_middle(message.text, remaining, counter)})
            )
        break
    kept.reverse()
    return kept


# --- the pipeline -----------------------------------------------------------------------------


def _previous_summary(messages: Sequence[Message]) -> str | None:
    for message in reversed(messages):
        if message.summary and message.text.strip():
            return unwrap_summary(message.text)
    return None


class CompactionOutline:
    """What :func:`compact_outline` returns: the parts of a :class:`CompactionResult` the replay
    engine keeps, from the same pipeline (same values as :func:`compact` gives for them).

    It is made without what only a person reading one compaction needs: a decision object per
    message (the reasons come as a list of texts), pruned copies of head messages
    (their placeholder goes straight into the request), the request text and the split details.
    The replay engine compacts hundreds of heads per run; those objects were half the cost.
    """

    __slots__ = (
        "compacted",
        "dropped_head_messages",
        "head_ids",
        "output_messages",
        "prune_reasons",
        "pruned_ids",
        "reason",
        "summary",
    )

    def __init__(
        self,
        *,
        compacted: bool,
        reason: str,
        summary: str,
        head_ids: list[str],
        pruned_ids: list[str],
        dropped_head_messages: int,
        output_messages: list[Message],
        prune_reasons: list[str],
    ) -> None:
        self.compacted = compacted
        """As :attr:`CompactionResult.compacted`."""
        self.reason = reason
        """As :attr:`CompactionResult.reason`."""
        self.summary = summary
        """As :attr:`CompactionResult.summary`."""
        self.head_ids = head_ids
        """As :attr:`CompactionResult.head_ids`."""
        self.pruned_ids = pruned_ids
        """As :attr:`CompactionResult.pruned_ids`."""
        self.dropped_head_messages = dropped_head_messages
        """As :attr:`CompactionResult.dropped_head_messages`."""
        self.output_messages = output_messages
        """As :attr:`CompactionResult.output_messages`."""
        self.prune_reasons = prune_reasons
        """The reason text of each input message's prune decision, in input order (empty when
        the policy does not prune), as ``CompactionResult.prune.decisions`` has them."""


async def compact(
    messages: Sequence[Message],
    policy: Policy,
    summarizer: Summarizer,
    *,
    window: int,
    counter: TokenCounter,
    previous_summary: str | None = None,
    auto: bool = True,
    on_delta: DeltaCallback | None = None,
    token_counts: Sequence[int] | None = None,
    now_ms: int | None = None,
    entry_cache: EntryCache | None = None,
) -> CompactionResult:
    """Compact ``messages`` under ``policy`` with ``summarizer`` (see the module docstring).

    ``window`` is the context window in tokens (the usable window is ``window - reserve_tokens``);
    ``previous_summary`` overrides the summary found in ``messages``; ``auto`` marks an automatic
    compaction (T11 continuation); ``on_delta`` receives the summary as it streams (after a head
    drop the next attempt streams from the start); ``token_counts`` are precomputed per-message
    tokens; ``now_ms`` stamps pruned outputs (default: now); ``entry_cache`` keeps serialised
    head entries for the next compactions of the same messages (same result, less work).
    Raises :class:`CompactionError`.
    """
    result = await _compact(
        messages,
        policy,
        summarizer,
        window=window,
        counter=counter,
        previous_summary=previous_summary,
        auto=auto,
        on_delta=on_delta,
        token_counts=token_counts,
        now_ms=now_ms,
        entry_cache=entry_cache,
        outline=False,
    )
    assert isinstance(result, CompactionResult)
    return result


async def compact_outline(
    messages: Sequence[Message],
    policy: Policy,
    summarizer: Summarizer,
    *,
    window: int,
    counter: TokenCounter,
    auto: bool = True,
    token_counts: Sequence[int] | None = None,
    now_ms: int | None = None,
    entry_cache: EntryCache | None = None,
) -> CompactionOutline:
    """:func:`compact`, keeping only what the replay engine uses (see :class:`CompactionOutline`).

    Same arguments, same pipeline, same errors; the values it returns are those of the
    corresponding :class:`CompactionResult` fields.
    """
    result = await _compact(
        messages,
        policy,
        summarizer,
        window=window,
        counter=counter,
        previous_summary=None,
        auto=auto,
        on_delta=None,
        token_counts=token_counts,
        now_ms=now_ms,
        entry_cache=entry_cache,
        outline=True,
    )
    assert isinstance(result, CompactionOutline)
    return result


async def _compact(
    messages: Sequence[Message],
    policy: Policy,
    summarizer: Summarizer,
    *,
    window: int,
    counter: TokenCounter,
    previous_summary: str | None,
    auto: bool,
    on_delta: DeltaCallback | None,
    token_counts: Sequence[int] | None,
    now_ms: int | None,
    entry_cache: EntryCache | None,
    outline: bool,
) -> CompactionResult | CompactionOutline:
    """The pipeline of :func:`compact` and :func:`compact_outline` (``outline``)."""
    started = time.perf_counter()
    comp = policy.compaction
    total = len(messages)
    if token_counts is not None and len(token_counts) != total:
        raise ValueError(f"token_counts has {len(token_counts)} entries for {total} messages")
    counts = list(token_counts) if token_counts is not None else counter.messages_tokens(messages)
    tokens_before = sum(counts)

    # 1. prune (T9). An outline makes the pruned copies only where they are kept (pinned
    # context and tail); pruned head messages are sent with the placeholder in their place.
    plan: PrunePlan | None = None
    prune_result: PruneResult | None = None
    working: list[Message] = list(messages)
    if policy.pruning.enabled:
        plan = plan_prune(
            messages, policy.pruning, counter=counter, now_ms=now_ms, copies=not outline
        )
        if outline:
            working = plan.working
        else:
            prune_result = plan.result()
            working = prune_result.messages
        if plan.pruned_ids:
            changed = set(plan.pruned_ids)
            for i, message in enumerate(messages):
                if message.id in changed:
                    counts[i] = plan.tokens_of(i, counter)
    pruned_ids = plan.pruned_ids if plan is not None else []
    prune_note = f" {plan.summary}" if plan is not None else ""

    def nothing_to_compact(
        reason: str, split_result: SplitResult | None
    ) -> CompactionResult | CompactionOutline:
        if not outline:
            return _nothing_to_compact(
                reason,
                working,
                counts,
                tokens_before,
                prune_result,
                split_result,
                policy,
                auto,
                started,
            )
        if plan is not None:
            plan.materialise(plan.pruned_at)
        return CompactionOutline(
            compacted=False,
            reason=reason,
            summary="",
            head_ids=[],
            pruned_ids=pruned_ids,
            dropped_head_messages=0,
            output_messages=list(working),
            prune_reasons=plan.reasons() if plan is not None else [],
        )

    # 2. choose the head; leading system prompts and injected context stay pinned, verbatim
    lead = leading_context(working)
    pinned_at = [i for i in range(lead) if not working[i].summary]
    split_result: SplitResult | None = None
    if comp.strategy == "tail":
        usable = max(window - comp.reserve_tokens, 0)
        split_result = split(
            working, policy.split, usable_tokens=usable, counter=counter, token_counts=counts
        )
        cut = split_result.cut_index
        if not split_result.compactable:
            return nothing_to_compact(
                f"Nothing to compact. {split_result.reason}{prune_note}", split_result
            )
        head_end = cut
        if outline and plan is not None:
            plan.materialise(range(cut, total))
        tail, tail_counts = working[cut:], counts[cut:]
        choice_note = split_result.reason
    else:
        head_end = len(working)
        tail, tail_counts = [], []
        choice_note = (
            "The whole conversation is summarised (summary-only)."
            if comp.strategy == "summary-only"
            else "The whole conversation is summarised; recent user messages are kept (codex)."
        )
        if not any(not m.summary and not m.synthetic for m in working[lead:]):
            return nothing_to_compact(
                "Nothing to compact: the conversation holds no message besides a summary or "
                "system context." + prune_note,
                None,
            )

    if outline and plan is not None:
        plan.materialise(pinned_at)
    pinned = [working[i] for i in pinned_at]
    # The head: the earlier summaries among the leading context, then everything up to the cut.
    head_at = [i for i in range(lead) if working[i].summary]
    head_at.extend(range(lead, head_end))
    head = [working[i] for i in head_at]
    pinned_tokens = sum(counts[i] for i in pinned_at)

    # 3. summarise the head (T12)
    previous = previous_summary if previous_summary is not None else _previous_summary(working)
    updating = previous is not None and bool(previous.strip())
    prompt = get_template(comp.template).prompt(previous if updating else None)
    max_tokens = policy.llm.max_tokens or comp.summary_max_tokens
    send_at = [i for i in head_at if not (m := working[i]).summary and not m.synthetic]
    to_send = [working[i] for i in send_at]
    outputs: list[str | None] | None = None
    if outline and plan is not None and plan.pruned_at:
        # Head messages still the originals where pruning replaced their output.
        outputs = [
            plan.placeholder if working[i] is messages[i] and i in plan.pruned_set else None
            for i in send_at
        ]
    dropped: list[str] = []
    cap = comp.head_tool_output_max_chars
    # Serialised once: a shorter head after a drop is the same entries minus the first.
    entries = _head_entries(to_send, cap, entry_cache, outputs)
    while True:
        request = _request(entries)
        try:
            reply = await summarizer.summarize(request, prompt, max_tokens, on_delta=on_delta)
            break
        except ContextOverflowError as exc:
            if len(dropped) >= comp.max_head_drops or len(to_send) <= 1:
                raise CompactionError(
                    f"the summary request is too large for the summariser's context even after "
                    f"leaving out the {len(dropped)} oldest head message"
                    f"{'s' if len(dropped) != 1 else ''} (limit {comp.max_head_drops}): {exc}",
                    dropped_head_messages=len(dropped),
                    too_large=len(dropped) >= comp.max_head_drops,
                    head_may_shrink=split_result is not None and split_result.whole_tail,
                ) from exc
            gone = to_send[0]
            dropped.append(gone.id)
            to_send = to_send[1:]
            if outputs is not None:
                outputs = outputs[1:]
            if _names_a_result(gone, to_send):
                entries = _head_entries(to_send, cap, entry_cache, outputs)
            else:
                entries = entries[1:]
        except LLMError as exc:
            raise CompactionError(
                f"the summary request failed: {exc}", dropped_head_messages=len(dropped)
            ) from exc
        except Exception as exc:  # a summariser bug or a broken stream: never keep partial text
            raise CompactionError(
                f"the summariser failed part-way ({type(exc).__name__}: {exc}); no summary was kept",
                dropped_head_messages=len(dropped),
            ) from exc
    summary = reply.text.strip()
    if not summary:
        raise CompactionError(
            "the summariser returned an empty summary", dropped_head_messages=len(dropped)
        )

    # 4. reassemble, 5. continue (T11)
    anchor = head[0] if head else working[0]
    last_head_id = head[-1].id if head else anchor.id
    summary_message = Message(
        index=anchor.index,
        id=f"summary:{last_head_id}",
        role=Role.SYSTEM,
        text=wrap_summary(summary),
        summary=True,
        model=reply.model,
    )
    if comp.strategy == "codex":
        kept_users = _codex_user_messages(working, comp.user_message_budget_tokens, counter)
        output = [*pinned, *kept_users, summary_message]
        tail_ids = [m.id for m in kept_users]
        tokens_after = pinned_tokens + sum(counter.messages_tokens(kept_users))
    else:
        output = [*pinned, summary_message, *tail]
        tail_ids = [m.id for m in tail]
        tokens_after = pinned_tokens + sum(tail_counts)
    tokens_after += counter.message_tokens(summary_message)
    if auto and comp.continuation:
        continuation = Message(
            index=output[-1].index if output else 0,
            id=f"continue:{last_head_id}",
            role=Role.USER,
            text=comp.continuation_text,
            synthetic=True,
        )
        output.append(continuation)
        tokens_after += counter.message_tokens(continuation)

    drop_note = ""
    if dropped:
        drop_note = (
            f" The summary request overflowed; the {len(dropped)} oldest head message"
            f"{'s were' if len(dropped) != 1 else ' was'} left out of it."
        )
    if outline:
        return CompactionOutline(
            compacted=True,
            reason=f"{choice_note}{prune_note}{drop_note}".strip(),
            summary=summary,
            head_ids=[m.id for m in head],
            pruned_ids=pruned_ids,
            dropped_head_messages=len(dropped),
            output_messages=output,
            prune_reasons=plan.reasons() if plan is not None else [],
        )
    return CompactionResult(
        compacted=True,
        reason=f"{choice_note}{prune_note}{drop_note}".strip(),
        strategy=comp.strategy,
        template=comp.template,
        auto=auto,
        updated_previous_summary=updating,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        summary=summary,
        head_ids=[m.id for m in head],
        tail_ids=tail_ids,
        pinned_ids=[m.id for m in pinned],
        pruned_ids=pruned_ids,
        dropped_head_ids=dropped,
        dropped_head_messages=len(dropped),
        prune=prune_result,
        split=split_result,
        request_messages=request,
        prompt=prompt,
        max_tokens=max_tokens,
        output_messages=output,
        duration_s=time.perf_counter() - started,
        usage=reply.usage,
        model=reply.model,
    )


def _nothing_to_compact(
    reason: str,
    working: list[Message],
    counts: list[int],
    tokens_before: int,
    prune_result: PruneResult | None,
    split_result: SplitResult | None,
    policy: Policy,
    auto: bool,
    started: float,
) -> CompactionResult:
    """The result when there is no head to summarise: the (pruned) input, unchanged otherwise."""
    return CompactionResult(
        compacted=False,
        reason=reason,
        strategy=policy.compaction.strategy,
        template=policy.compaction.template,
        auto=auto,
        updated_previous_summary=False,
        tokens_before=tokens_before,
        tokens_after=sum(counts),
        summary="",
        head_ids=[],
        tail_ids=[m.id for m in working],
        pinned_ids=[],
        pruned_ids=prune_result.pruned_ids if prune_result is not None else [],
        dropped_head_ids=[],
        dropped_head_messages=0,
        prune=prune_result,
        split=split_result,
        request_messages=[],
        prompt="",
        max_tokens=0,
        output_messages=working,
        duration_s=time.perf_counter() - started,
        usage=None,
        model=None,
    )


def compact_sync(
    messages: Sequence[Message],
    policy: Policy,
    summarizer: Summarizer,
    *,
    window: int,
    counter: TokenCounter,
    previous_summary: str | None = None,
    auto: bool = True,
    on_delta: DeltaCallback | None = None,
    token_counts: Sequence[int] | None = None,
    now_ms: int | None = None,
    entry_cache: EntryCache | None = None,
) -> CompactionResult:
    """:func:`compact` run to completion on a private event loop (for threads without a running loop).

    Not ``asyncio.run``: in the main thread that installs a SIGINT handler whose set-up formats the
    task's repr, which costs tens of milliseconds per call on long conversations (measured).
    """
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(
            compact(
                messages,
                policy,
                summarizer,
                window=window,
                counter=counter,
                previous_summary=previous_summary,
                auto=auto,
                on_delta=on_delta,
                token_counts=token_counts,
                now_ms=now_ms,
                entry_cache=entry_cache,
            )
        )
    finally:
        loop.close()
