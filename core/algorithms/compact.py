"""Compaction — T8 + T9 + T11 + T12: replace the older part of a conversation with a summary.

Entry points: :func:`compact` (async) and :func:`compact_sync` (the same, run to completion on
a private event loop; for worker threads — do not call it from a thread that already runs an
event loop). :func:`compact_outline` runs the same pipeline and returns only
what the replay engine keeps (:class:`CompactionOutline`); :class:`EntryCache` keeps serialised
head entries across the compactions of one session.

Pipeline:

1. **Prune** (T9, :func:`core.algorithms.prune.prune`) when the policy enables it.
2. **Choose the head** by ``CompactionPolicy.strategy``:

   * ``tail`` — :func:`core.algorithms.split.split` (T8): the head is summarised, the tail kept verbatim;
   * ``summary-only`` — everything is head (Claude Code);
   * ``codex`` — everything is head; the real user messages are kept, newest to oldest, within
     ``user_message_budget_tokens`` (the one that does not fit is cut in the middle), and tool
     calls, outputs and assistant text are dropped (Codex's local compaction).

3. **Summarise the head** (T12): the head is serialised as plain text (the labelled layout of
   :mod:`core.llm.summary_templates`, written by :mod:`core.llm.summary_request`), each tool output cut to ``head_tool_output_max_chars`` with a marker
   saying how many characters were cut. The prompt is the policy's template; when an earlier
   summary exists (a summary message in the conversation, or ``previous_summary``) the *update*
   variant is used and that summary is quoted. If the request overflows the summariser's context
   (:class:`core.llm.ContextOverflowError`) the oldest head message is left out and the request
   retried, up to ``max_head_drops`` times (Codex; a summariser that can tell from a request's
   size that it would refuse it, :class:`core.llm.protocol.OverflowProbe` such as the offline
   mock, is not built nor sent the shorter requests it would refuse, and its refusal of the
   shortest allowed is the error); when it still overflows,
   :class:`CompactionError` is raised (with ``too_large`` set once every size allowed was tried).
   Any other failure, or a failure part-way through a streamed summary, raises
   :class:`CompactionError` too: a half-written summary is never used.
4. **Reassemble**: one system message ``<prior-conversation-summary>…</prior-conversation-summary>``
   (``summary=True``) followed by the tail — for ``codex``, the kept user messages followed by the
   summary. System prompts and injected context messages that *open* the conversation
   (:func:`core.algorithms.split.leading_context`; a Codex session starts with its instructions, developer and
   environment messages) are not summarised: they stay verbatim ahead of the summary, as every agent
   keeps its system prompt. Earlier summaries are replaced by the new one.
5. **Continue** (T11): after an automatic compaction, when the policy asks for it, a synthetic user
   message with ``continuation_text``.

The input is never modified. Tail messages in the output keep their ids and original indices, so
the UI can map them back to the session; the summary message takes the index of the first head
message.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel, ConfigDict

from core.algorithms.prune import PrunePlan, PruneResult, plan_prune
from core.algorithms.split import SplitResult, leading_context, split
from core.llm.protocol import (
    ChatMessage,
    ContextOverflowError,
    DeltaCallback,
    LLMError,
    LLMUsage,
    OverflowProbe,
    Summarizer,
    SummaryResult,
)
from core.llm.summary_request import (
    EntryCache,
    SentHead,
    build_request,
    cap_tool_output,
    serialize_message,
)
from core.llm.summary_templates import get_template, unwrap_summary, wrap_summary
from core.model.session import Message, Role, replace
from core.model.tokens import TokenCounter
from core.policy import CompactionStrategy, Policy

_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = [
    "CompactionError",
    "CompactionOutline",
    "CompactionResult",
    "EntryCache",
    "build_request",
    "cap_tool_output",
    "compact",
    "compact_outline",
    "compact_sync",
    "serialize_message",
]


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
        (:attr:`core.algorithms.split.SplitResult.whole_tail`): with more messages after it, the split can
        keep a tail again and the head be shorter."""


