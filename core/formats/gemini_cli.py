"""Gemini CLI chat logs (``~/.gemini/tmp/<project>/chats/session-*.jsonl`` and ``*.json``).

Two forms, told apart by the first line:

* **JSON Lines** (Gemini CLI since 2026-04): a metadata line ``{sessionId, projectHash,
  startTime, lastUpdated, kind, directories}``, then one line per message (an updated message is
  appended again with the same ``id``: the last copy wins, in the place of the first),
  ``{"$set": {...}}`` lines that update the metadata, ``{"$set": {"messages": [...]}}``
  checkpoints that replace the whole conversation, and ``{"$rewindTo": id}`` lines that drop
  that message and everything after it.
* **single JSON** (older): one object ``{sessionId, projectHash, startTime, lastUpdated,
  messages[], kind}``, keys in any order.

A message is ``user`` / ``gemini`` / ``info`` / ``error`` / ``warning``; only ``user`` and
``gemini`` ones are sent to the model. A ``gemini`` message is one model call: its text, its
``thoughts[]``, its ``model``, its ``tokens {input, output, cached, thoughts, tool, total}``
(``input`` is the prompt as sent, cached tokens included: the figure Gemini CLI compares with its
compression threshold) and its ``toolCalls[]`` with their results inline.

A compression shows as a checkpoint whose first message is a new ``<state_snapshot>`` summary:
the conversation before it is kept as it was, a recorded compaction follows, and the
checkpoint's messages that were already in the conversation are the kept tail
(``first_kept_id``). Sub-agent chats (``kind: subagent``) are stored as
``chats/<parent session id>/<id>.jsonl`` and load as sessions of their own, with their parent's
id. The window is Gemini CLI's own token limit for the model (:mod:`core.agents.constants`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from core.agents.constants import constant as agent_fact
from core.formats.base import LoadError, ProgressCallback, SessionBuilder, as_str
from core.formats.compressed import open_session
from core.formats.gemini_parts import (
    function_calls,
    function_responses,
    is_state_snapshot,
    parts_of,
    read_tokens,
    thought_text,
    usage_of,
    visible_text,
)
from core.formats.jsonl import looks_binary, read_jsonl
from core.formats.sniffers import is_gemini_jsonl as _is_jsonl
from core.formats.sniffers import sniff_gemini_cli
from core.model.session import Role, Session, SourceFormat, ToolCall, ToolResult

FORMAT = SourceFormat.GEMINI_CLI
PARTIAL_READS = False

LEGACY_MAX_BYTES = 512 * 1024 * 1024
"""A single-JSON chat file is parsed whole; beyond this size it is refused with a message."""
_SENT_TYPES = frozenset({"user", "gemini"})
_UI_TYPES = frozenset({"info", "error", "warning"})

Record = dict[str, Any]


@dataclass(slots=True)
class _Entry:
    """The latest copy of one message, with the line it was read from."""

    record: Record
    line: int
    offset: int


@dataclass(slots=True)
class _Compaction:
    """A checkpoint that starts with a new state snapshot."""

    line: int
    summary: str
    first_kept_id: str | None


@dataclass(slots=True)
class _Timeline:
    """Gemini CLI's records replayed in order: the conversation as it stands (``live``), what
    went before the compactions (``emitted``) and the latest copy of every message."""

    builder: SessionBuilder
    latest: dict[str, _Entry] = field(default_factory=dict)
    live: dict[str, None] = field(default_factory=dict)
    emitted: list[str | _Compaction] = field(default_factory=list)
    flushed: set[str] = field(default_factory=set)
    metadata: Record = field(default_factory=dict)
    rewinds: int = 0
    dropped: int = 0

    def record(self, line: int, offset: int, obj: Record) -> None:
        """One line of the JSON Lines form."""
        if isinstance(obj.get("$rewindTo"), str):
            self.rewind(line, obj["$rewindTo"])
        elif isinstance(obj.get("id"), str):
            self.message(line, offset, obj)
        elif isinstance(obj.get("$set"), dict):
            update = obj["$set"]
            messages = update.get("messages")
            self.metadata.update({k: v for k, v in update.items() if k != "messages"})
            if isinstance(messages, list):
                self.checkpoint(line, offset, messages)
        elif isinstance(obj.get("sessionId"), str):
            self.metadata.update(obj)
        else:
            self.builder.info(line, "unknown-record", "a line of no known kind, skipped")

    def message(self, line: int, offset: int, obj: Record) -> None:
        """A message line: the last copy of an id wins, in the place of its first copy."""
        message_id = obj["id"]
        self.latest[message_id] = _Entry(obj, line, offset)
        if message_id not in self.live and message_id not in self.flushed:
            self.live[message_id] = None

    def rewind(self, line: int, message_id: str) -> None:
        """``$rewindTo``: the message and everything after it leave the conversation."""
        self.rewinds += 1
        ids = list(self.live)
        if message_id in self.live:
            cut = ids.index(message_id)
        else:
            cut = 0
            self.builder.diagnostic(
                line,
                "rewind-unknown",
                f"rewind to {message_id!r}, a message not in the conversation: the conversation "
                "so far is dropped, as Gemini CLI does",
            )
        for dropped in ids[cut:]:
            del self.live[dropped]
        self.dropped += len(ids) - cut

    def checkpoint(self, line: int, offset: int, messages: list[Any]) -> None:
        """``$set.messages``: the conversation is replaced by this list (a compression when it
        starts with a new state snapshot)."""
        records = [m for m in messages if isinstance(m, dict) and isinstance(m.get("id"), str)]
        if len(records) < len(messages):
            self.builder.diagnostic(
                line, "bad-message", "checkpoint entries without an id were skipped"
            )
        first = records[0] if records else None
        if (
            first is not None
            and first["id"] not in self.live
            and first["id"] not in self.flushed
            and is_state_snapshot(parts_of(first.get("content")))
        ):
            for message_id in self.live:
                if message_id not in self.flushed:
                    self.emitted.append(message_id)
                    self.flushed.add(message_id)
            kept = next((r["id"] for r in records[1:] if r["id"] in self.flushed), None)
            summary = visible_text(parts_of(first.get("content")))
            self.emitted.append(_Compaction(line=line, summary=summary, first_kept_id=kept))
        gone = [m for m in self.live if m not in {r["id"] for r in records}]
        self.dropped += len(gone)
        self.live = {}
        for record in records:
            self.latest[record["id"]] = _Entry(record, line, offset)
            self.live[record["id"]] = None

    def order(self) -> list[str | _Compaction]:
        """Every message the model was sent, in order, with the compactions between them."""
        tail = [m for m in self.live if m not in self.flushed]
        return [*self.emitted, *tail]


class _Messages:
    """Turns Gemini CLI message records into ctxscope messages."""

    def __init__(self, builder: SessionBuilder) -> None:
        self.builder = builder
        self.answered: set[str] = set()
        self.model: str | None = None
        self.after_snapshot = False
        self.skipped_ui = 0

    def add(self, entry: _Entry, *, summary: bool = False) -> None:
        record = entry.record
        kind = record.get("type") if isinstance(record.get("type"), str) else None
        if kind in _UI_TYPES:
            self.skipped_ui += 1
            return
        if kind not in _SENT_TYPES:
            self.builder.info(entry.line, "unknown-type", f"message type {kind!r}, skipped")
            return
        if kind == "user":
            self._user(entry, summary)
        else:
            self._gemini(entry)

    def _common(self, entry: _Entry) -> dict[str, Any]:
        timestamp = entry.record.get("timestamp")
        return {
            "timestamp": timestamp if isinstance(timestamp, str) else None,
            "source_line": entry.line,
            "source_offset": entry.offset,
        }

    def _user(self, entry: _Entry, summary: bool) -> None:
        parts = parts_of(entry.record.get("content"))
        message_id = entry.record["id"]
        results = function_responses(parts)
        for n, result in enumerate(results):
            if result.call_id is not None and result.call_id in self.answered:
                continue  # already answered inline by its call's record
            call_id = result.call_id or f"{message_id}-{n}"
            self.answered.add(call_id)
            self.builder.add(
                Role.TOOL,
                id=f"{message_id}:{call_id}",
                tool_result=ToolResult(
                    call_id=call_id,
                    tool_name=result.name,
                    output=result.output,
                    is_error=result.is_error,
                ),
                **self._common(entry),
            )
        text = visible_text(parts)
        if text or not results:
            self.builder.add(
                Role.USER, id=message_id, text=text, summary=summary, **self._common(entry)
            )
        self.after_snapshot = summary

    def _gemini(self, entry: _Entry) -> None:
        record = entry.record
        message_id = record["id"]
        parts = parts_of(record.get("content"))
        calls, results = self._tool_calls(record, parts, message_id)
        tokens = read_tokens(self.builder, entry.line, record.get("tokens"))
        model = as_str(record.get("model"))
        if model:
            self.model = model
        # The model's "got it" after a state snapshot belongs to the compression, not a call.
        ack = self.after_snapshot and tokens is None and not calls
        self.after_snapshot = False
        self.builder.add(
            Role.ASSISTANT,
            id=message_id,
            text=visible_text(parts),
            reasoning=_reasoning(record, parts),
            tool_calls=calls or (),
            usage=usage_of(tokens) if tokens is not None else None,
            model=model or self.model,
            summary=ack,
            **self._common(entry),
        )
        for call_id, result in results:
            self.answered.add(call_id)
            self.builder.add(
                Role.TOOL, id=f"{message_id}:{call_id}", tool_result=result, **self._common(entry)
            )

    def _tool_calls(
        self, record: Record, parts: list[Record], message_id: str
    ) -> tuple[list[ToolCall], list[tuple[str, ToolResult]]]:
        """The calls of a ``gemini`` record (its ``toolCalls[]`` and any ``functionCall``
        parts) and the results recorded inline with them."""
        calls: list[ToolCall] = []
        results: list[tuple[str, ToolResult]] = []
        seen: set[str] = set()
        raw_calls = record.get("toolCalls")
        for n, raw in enumerate(raw_calls if isinstance(raw_calls, list) else []):
            if not isinstance(raw, dict):
                continue
            call_id = as_str(raw.get("id")) or f"{message_id}-call-{n}"
            name = as_str(raw.get("name")) or "tool"
            seen.add(call_id)
            calls.append(ToolCall(id=call_id, name=name, arguments=raw.get("args")))
            result = _inline_result(raw, call_id, name)
            if result is not None:
                results.append((call_id, result))
        for call in function_calls(parts, f"{message_id}-call"):
            if call.id not in seen:
                calls.append(call)
        return calls, results


def _inline_result(raw: Record, call_id: str, name: str) -> ToolResult | None:
    """The result a ``toolCalls[]`` entry carries (None when it has none yet)."""
    result = raw.get("result")
    if result is None:
        return None
    responses = function_responses(parts_of(result))
    if responses:
        output = "\n\n".join(r.output for r in responses)
        is_error = any(r.is_error for r in responses)
    else:
        output = visible_text(parts_of(result))
        is_error = False
    status = raw.get("status")
    return ToolResult(
        call_id=call_id,
        tool_name=name,
        output=output,
        is_error=is_error or status in ("error", "cancelled"),
    )


def _reasoning(record: Record, parts: list[Record]) -> str:
    """The thoughts Gemini CLI kept (``thoughts[]`` of ``{subject, description}``) and any
    thought parts."""
    texts: list[str] = []
    thoughts = record.get("thoughts")
    for thought in thoughts if isinstance(thoughts, list) else []:
        if isinstance(thought, dict):
            subject = as_str(thought.get("subject"))
            description = as_str(thought.get("description"))
            texts.append(": ".join(t for t in (subject, description) if t))
    inline = thought_text(parts)
    if inline:
        texts.append(inline)
    return "\n\n".join(t for t in texts if t)


# -- reading the two forms ----------------------------------------------------------------------


def _read_jsonl(path: Path, timeline: _Timeline, progress: ProgressCallback | None) -> None:
    for line, offset, obj in read_jsonl(path, timeline.builder, progress=progress):
        timeline.record(line, offset, obj)


def _read_legacy(path: Path, timeline: _Timeline) -> None:
    """The single-JSON form: one object with ``messages[]`` (line numbers are the file's)."""
    try:
        if path.stat().st_size > LEGACY_MAX_BYTES:
            raise LoadError(f"{path}: a single-JSON Gemini CLI chat larger than 512 MB, not read")
        with open_session(path) as handle:
            data = handle.read()
    except OSError as exc:
        raise LoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if looks_binary(data[:65536]):
        raise LoadError(f"{path}: not a session (binary file)")
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise LoadError(f"{path}: not a Gemini CLI chat (not valid JSON: {exc})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("messages"), list):
        raise LoadError(f"{path}: not a Gemini CLI chat (no 'messages' list)")
    timeline.metadata.update({k: v for k, v in obj.items() if k != "messages"})
    lines = _message_lines(data)
    for n, message in enumerate(obj["messages"]):
        if not isinstance(message, dict) or not isinstance(message.get("id"), str):
            timeline.builder.diagnostic(None, "bad-message", f"message {n} has no id, skipped")
            continue
        line, offset = lines.get(message["id"], (None, None))
        timeline.message(line or 1, offset or 0, message)


def _message_lines(data: bytes) -> dict[str, tuple[int, int]]:
    """The line (1-based) and byte offset of each message id's first mention, so the detail
    view can point into a pretty-printed file."""
    found: dict[str, tuple[int, int]] = {}
    marker = b'"id": "'
    at = data.find(marker)
    while at >= 0:
        end = data.find(b'"', at + len(marker))
        if end < 0:
            break
        message_id = data[at + len(marker) : end].decode("utf-8", "replace")
        if message_id not in found:
            found[message_id] = (data.count(b"\n", 0, at) + 1, at)
        at = data.find(marker, end)
    return found


# -- registry interface ---------------------------------------------------------------------


sniff = sniff_gemini_cli
"""Confidence that a path is this format (:mod:`core.formats.sniffers`)."""


def load(path: Path, *, progress: ProgressCallback | None = None) -> Session:
    """Load a Gemini CLI chat (either form), read-only."""
    path = Path(path)
    builder = SessionBuilder(FORMAT, path)
    timeline = _Timeline(builder)
    try:
        with open_session(path) as handle:
            head = handle.read(64 * 1024)
    except OSError as exc:
        raise LoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not head.strip():
        raise LoadError(f"{path}: not a session (empty file)")
    jsonl = _is_jsonl(head)
    if jsonl:
        _read_jsonl(path, timeline, progress)
    else:
        _read_legacy(path, timeline)
    metadata = timeline.metadata
    if not isinstance(metadata.get("sessionId"), str):
        raise LoadError(f"{path}: not a Gemini CLI chat (no sessionId)")
    messages = _Messages(builder)
    summary_next = False
    for item in timeline.order():
        if isinstance(item, _Compaction):
            event = builder.add_compaction(
                summary=item.summary, first_kept_id=item.first_kept_id, source_line=item.line
            )
            event.trigger_evidence = (
                f"a checkpoint at line {item.line} starts with a new <state_snapshot>; Gemini CLI "
                "records neither the trigger nor the token count"
            )
            messages.after_snapshot = False
            summary_next = True
            continue
        entry = timeline.latest[item]
        messages.add(entry, summary=summary_next and entry.record.get("type") == "user")
        summary_next = False
    return _finish(builder, path, timeline, messages, jsonl)


def _finish(
    builder: SessionBuilder, path: Path, timeline: _Timeline, messages: _Messages, jsonl: bool
) -> Session:
    metadata = timeline.metadata
    builder.session_id = metadata["sessionId"]
    builder.started_at = as_str(metadata.get("startTime"))
    directories = metadata.get("directories")
    if isinstance(directories, list) and directories and isinstance(directories[0], str):
        builder.project = directories[0]
    builder.model = messages.model
    info = builder.metadata
    info["gemini_form"] = "jsonl" if jsonl else "single-json"
    for key, name in (
        ("projectHash", "project_hash"),
        ("kind", "kind"),
        ("summary", "title"),
        ("lastUpdated", "last_updated"),
    ):
        if as_str(metadata.get(key)):
            info[name] = metadata[key]
    if timeline.rewinds:
        info["rewinds"] = timeline.rewinds
    if timeline.dropped:
        info["messages_rewound"] = timeline.dropped
    if messages.skipped_ui:
        info["ui_messages"] = messages.skipped_ui
    limit = agent_fact("gemini-cli", "token_limit")
    builder.context_window = int(limit.value)
    builder.window_source = "recorded"  # the agent's own limit: what it compared against
    session = builder.build()
    session.window_evidence = (
        f"Gemini CLI's own token limit for {builder.model or 'the model'} ({limit.source})"
    )
    session.provider = "google"
    if metadata.get("kind") == "subagent":
        session.parent_session_id = _parent_id(path)
    return session


def _parent_id(path: Path) -> str | None:
    """A sub-agent chat's parent: Gemini CLI stores it as ``chats/<parent id>/<id>.jsonl``."""
    folder = path.parent
    if folder.parent.name == "chats" and folder.name:
        return folder.name
    return None
