"""The active branch of a Claude Code transcript, assembled into messages and compactions.

The block lines of one API message (same ``message.id`` + ``requestId``) merge into the entry
of its first line (:data:`CALL`), whose usage is counted once (the largest copy wins: earlier copies are written
mid-stream); every other entry becomes a user, tool or meta message, and a compact boundary a
:class:`~core.model.session.CompactionEvent`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from core.agents.overflow_errors import is_context_overflow_message
from core.formats.base import SessionBuilder
from core.formats.claude_compactions import is_typed_compact, trigger_of
from core.formats.claude_records import (
    API_ERROR,
    ASSISTANT,
    ATTACHMENT,
    BOUNDARY,
    META,
    SIDECHAIN,
    SUMMARY,
    USER,
    Entry,
    set_texts,
    texts_of,
)
from core.model.read_numbers import as_int
from core.model.session import (
    CALL_FLAGS,
    FLAG_MAIN,
    Message,
    Role,
    ToolCall,
    ToolResult,
    Usage,
    UsageConvention,
)

_ASSISTANT, _TOOL, _USER = Role.ASSISTANT, Role.TOOL, Role.USER

# A slash command and its local output are written as user lines, but the user did not type
# them as a request: they are context (meta), not the start of a turn.
_COMMAND_PREFIXES = ("<command-name>", "<command-message>", "<local-command-")


_ANTHROPIC = UsageConvention.ANTHROPIC


def usage_of(raw: dict[str, Any]) -> Usage:
    """The usage of a (checked) usage object."""
    return usage_of_counts(
        as_int(raw.get("input_tokens")),
        as_int(raw.get("output_tokens")),
        as_int(raw.get("cache_read_input_tokens")),
        as_int(raw.get("cache_creation_input_tokens")),
    )


def usage_of_counts(
    prompt: int | None, output: int | None, cache_read: int | None, cache_write: int | None
) -> Usage:
    """The usage of a call from its four counts (missing: 0)."""
    return Usage(
        input=prompt or 0,
        output=output or 0,
        cache_read=cache_read or 0,
        cache_write=cache_write or 0,
        convention=_ANTHROPIC,
    )


def _usage_size(usage: Usage) -> int:
    return usage.prompt_tokens + usage.output


CALL = 5
"""The kind :meth:`Assembler._merge` gives the entry of an API message's first line: the entry
then stands for the whole message (its later block lines merged in by :func:`merge_line`), so
that no object is made per call (52,372 calls in a 100 MB session)."""


def merge_line(call: Entry, entry: Entry) -> None:
    """Another block line of the API message whose first line's entry is ``call``. The first
    line's sequences are its own, never changed: a later line's are added to copies; the usage
    counted is the largest copy (earlier copies are written mid-stream)."""
    texts = texts_of(entry)
    if texts:
        set_texts(call, [*texts_of(call), *texts])
    if entry.reasoning:
        call.reasoning = [*call.reasoning, *entry.reasoning]
    if entry.calls:
        known = {c.id for c in call.calls}
        call.calls = [*call.calls, *(c for c in entry.calls if c.id not in known)]
    usage = entry.call_usage
    current = call.call_usage
    if usage is not None and (
        current is None
        # the same usage repeated on every block line: compare sizes only when it changed
        or (usage != current and _usage_size(usage) > _usage_size(current))
    ):
        call.call_usage = usage
    if entry.model:
        call.model = entry.model
    if entry.stop_reason:
        call.stop_reason = entry.stop_reason
    if entry.error:
        call.error = entry.error


# Bedrock model ids: "anthropic.claude-…-v1:0", with a cross-region prefix ("us.", "eu.",
# "apac.", "global.") or as an inference-profile ARN.
_BEDROCK_MODEL = re.compile(r"^(?:[a-z]+\.)?anthropic\.claude|^arn:aws:bedrock:")


def provider_of(message_id: str, model: str | None) -> tuple[str, str] | None:
    """``(provider, evidence)`` when a call's message id or model id names a cloud provider
    (Bedrock ``msg_bdrk_…``, Vertex ``msg_vrtx_…`` or ``claude-…@date``); None for Anthropic's
    own API, which has no mark of its own."""
    if message_id.startswith("msg_bdrk_"):
        return "amazon-bedrock", "message ids are msg_bdrk_…"
    if message_id.startswith("msg_vrtx_"):
        return "google-vertex", "message ids are msg_vrtx_…"
    return _provider_of_model(model)


@lru_cache(maxsize=64)
def _provider_of_model(model: str | None) -> tuple[str, str] | None:
    """What a model id alone says of its provider (asked once per call: cached per model)."""
    if model and _BEDROCK_MODEL.search(model):
        return "amazon-bedrock", f"model id {model} is a Bedrock id"
    if model and "@" in model:
        return "google-vertex", f"model id {model} is a Vertex id"
    return None


class Assembler:
    """Emits the entries of the active branch as messages, in model order: the block lines of
    an API message merged into one assistant message, then one method per kind of entry."""

    def __init__(
        self,
        parents: dict[str, str | None],
        builder: SessionBuilder,
        *,
        flag_sidechain: bool,
        compact_commands: dict[int, list[int]],
        segments: dict[str, list[str]],
        linked: bool = False,
    ) -> None:
        self.parents = parents
        self.builder = builder
        self.flag_sidechain = flag_sidechain
        self.compact_commands = compact_commands
        """Boundary line -> the lines of the /compact commands recorded around it."""
        self.segments = segments
        """Boundary uuid -> the lines its partial compaction kept verbatim, head first."""
        self._emitted: set[str] = set()
        """The ids of the messages added so far (brought up to date when asked: :meth:`emitted`)."""
        self._emitted_upto = 0
        self.overflow: tuple[int, str] | None = None
        """A context-overflow error since the last successful model call: (line, text)."""
        self.owner: dict[str, str] = {}
        """Line uuid -> id of the message holding it: every line's, or, when every line names
        the one before it as its parent (``linked``) and no partial compaction asks which
        message holds a line, only the last one's (:meth:`_merge`)."""
        self.linked = linked and not segments
        """The lines are linked (see :attr:`owner`): a line's nearest ancestor holding a message
        is the last line before it that does."""
        self.tools: dict[str, ToolCall] = {}
        """Each tool call by its id: its result is named after it and holds its id string (one
        table for both: two of 52,000 calls each were 2.6 MB more at a 100 MB load's peak)."""
        self.answered: set[str] = set()
        self.max_context = 0
        self.provider: tuple[str, str] | None = None
        """Who served the main model, and what says so, when the ids or the model tell."""
        self.errors: list[str] = []
        """The error of each main (not sidechain) assistant message with one, in order: what
        the window's reader looks for a stated window in (no pass over the messages for it)."""
        self._last_call: Entry | None = None
        """The last main call with a usage: its message id and model are what the provider is
        read from (after the run: only the last one counts)."""

    def run(self, entries: list[Entry]) -> None:
        """Add the messages and compactions of ``entries`` (the list is emptied: each entry is
        let go once its message is made, so that entries and messages are not all held at once).
        """
        order, calls = self._merge(entries)
        entries.clear()
        tools = self.tools
        checks: list[tuple[int, Sequence[ToolCall]]] = []
        for call in calls:
            tool_calls = call.calls
            if tool_calls:
                for tc in tool_calls:
                    tools[tc.id] = tc
                checks.append((call.line, tool_calls))
        calls.clear()
        order.reverse()
        pop, add_call, add_results, add_text = order.pop, self._call, self._results, self._user_text
        while order:
            item = pop()
            kind = item.kind
            if kind == CALL:
                add_call(item)
                if item.results:
                    add_results(item)  # server tool results carried in the reply
                continue
            if kind == BOUNDARY:
                self._boundary(item)
            elif kind == API_ERROR:
                self.overflow = (item.line, item.error or "")
            else:
                if item.results:
                    add_results(item)
                if (item.one_text is not None or item.more_texts) and kind in (USER, ATTACHMENT):
                    add_text(item)
        if not self.answered.issuperset(tools):  # (the usual session: every call answered)
            self._missing_results(checks)
        self.builder.metadata["max_recorded_context"] = self.max_context
        last = self._last_call
        if last is not None:
            # (the message's id: its API message id, or that id with ``#uuid`` after it, which
            # starts as the API id does, all that is read of it)
            self.provider = provider_of(last.message_id or "", last.model)

    def _merge(self, entries: list[Entry]) -> tuple[list[Entry], list[Entry]]:
        """The entries in file order, the block lines of each API message merged into its first
        line's entry (made a :data:`CALL`, its ``message_id`` the message's id), which stands
        where that line was, a later line left only for the tool results it carries; and the
        calls alone.

        An API message is found by its message id, and by its request id too only when its
        first line's differs (a message id in several requests): no ``(message id, request
        id)`` tuple per call (52,000 of them, 3.3 MB, at the peak of a 100 MB session's load).

        Each entry's ``parent`` becomes the id of its parent message (:meth:`_parent_message`),
        found as it is reached when the lines are :attr:`linked` (the last line before it holding
        a message is the one: no table of every line's, 5 MB of a 100 MB session), else once
        :attr:`owner` holds every line."""
        calls_by_id: dict[str, Entry] = {}  # the first API message of each message id
        calls_by_key: dict[tuple[str, str | None], Entry] = {}  # the others (rare)
        order: list[Entry] = []
        calls: list[Entry] = []
        used_ids: set[str] = set()
        owner, linked = self.owner, self.linked
        last_uuid: str | None = None  # (linked: the last line holding a message, and its id)
        last_id: str | None = None
        use, put, find = used_ids.add, order.append, calls_by_id.get
        for entry in entries:
            uuid = entry.uuid
            if linked:  # its parent message, known now: the lines before it are read
                parent = entry.parent
                entry.parent = (
                    last_id
                    if parent == last_uuid
                    else self._linked_parent(parent, last_uuid, last_id)
                )
            first_id = entry.message_id
            if first_id is None or entry.kind != ASSISTANT:
                use(uuid)
                put(entry)
                if entry.one_text is None and not entry.more_texts and not entry.results:
                    continue  # it makes no message
                owner_id = uuid  # (it makes a message with this id)
            else:
                request_id = entry.request_id
                call = find(first_id)
                if call is not None and call.request_id != request_id:
                    call = calls_by_key.get((first_id, request_id))
                if call is None:
                    call = entry
                    call.kind = CALL
                    message_id = first_id
                    if message_id in used_ids:
                        call.message_id = message_id = f"{message_id}#{uuid}"
                    use(message_id)
                    if first_id in calls_by_id:
                        calls_by_key[first_id, request_id] = call
                    else:
                        calls_by_id[first_id] = call
                    put(call)  # (with the server tool results it carries, if any)
                    calls.append(call)
                else:
                    merge_line(call, entry)
                    if entry.results:
                        put(entry)  # server tool results carried in the reply
                owner_id = call.message_id or uuid  # (a call's is set)
            if linked:
                last_uuid, last_id = uuid, owner_id
            else:
                owner[uuid] = owner_id
        if not linked:  # (every line's message known: now each entry's parent's)
            for item in order:
                item.parent = self._parent_message(item.parent)
        return order, calls

    def _linked_parent(self, uuid: str | None, last: str | None, last_id: str | None) -> str | None:
        """:meth:`_parent_message` of a linked line's parent that is not ``last``, the last line
        before it holding a message (whose id is ``last_id``): the only line of :attr:`owner`
        then, since the lines between hold none."""
        owner = self.owner
        owner.clear()
        if last is not None and last_id is not None:
            owner[last] = last_id
        return self._parent_message(uuid)

    def _parent_message(self, uuid: str | None) -> str | None:
        """The id of the message holding the nearest line at or above ``uuid`` that made one."""
        if uuid is None:
            return None
        found = self.owner.get(uuid)  # the usual case: the parent line made a message
        if found is not None:
            return found
        steps = 0
        while uuid is not None and steps < 10_000:
            found = self.owner.get(uuid)
            if found is not None:
                return found
            uuid = self.parents.get(uuid)
            steps += 1
        return None

    def _call(self, item: Entry) -> None:
        """One API message (the entry of its first line, its later lines merged in): an
        assistant message."""
        usage = item.call_usage
        model, error = item.model or None, item.error or None  # (a plain read's "": none)
        if model == "<synthetic>":
            usage = None  # an error Claude Code wrote itself: no model call happened
        sidechain = item.flags & SIDECHAIN != 0 and self.flag_sidechain
        if error:
            if usage is None and is_context_overflow_message(error):
                self.overflow = (item.line, error)
            if not sidechain:
                self.errors.append(error)
        if usage is not None and not sidechain:
            self.overflow = None
            prompt = usage.prompt_tokens
            if prompt > self.max_context:
                self.max_context = prompt
            if model:
                self.builder.model = model
            self._last_call = item
        one, reasoning, calls = item.one_text, item.reasoning, item.calls
        if calls and type(calls) is not list:
            calls = list(calls)  # (a list, as the ctxscope reader gives back: the copies are equal)
        message = Message(  # built here and appended: no keyword dict built twice per message
            index=0,
            role=_ASSISTANT,
            id=item.message_id or item.uuid,  # (a call's is set)
            parent_id=item.parent,  # (its parent message's id: see _merge)
            timestamp=item.timestamp,
            text=one if one is not None else "\n\n".join([t for t in item.more_texts if t]),
            reasoning=("\n\n".join([t for t in reasoning if t]) if reasoning else ""),
            tool_calls=calls,  # none: the entry's empty tuple, which every such message shares
            usage=usage,
            model=model,  # (the model and stop reason are interned as the lines are read)
            stop_reason=item.stop_reason or None,
            error=error,
            sidechain=sidechain,
            source_line=item.line,
            source_offset=item.offset,
        )
        self.builder.append(message, 0 if sidechain else CALL_FLAGS)  # (a call, not a summary)

    def _boundary(self, entry: Entry) -> None:
        """A compact boundary: a compaction event (the next message is its boundary)."""
        meta = entry.usage or {}
        trigger, evidence = trigger_of(
            meta, entry.line, self.compact_commands.get(entry.line, []), self.overflow
        )
        self.overflow = None
        event = self.builder.add_compaction(
            trigger=trigger,
            tokens_before=as_int(meta.get("preTokens"), None),
            tokens_after=as_int(meta.get("postTokens"), None),
            first_kept_id=self._first_kept(entry.uuid),
            source_line=entry.line,
        )
        event.trigger_evidence = evidence

    def _first_kept(self, boundary: str) -> str | None:
        """The first message a partial compaction kept verbatim, among those already added (a
        segment that is not in the file, or not before the compaction, is not one)."""
        for uuid in self.segments.get(boundary, ()):
            message_id = self.owner.get(uuid)
            if message_id is not None and message_id in self.emitted():
                return message_id
        return None

    def emitted(self) -> set[str]:
        """The ids of the messages added so far (kept up to date only when asked: a partial
        compaction's boundary is rare, a message is added for every line)."""
        messages = self.builder.messages
        if self._emitted_upto < len(messages):
            self._emitted.update([m.id for m in messages[self._emitted_upto :]])
            self._emitted_upto = len(messages)
        return self._emitted

    def _results(self, entry: Entry) -> None:
        """The tool results of a line (it has some): one tool message each."""
        parent_id = entry.parent  # (its parent message's id: see _merge)
        sidechain = entry.flags & SIDECHAIN != 0 and self.flag_sidechain
        append, tools = self.builder.append, self.tools
        answered = self.answered.add
        uuid, timestamp, line, offset = entry.uuid, entry.timestamp, entry.line, entry.offset
        for k, (call_id, output, is_error) in enumerate(entry.results):
            call = tools.get(call_id)
            if call is None:
                name = None
                self.builder.diagnostic(
                    entry.line,
                    "orphan-tool-result",
                    f"tool result for call {call_id or '(no id)'} whose call is not in the "
                    "conversation; loaded without a tool name",
                )
            else:
                # (its call's name, interned as the lines are read, and id string)
                name, call_id = call.name, call.id
            answered(call_id)
            message = Message(
                index=0,
                role=_TOOL,
                id=uuid if k == 0 else f"{uuid}#{k}",
                parent_id=parent_id,
                timestamp=timestamp,
                tool_result=ToolResult(
                    call_id=call_id,
                    tool_name=name,
                    output=output,
                    is_error=is_error,
                ),
                sidechain=sidechain,
                source_line=line,
                source_offset=offset,
            )
            append(message, 0 if sidechain else FLAG_MAIN)  # (a tool message: neither)

    def _user_text(self, entry: Entry) -> None:
        """The text of a user or attachment line (it has some): a user message (meta, or a
        compaction's summary)."""
        one = entry.one_text
        if one is not None:
            text = one  # (the usual line: its one text)
        else:
            texts = entry.more_texts
            if entry.results and not any(texts):
                return  # tool results only
            text = "\n\n".join(texts)
        if entry.results and not text:
            return  # (one empty text beside tool results: as none)
        flags = entry.flags
        message = Message(
            index=0,
            role=_USER,
            id=entry.uuid if not entry.results else f"{entry.uuid}#text",
            parent_id=entry.parent,  # (its parent message's id: see _merge)
            timestamp=entry.timestamp,
            text=text,
            summary=flags & SUMMARY != 0,
            meta=flags & META != 0 or text.startswith(_COMMAND_PREFIXES) or is_typed_compact(text),
            sidechain=flags & SIDECHAIN != 0 and self.flag_sidechain,
            source_line=entry.line,
            source_offset=entry.offset,
        )
        self.builder.append(message)
        compactions = self.builder.compactions
        if flags & SUMMARY and compactions:
            event = compactions[-1]
            if event.summary is None and event.message_index == message.index:
                event.summary = text

    def _missing_results(self, checks: list[tuple[int, Sequence[ToolCall]]]) -> None:
        """A diagnostic for each call without a result, in the order of the calls (``checks``:
        each call's line and tool calls)."""
        answered = self.answered
        for line, tool_calls in checks:
            for tc in tool_calls:
                if tc.id not in answered:
                    self.builder.diagnostic(
                        line,
                        "missing-tool-result",
                        f"tool call {tc.id} ({tc.name}) has no result in the file",
                    )