class CompactionResult(BaseModel):
    """Everything one compaction did, for the UI, the CLI and the replay engine."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, defer_build=True)
    # (messages: structs)

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
            kept.append(replace(message, text=_cut_middle(message.text, remaining, counter)))
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
    run = _Run(messages, policy, counter, token_counts=token_counts, auto=auto, outline=False)
    reply = await run.steps(summarizer, window, now_ms, previous_summary, on_delta, entry_cache)
    return run.result(reply) if reply is not None else run.nothing_result()


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
    run = _Run(messages, policy, counter, token_counts=token_counts, auto=auto, outline=True)
    reply = await run.steps(summarizer, window, now_ms, None, None, entry_cache)
    return run.outline(reply) if reply is not None else run.nothing_outline()


class _Run:
    """One compaction: a method per step of the pipeline (prune, choose the head, summarise it,
    reassemble), sharing what the earlier steps found.

    ``outline`` (for :func:`compact_outline`) makes the pruned copies only where they are kept
    (pinned context and tail); pruned head messages are sent with the placeholder in their place.
    """

    def __init__(
        self,
        messages: Sequence[Message],
        policy: Policy,
        counter: TokenCounter,
        *,
        token_counts: Sequence[int] | None,
        auto: bool,
        outline: bool,
    ) -> None:
        self.started = time.perf_counter()
        total = len(messages)
        if token_counts is not None and len(token_counts) != total:
            raise ValueError(f"token_counts has {len(token_counts)} entries for {total} messages")
        self.messages = messages
        self.policy = policy
        self.comp = policy.compaction
        self.counter = counter
        self.auto = auto
        self.outline_only = outline
        self.counts = (
            list(token_counts) if token_counts is not None else counter.messages_tokens(messages)
        )
        self.tokens_before = sum(self.counts)
        # Set by prune():
        self.working: list[Message] = list(messages)
        self.plan: PrunePlan | None = None
        self.prune_result: PruneResult | None = None
        # Set by choose_head():
        self.nothing_reason: str | None = None
        self.split_result: SplitResult | None = None
        self.choice_note = ""
        self.pinned: list[Message] = []
        self.pinned_tokens = 0
        self.head_at: list[int] = []
        self.head: list[Message] = []
        self.tail: list[Message] = []
        self.tail_counts: list[int] = []
        self.window = 0
        """The context window of the compaction (set by :meth:`steps`)."""
        # Set by summarise():
        self.updating = False
        self.prompt = ""
        self.max_tokens = 0
        self.request: list[ChatMessage] = []
        self.dropped: list[str] = []

    async def steps(
        self,
        summarizer: Summarizer,
        window: int,
        now_ms: int | None,
        previous_summary: str | None,
        on_delta: DeltaCallback | None,
        entry_cache: EntryCache | None,
    ) -> SummaryResult | None:
        """Prune, choose the head and summarise it: the summariser's reply, or None when there
        is nothing to compact (:attr:`nothing_reason` says why)."""
        self.prune(now_ms)
        self.window = window
        self.nothing_reason = self.choose_head(window)
        if self.nothing_reason is not None:
            return None
        return await self.summarise(summarizer, previous_summary, on_delta, entry_cache)

    @property
    def pruned_ids(self) -> list[str]:
        return self.plan.pruned_ids if self.plan is not None else []

    @property
    def prune_note(self) -> str:
        return f" {self.plan.summary}" if self.plan is not None else ""

    # -- 1. prune (T9) -------------------------------------------------------------------

    def prune(self, now_ms: int | None) -> None:
        """Prune old tool outputs when the policy asks for it; the counts follow."""
        if not self.policy.pruning.enabled:
            return
        messages, counter = self.messages, self.counter
        plan = plan_prune(
            messages,
            self.policy.pruning,
            counter=counter,
            now_ms=now_ms,
            copies=not self.outline_only,
        )
        self.plan = plan
        if self.outline_only:
            self.working = plan.working
        else:
            self.prune_result = plan.result()
            self.working = self.prune_result.messages
        if plan.pruned_ids:
            changed = set(plan.pruned_ids)
            for i, message in enumerate(messages):
                if message.id in changed:
                    self.counts[i] = plan.tokens_of(i, counter)

    # -- 2. choose the head --------------------------------------------------------------

    def choose_head(self, window: int) -> str | None:
        """Split the conversation into pinned context, head and tail by the policy's strategy;
        the reason there is nothing to compact, or None."""
        working = self.working
        # Leading system prompts and injected context stay pinned, verbatim.
        lead = leading_context(working)
        pinned_at = [i for i in range(lead) if not working[i].summary]
        if self.comp.strategy == "tail":
            nothing = self._split_tail(window)
        else:
            nothing = self._whole_head(lead)
        if nothing is not None:
            return nothing
        if self.outline_only and self.plan is not None:
            self.plan.materialise(pinned_at)
        self.pinned = [working[i] for i in pinned_at]
        self.pinned_tokens = sum(self.counts[i] for i in pinned_at)
        # The head: the earlier summaries among the leading context, then everything up to the cut.
        head_end = len(working) - len(self.tail)
        self.head_at = [i for i in range(lead) if working[i].summary]
        self.head_at.extend(range(lead, head_end))
        self.head = [working[i] for i in self.head_at]
        return None

    def _split_tail(self, window: int) -> str | None:
        """``tail``: :func:`core.algorithms.split.split` keeps a tail verbatim."""
        working, counts = self.working, self.counts
        usable = max(window - self.comp.reserve_tokens, 0)
        self.split_result = result = split(
            working,
            self.policy.split,
            usable_tokens=usable,
            counter=self.counter,
            token_counts=counts,
        )
        if not result.compactable:
            return f"Nothing to compact. {result.reason}{self.prune_note}"
        cut = result.cut_index
        if self.outline_only and self.plan is not None:
            self.plan.materialise(range(cut, len(self.messages)))
        self.tail, self.tail_counts = working[cut:], counts[cut:]
        self.choice_note = result.reason
        return None

    def _whole_head(self, lead: int) -> str | None:
        """``summary-only`` and ``codex``: everything after the leading context is head."""
        self.choice_note = (
            "The whole conversation is summarised (summary-only)."
            if self.comp.strategy == "summary-only"
            else "The whole conversation is summarised; recent user messages are kept (codex)."
        )
        if not any(not m.summary and not m.synthetic for m in self.working[lead:]):
            return (
                "Nothing to compact: the conversation holds no message besides a summary or "
                "system context." + self.prune_note
            )
        return None

    # -- 3. summarise the head (T12) -----------------------------------------------------

    async def summarise(
        self,
        summarizer: Summarizer,
        previous_summary: str | None,
        on_delta: DeltaCallback | None,
        entry_cache: EntryCache | None,
    ) -> SummaryResult:
        """The summary of the head; the oldest head message is left out while the request
        overflows the summariser's context (up to ``max_head_drops`` times)."""
        comp, working = self.comp, self.working
        previous = previous_summary if previous_summary is not None else _previous_summary(working)
        self.updating = previous is not None and bool(previous.strip())
        self.prompt = get_template(comp.template).prompt(previous if self.updating else None)
        self.max_tokens = self.policy.llm.max_tokens or comp.summary_max_tokens
        messages, outputs = self._sent_messages()
        probe = summarizer if isinstance(summarizer, OverflowProbe) else None
        if probe is not None and self._head_overflows_window():
            doomed = self._refused_at_last(probe, messages, outputs)
            if doomed is not None:
                raise self._too_large(doomed) from doomed
        sent = SentHead(messages, outputs, self.comp.head_tool_output_max_chars, entry_cache)
        while True:
            self.request = []  # (the refused request's transcript goes before the next is built)
            self.request = sent.request()
            try:
                reply = await summarizer.summarize(
                    self.request, self.prompt, self.max_tokens, on_delta=on_delta
                )
                break
            except ContextOverflowError as exc:
                self._drop_refused(sent, exc, probe)
            except LLMError as exc:
                raise CompactionError(
                    f"the summary request failed: {exc}", dropped_head_messages=len(self.dropped)
                ) from exc
            except Exception as exc:  # a summariser bug or a broken stream: never keep partial text
                raise CompactionError(
                    f"the summariser failed part-way ({type(exc).__name__}: {exc}); "
                    "no summary was kept",
                    dropped_head_messages=len(self.dropped),
                ) from exc
        if not reply.text.strip():
            raise CompactionError(
                "the summariser returned an empty summary", dropped_head_messages=len(self.dropped)
            )
        return reply

    def _drops_left(self, sent: SentHead) -> int:
        """How many more head messages may be left out of the request (``max_head_drops``, and
        at least one message is sent)."""
        return min(self.comp.max_head_drops - len(self.dropped), len(sent.messages) - 1)

    def _drop_refused(
        self, sent: SentHead, exc: ContextOverflowError, probe: OverflowProbe | None
    ) -> None:
        """The request was refused (``exc``): leave out the oldest message, and more while the
        summariser says, without being built or sent the request, that it would refuse it as it
        refused the longer one; its refusal of the shortest head allowed is the error (the same
        words as sending that request). The drops and the outcome are those of building and
        sending each shorter request."""
        refusal: ContextOverflowError | None = exc
        while refusal is not None:
            if self._drops_left(sent) <= 0:
                raise self._too_large(refusal) from refusal
            self.dropped.append(sent.drop_oldest())
            refusal = probe.refusal(sent, self.prompt) if probe is not None else None

    def _head_overflows_window(self) -> bool:
        """The head's counted tokens are over the window (the policy's count, known without a
        pass over the head: the conversation's before pruning, less the pinned context's and
        the tail's): only then is the shortest head allowed measured (:meth:`_refused_at_last`;
        a head that fits the window is seldom refused, and measuring it is a pass over every
        message of it)."""
        head = self.tokens_before - self.pinned_tokens - sum(self.tail_counts)
        return head > self.window

    def _refused_at_last(
        self, probe: OverflowProbe, messages: list[Message], outputs: list[str | None] | None
    ) -> ContextOverflowError | None:
        """The probe's refusal of the shortest head allowed (``max_head_drops`` of the oldest
        messages left out), measured without writing its entries
        (:class:`~core.llm.summary_size.MeasuredHead`), when it also refuses a floor of every
        longer head's request (:meth:`~core.llm.summary_size.MeasuredHead.longer_floor`);
        None when it does not. Each request from the whole head down would then be refused:
        those drops are made and the refusal is the error, as :meth:`_drop_refused` would end,
        without building the longer heads' requests."""
        drops = min(self.comp.max_head_drops, len(messages) - 1)
        if drops < 0:
            return None
        from core.llm.summary_size import MeasuredHead  # (only a head over the window)

        shortest = MeasuredHead(
            messages[drops:],
            outputs[drops:] if outputs is not None else None,
            self.comp.head_tool_output_max_chars,
        )
        refusal = probe.refusal(shortest, self.prompt)
        if refusal is None or (
            drops and probe.refusal(shortest.longer_floor(), self.prompt) is None
        ):
            return None
        self.dropped.extend([m.id for m in messages[:drops]])
        return refusal

    def _sent_messages(self) -> tuple[list[Message], list[str | None] | None]:
        """The head messages the request carries (earlier summaries and continue-nudges carry
        nothing), and the placeholder standing in for the output of each where an outline did
        not make its pruned copy (None: no stand-ins)."""
        working, messages, plan = self.working, self.messages, self.plan
        send_at = [i for i in self.head_at if not (m := working[i]).summary and not m.synthetic]
        outputs: list[str | None] | None = None
        if self.outline_only and plan is not None and plan.pruned_at:
            outputs = [
                plan.placeholder if working[i] is messages[i] and i in plan.pruned_set else None
                for i in send_at
            ]
        return [working[i] for i in send_at], outputs

    def _too_large(self, exc: ContextOverflowError) -> CompactionError:
        dropped, limit = len(self.dropped), self.comp.max_head_drops
        return CompactionError(
            f"the summary request is too large for the summariser's context even after "
            f"leaving out the {dropped} oldest head message"
            f"{'s' if dropped != 1 else ''} (limit {limit}): {exc}",
            dropped_head_messages=dropped,
            too_large=dropped >= limit,
            head_may_shrink=self.split_result is not None and self.split_result.whole_tail,
        )

    # -- 4. reassemble, 5. continue (T11) ------------------------------------------------

    def _reassemble(self, summary: str, model: str | None) -> tuple[list[Message], list[str], int]:
        """The conversation after compaction, the ids kept after the summary, and its tokens."""
        comp, counter, head = self.comp, self.counter, self.head
        anchor = head[0] if head else self.working[0]
        last_head_id = head[-1].id if head else anchor.id
        summary_message = Message(
            index=anchor.index,
            id=f"summary:{last_head_id}",
            role=Role.SYSTEM,
            text=wrap_summary(summary),
            summary=True,
            model=model,
        )
        if comp.strategy == "codex":
            kept_users = _codex_user_messages(
                self.working, comp.user_message_budget_tokens, counter
            )
            output = [*self.pinned, *kept_users, summary_message]
            tail_ids = [m.id for m in kept_users]
            tokens_after = self.pinned_tokens + sum(counter.messages_tokens(kept_users))
        else:
            output = [*self.pinned, summary_message, *self.tail]
            tail_ids = [m.id for m in self.tail]
            tokens_after = self.pinned_tokens + sum(self.tail_counts)
        tokens_after += counter.message_tokens(summary_message)
        if self.auto and comp.continuation:
            continuation = Message(
                index=output[-1].index if output else 0,
                id=f"continue:{last_head_id}",
                role=Role.USER,
                text=comp.continuation_text,
                synthetic=True,
            )
            output.append(continuation)
            tokens_after += counter.message_tokens(continuation)
        return output, tail_ids, tokens_after

    def _reason(self) -> str:
        drop_note = ""
        if dropped := len(self.dropped):
            drop_note = (
                f" The summary request overflowed; the {dropped} oldest head message"
                f"{'s were' if dropped != 1 else ' was'} left out of it."
            )
        return f"{self.choice_note}{self.prune_note}{drop_note}".strip()

    # -- what the entry points return ----------------------------------------------------

    def result(self, reply: SummaryResult) -> CompactionResult:
        summary = reply.text.strip()
        output, tail_ids, tokens_after = self._reassemble(summary, reply.model)
        comp = self.comp
        return CompactionResult(
            compacted=True,
            reason=self._reason(),
            strategy=comp.strategy,
            template=comp.template,
            auto=self.auto,
            updated_previous_summary=self.updating,
            tokens_before=self.tokens_before,
            tokens_after=tokens_after,
            summary=summary,
            head_ids=[m.id for m in self.head],
            tail_ids=tail_ids,
            pinned_ids=[m.id for m in self.pinned],
            pruned_ids=self.pruned_ids,
            dropped_head_ids=self.dropped,
            dropped_head_messages=len(self.dropped),
            prune=self.prune_result,
            split=self.split_result,
            request_messages=self.request,
            prompt=self.prompt,
            max_tokens=self.max_tokens,
            output_messages=output,
            duration_s=time.perf_counter() - self.started,
            usage=reply.usage,
            model=reply.model,
        )

    def outline(self, reply: SummaryResult) -> CompactionOutline:
        summary = reply.text.strip()
        output, _, _ = self._reassemble(summary, reply.model)
        return CompactionOutline(
            compacted=True,
            reason=self._reason(),
            summary=summary,
            head_ids=[m.id for m in self.head],
            pruned_ids=self.pruned_ids,
            dropped_head_messages=len(self.dropped),
            output_messages=output,
            prune_reasons=self.plan.reasons() if self.plan is not None else [],
        )

    def nothing_result(self) -> CompactionResult:
        """The result when there is no head to summarise: the (pruned) input, unchanged
        otherwise."""
        comp, prune_result = self.comp, self.prune_result
        return CompactionResult(
            compacted=False,
            reason=self.nothing_reason or "",
            strategy=comp.strategy,
            template=comp.template,
            auto=self.auto,
            updated_previous_summary=False,
            tokens_before=self.tokens_before,
            tokens_after=sum(self.counts),
            summary="",
            head_ids=[],
            tail_ids=[m.id for m in self.working],
            pinned_ids=[],
            pruned_ids=prune_result.pruned_ids if prune_result is not None else [],
            dropped_head_ids=[],
            dropped_head_messages=0,
            prune=prune_result,
            split=self.split_result,
            request_messages=[],
            prompt="",
            max_tokens=0,
            output_messages=self.working,
            duration_s=time.perf_counter() - self.started,
            usage=None,
            model=None,
        )

    def nothing_outline(self) -> CompactionOutline:
        plan = self.plan
        if plan is not None:
            plan.materialise(plan.pruned_at)
        return CompactionOutline(
            compacted=False,
            reason=self.nothing_reason or "",
            summary="",
            head_ids=[],
            pruned_ids=self.pruned_ids,
            dropped_head_messages=0,
            output_messages=list(self.working),
            prune_reasons=plan.reasons() if plan is not None else [],
        )


def _on_private_loop(
    function: Callable[_P, Coroutine[Any, Any, _R]],
) -> Callable[_P, _R]:
    """``function`` run to completion on a private event loop, taking the same arguments.

    Not ``asyncio.run``: in the main thread that installs a SIGINT handler whose set-up formats the
    task's repr, which costs tens of milliseconds per call on long conversations (measured).
    """

    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        import asyncio  # only when a compaction runs: a command that never compacts starts faster

        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(function(*args, **kwargs))
        finally:
            loop.close()

    return run


compact_sync = _on_private_loop(compact)
""":func:`compact` run to completion on a private event loop (for threads without a running loop;
do not call it from a thread that already runs one). Same arguments, same result."""
