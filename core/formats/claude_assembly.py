"""The active branch of a Claude Code transcript, assembled into messages and compactions.

The block lines of one API message (same ``message.id`` + ``requestId``) merge into one
:class:`Call`, whose usage is counted once (the largest copy wins: earlier copies are written
mid-stream); every other entry becomes a user, tool or meta message, and a compact boundary a
:class:`~core.model.session.CompactionEvent`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from sys import intern
from typing import Any

from core.agents.overflow_errors import is_context_overflow_message
from core.formats.base import SessionBuilder
from core.formats.claude_compactions import is_typed_compact, trigger_of
from core.formats.claude_records import API_ERROR, ASSISTANT, ATTACHMENT, BOUNDARY, USER, Entry
from core.model.read_numbers import as_int
from core.model.session import Message, Role, ToolCall, ToolResult, Usage, UsageConvention

# A slash command and its local output are written as user lines, but the user did not type
# them as a request: they are context (meta), not the start of a turn.
_COMMAND_PREFIXES = ("<command-name>", "<command-message>", "<local-command-")


def usage_of(raw: dict[str, Any]) -> Usage:
    return Usage(
        input=as_int(raw.get("input_tokens")),
        output=as_int(raw.get("output_tokens")),
        cache_read=as_int(raw.get("cache_read_input_tokens")),
        cache_write=as_int(raw.get("cache_creation_input_tokens")),
        reasoning=0,
        total=None,
        convention=UsageConvention.ANTHROPIC,
    )


def _usage_size(usage: Usage) -> int:
    return usage.prompt_tokens + usage.output


class Call:
    """One API message being assembled from its block lines."""

    __slots__ = ("calls", "entry", "error", "id", "model", "reasoning", "stop", "texts", "usage")

    def __init__(self, entry: Entry, message_id: str) -> None:
        self.entry = entry
        self.id = message_id
        self.texts: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[ToolCall] = []
        self.usage: Usage | None = None
        self.model: str | None = None
        self.stop: str | None = None
        self.error: str | None = None

    def merge(self, entry: Entry) -> None:
        self.texts.extend(entry.texts)
        self.reasoning.extend(entry.reasoning)
        if entry.calls:
            known = {c.id for c in self.calls}
            self.calls.extend(c for c in entry.calls if c.id not in known)
        usage = entry.call_usage
        if usage is not None and (
            self.usage is None
            # the same usage repeated on every block line: compare sizes only when it changed
            or (usage != self.usage and _usage_size(usage) > _usage_size(self.usage))
        ):
            self.usage = usage
        if entry.model:
            self.model = entry.model
        if entry.stop_reason:
            self.stop = entry.stop_reason
        if entry.error:
            self.error = entry.error


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
    ) -> None:
        self.parents = parents
        self.builder = builder
        self.flag_sidechain = flag_sidechain
        self.compact_commands = compact_commands
        """Boundary line -> the lines of the /compact commands recorded around it."""
        self.segments = segments
        """Boundary uuid -> the lines its partial compaction kept verbatim, head first."""
        self.emitted: set[str] = set()
        """The ids of the messages added so far."""
        self.overflow: tuple[int, str] | None = None
        """A context-overflow error since the last successful model call: (line, text)."""
        self.owner: dict[str, str] = {}  # line uuid -> id of the message holding it
        self.tool_names: dict[str, str] = {}
        self.call_ids: dict[str, str] = {}
        """Each tool call's id, the string its call holds: its result holds the same one."""
        self.answered: set[str] = set()
        self.max_context = 0
        self.provider: tuple[str, str] | None = None
        """Who served the main model, and what says so, when the ids or the model tell."""

    def run(self, entries: list[Entry]) -> None:
        order = self._merge(entries)
        calls = [item for item in order if isinstance(item, Call)]
        for call in calls:
            for tc in call.calls:
                tc.name = intern(tc.name)
                self.tool_names[tc.id] = tc.name
                self.call_ids[tc.id] = tc.id
        for item in order:
            if isinstance(item, Call):
                self._call(item)
            elif item.kind == BOUNDARY:
                self._boundary(item)
            elif item.kind == API_ERROR:
                self.overflow = (item.line, item.error or "")
            else:
                self._results(item)
                self._user_text(item)
        for call in calls:
            self._check_answered(call)
        self.builder.metadata["max_recorded_context"] = self.max_context

    def _merge(self, entries: list[Entry]) -> list[Entry | Call]:
        """The entries in file order, the block lines of each API message merged into the
        :class:`Call` that stands where its first line was."""
        calls_by_key: dict[tuple[str, str | None], Call] = {}
        order: list[Entry | Call] = []
        used_ids: set[str] = set()
        for entry in entries:
            if entry.kind != ASSISTANT or entry.key is None:
                used_ids.add(entry.uuid)
                if entry.texts or entry.results:  # it makes a message with this id
                    self.owner[entry.uuid] = entry.uuid
                order.append(entry)
                continue
            call = calls_by_key.get(entry.key)
            if call is None:
                message_id = entry.key[0]
                if message_id in used_ids:
                    message_id = f"{message_id}#{entry.uuid}"
                used_ids.add(message_id)
                call = Call(entry, message_id)
                calls_by_key[entry.key] = call
                order.append(call)
            call.merge(entry)
            self.owner[entry.uuid] = call.id
            if entry.results:
                order.append(entry)  # server tool results carried in the reply
        return order

    def _parent_message(self, uuid: str | None) -> str | None:
        """The id of the message holding the nearest line at or above ``uuid`` that made one."""
        steps = 0
        while uuid is not None and steps < 10_000:
            found = self.owner.get(uuid)
            if found is not None:
                return found
            uuid = self.parents.get(uuid)
            steps += 1
        return None

    def _call(self, item: Call) -> None:
        """One API message: an assistant message."""
        first = item.entry
        usage = item.usage
        if item.model == "<synthetic>":
            usage = None  # an error Claude Code wrote itself: no model call happened
        sidechain = first.sidechain and self.flag_sidechain
        if usage is None and item.error and is_context_overflow_message(item.error):
            self.overflow = (first.line, item.error)
        if usage is not None and not sidechain:
            self.overflow = None
            self.max_context = max(self.max_context, usage.prompt_tokens)
            if item.model:
                self.builder.model = item.model
            self.provider = provider_of(first.key[0] if first.key else "", item.model)
        self._add(
            Role.ASSISTANT,
            id=item.id,
            parent_id=self._parent_message(first.parent),
            timestamp=first.timestamp,
            text="\n\n".join([t for t in item.texts if t]),
            reasoning="\n\n".join([t for t in item.reasoning if t]),
            tool_calls=item.calls,
            usage=usage,
            # the same few names on every call: one string each, not one per call
            model=None if item.model is None else intern(item.model),
            stop_reason=None if item.stop is None else intern(item.stop),
            error=item.error,
            sidechain=sidechain,
            source_line=first.line,
            source_offset=first.offset,
        )

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
            if message_id is not None and message_id in self.emitted:
                return message_id
        return None

    def _add(self, role: Role, **fields: Any) -> Message:
        """Add a message to the session (and remember its id)."""
        message = self.builder.add(role, **fields)
        self.emitted.add(message.id)
        return message

    def _results(self, entry: Entry) -> None:
        """The tool results of a line: one tool message each."""
        if not entry.results:
            return
        parent_id = self._parent_message(entry.parent)
        sidechain = entry.sidechain and self.flag_sidechain
        for k, (call_id, output, is_error) in enumerate(entry.results):
            name = self.tool_names.get(call_id)
            if name is None:
                self.builder.diagnostic(
                    entry.line,
                    "orphan-tool-result",
                    f"tool result for call {call_id or '(no id)'} whose call is not in the "
                    "conversation; loaded without a tool name",
                )
            self.answered.add(call_id)
            self._add(
                Role.TOOL,
                id=entry.uuid if k == 0 else f"{entry.uuid}#{k}",
                parent_id=parent_id,
                timestamp=entry.timestamp,
                tool_result=_tool_result(
                    self.call_ids.get(call_id, call_id), name, output, is_error
                ),
                sidechain=sidechain,
                source_line=entry.line,
                source_offset=entry.offset,
            )

    def _user_text(self, entry: Entry) -> None:
        """The text of a user line: a user message (meta, or a compaction's summary)."""
        if (entry.kind != USER and entry.kind != ATTACHMENT) or not entry.texts:
            return  # an empty user line (no text, no result)
        if entry.results and not any(entry.texts):
            return  # tool results only
        text = "\n\n".join(entry.texts)
        message = self._add(
            Role.USER,
            id=entry.uuid if not entry.results else f"{entry.uuid}#text",
            parent_id=self._parent_message(entry.parent),
            timestamp=entry.timestamp,
            text=text,
            summary=entry.summary,
            meta=entry.meta or text.startswith(_COMMAND_PREFIXES) or is_typed_compact(text),
            sidechain=entry.sidechain and self.flag_sidechain,
            source_line=entry.line,
            source_offset=entry.offset,
        )
        compactions = self.builder.compactions
        if entry.summary and compactions:
            event = compactions[-1]
            if event.summary is None and event.message_index == message.index:
                event.summary = text

    def _check_answered(self, item: Call) -> None:
        for tc in item.calls:
            if tc.id not in self.answered:
                self.builder.diagnostic(
                    item.entry.line,
                    "missing-tool-result",
                    f"tool call {tc.id} ({tc.name}) has no result in the file",
                )


def _tool_result(call_id: str, name: str | None, output: str, is_error: bool) -> ToolResult:
    return ToolResult(
        call_id=call_id,
        tool_name=name,
        output=output,
        is_error=is_error,
        truncated_by_tool=False,
        compacted_at_ms=None,
    )
