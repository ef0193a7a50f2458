"""Qwen Code chat logs (``~/.qwen/projects/<sanitised cwd>/chats/<sessionId>.jsonl``).

Qwen Code is a fork of Gemini CLI that writes a Claude-Code-like envelope (``uuid``,
``parentUuid``, ``sessionId``, ``timestamp``, ``type``, ``cwd``, ``version``) around Gemini-style
payloads (``message: {role: user|model, parts: [...]}``, :mod:`core.formats.gemini_parts`).
``type`` is ``user``, ``assistant``, ``tool_result`` or ``system`` (with a ``subtype``).

What is read:

* the conversation along the ``parentUuid`` chain of the last record (a rewind leaves the
  abandoned branch off the chain);
* **one model call per ``qwen-code.api_response`` telemetry event** (``system`` /
  ``ui_telemetry``): its token counts are the call's usage, and the ``assistant`` line that
  follows is its message. A call that produced no message still counts (an empty assistant
  message with its usage). Calls of background sub-agents (the event names a
  ``subagent_name``) ran in contexts of their own: they are counted in
  ``metadata["subagent_calls"]``, not as calls of this session. Without telemetry, an
  assistant line's own ``usageMetadata`` is used;
* ``chat_compression`` system records as recorded compactions (their ``info`` holds the token
  counts before and after; the first entry of ``compressedHistory`` is the summary);
* the window from the assistant lines' ``contextWindowSize``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.formats.base import LoadError, ProgressCallback, SessionBuilder, as_str
from core.formats.gemini_parts import (
    GeminiTokens,
    function_calls,
    function_responses,
    parts_of,
    read_tokens,
    thought_text,
    usage_of,
    visible_text,
)
from core.formats.jsonl import read_jsonl
from core.formats.sniffers import QWEN_TYPES, is_qwen_record, sniff_qwen_code
from core.model.session import CompactionTrigger, Role, Session, SourceFormat, ToolResult

FORMAT = SourceFormat.QWEN_CODE
PARTIAL_READS = False

_TYPES = QWEN_TYPES
_API_RESPONSE = "qwen-code.api_response"

Record = dict[str, Any]


@dataclass(slots=True)
class _Line:
    line: int
    offset: int
    record: Record


def _chain(lines: list[_Line], builder: SessionBuilder) -> list[_Line]:
    """The records on the ``parentUuid`` path of the last record, in file order."""
    by_id = {
        item.record["uuid"]: item for item in lines if isinstance(item.record.get("uuid"), str)
    }
    if not lines:
        return []
    on_path: set[str] = set()
    current: str | None = as_str(lines[-1].record.get("uuid"))
    while current is not None and current not in on_path:
        item = by_id.get(current)
        if item is None:
            builder.diagnostic(
                None,
                "broken-chain",
                f"parentUuid {current!r} is not in the file: every record is read in file order",
            )
            return lines
        on_path.add(current)
        current = as_str(item.record.get("parentUuid"))
    kept = [item for item in lines if as_str(item.record.get("uuid")) in on_path]
    if len(kept) < len(lines):
        builder.metadata["off_branch_records"] = len(lines) - len(kept)
    return kept


@dataclass(slots=True)
class _Reader:
    builder: SessionBuilder
    pending: tuple[_Line, GeminiTokens, str | None] | None = None
    model: str | None = None
    version: str | None = None
    cwd: str | None = None
    window: int | None = None
    subagent_calls: int = 0
    calls_without_message: int = 0
    seen_types: dict[str, int] = field(default_factory=dict)

    def take(self, item: _Line) -> None:
        record = item.record
        kind = record.get("type")
        self.version = as_str(record.get("version")) or self.version
        self.cwd = self.cwd or as_str(record.get("cwd"))
        if kind == "system":
            self._system(item)
        elif kind == "assistant":
            self._assistant(item)
        elif kind == "user":
            self._flush()
            self._user(item)
        elif kind == "tool_result":
            self._flush()
            self._tool_result(item)
        else:
            self.builder.info(item.line, "unknown-type", f"record type {kind!r}, skipped")

    def _common(self, item: _Line) -> dict[str, Any]:
        timestamp = item.record.get("timestamp")
        return {
            "timestamp": timestamp if isinstance(timestamp, str) else None,
            "source_line": item.line,
            "source_offset": item.offset,
        }

    def _system(self, item: _Line) -> None:
        record = item.record
        subtype = as_str(record.get("subtype")) or "?"
        self.seen_types[subtype] = self.seen_types.get(subtype, 0) + 1
        payload = record.get("systemPayload")
        payload = payload if isinstance(payload, dict) else {}
        if subtype == "ui_telemetry":
            event = payload.get("uiEvent")
            if isinstance(event, dict) and event.get("event.name") == _API_RESPONSE:
                self._api_response(item, event)
        elif subtype == "chat_compression":
            self._flush()
            self._compression(item, payload)

    def _api_response(self, item: _Line, event: Record) -> None:
        if as_str(event.get("subagent_name")):
            self.subagent_calls += 1
            return
        tokens = read_tokens(self.builder, item.line, event)
        if tokens is None:
            return
        self._flush()
        self.pending = (item, tokens, as_str(event.get("model")))

    def _flush(self) -> None:
        """A call whose response left no assistant line: an empty message with its usage."""
        if self.pending is None:
            return
        item, tokens, model = self.pending
        self.pending = None
        self.calls_without_message += 1
        self.builder.add(
            Role.ASSISTANT,
            id=f"{item.record.get('uuid')}:call",
            usage=usage_of(tokens),
            model=model or self.model,
            **self._common(item),
        )

    def _assistant(self, item: _Line) -> None:
        record = item.record
        message = record.get("message")
        parts = parts_of(message if isinstance(message, dict) else None)
        uuid = as_str(record.get("uuid")) or f"line-{item.line}"
        tokens: GeminiTokens | None = None
        model = as_str(record.get("model"))
        if self.pending is not None:
            _, tokens, telemetry_model = self.pending
            model = model or telemetry_model
            self.pending = None
        else:
            tokens = read_tokens(self.builder, item.line, record.get("usageMetadata"))
        self.model = model or self.model
        window = self.builder.optional_count(
            item.line, "contextWindowSize", record.get("contextWindowSize")
        )
        if window is not None and window > 0:
            self.window = window
        self.builder.add(
            Role.ASSISTANT,
            id=uuid,
            parent_id=as_str(record.get("parentUuid")),
            text=visible_text(parts),
            reasoning=thought_text(parts),
            tool_calls=function_calls(parts, uuid) or (),
            usage=usage_of(tokens) if tokens is not None else None,
            model=model or self.model,
            **self._common(item),
        )

    def _user(self, item: _Line) -> None:
        record = item.record
        message = record.get("message")
        parts = parts_of(message if isinstance(message, dict) else None)
        if function_responses(parts):  # a tool result written as a user line
            self._tool_result(item)
            return
        self.builder.add(
            Role.USER,
            id=as_str(record.get("uuid")) or f"line-{item.line}",
            parent_id=as_str(record.get("parentUuid")),
            text=visible_text(parts),
            **self._common(item),
        )

    def _tool_result(self, item: _Line) -> None:
        record = item.record
        message = record.get("message")
        uuid = as_str(record.get("uuid")) or f"line-{item.line}"
        status = record.get("toolCallResult")
        failed = isinstance(status, dict) and status.get("status") == "error"
        for n, result in enumerate(function_responses(parts_of(message))):
            call_id = result.call_id or f"{uuid}-{n}"
            self.builder.add(
                Role.TOOL,
                id=uuid if n == 0 else f"{uuid}:{n}",
                parent_id=as_str(record.get("parentUuid")),
                tool_result=ToolResult(
                    call_id=call_id,
                    tool_name=result.name,
                    output=result.output,
                    is_error=result.is_error or failed,
                ),
                **self._common(item),
            )

    def _compression(self, item: _Line, payload: Record) -> None:
        info = payload.get("info")
        info = info if isinstance(info, dict) else {}
        history = payload.get("compressedHistory")
        history = history if isinstance(history, list) else []
        summary = visible_text(parts_of(history[0])) if history else ""
        reason = as_str(info.get("triggerReason"))
        trigger: CompactionTrigger = (
            "manual" if reason == "manual" else ("auto" if reason else "unknown")
        )
        event = self.builder.add_compaction(
            trigger=trigger,
            tokens_before=self.builder.optional_count(
                item.line, "originalTokenCount", info.get("originalTokenCount")
            ),
            tokens_after=self.builder.optional_count(
                item.line, "newTokenCount", info.get("newTokenCount")
            ),
            summary=summary or None,
            source_line=item.line,
        )
        event.trigger_evidence = (
            f"triggerReason {reason!r} at line {item.line}"
            if reason
            else f"a chat_compression record at line {item.line} without a triggerReason"
        )
        uuid = as_str(item.record.get("uuid")) or f"line-{item.line}"
        self.builder.add(
            Role.USER, id=f"{uuid}:summary", text=summary, summary=True, **self._common(item)
        )
        for n, content in enumerate(history[1:], start=1):
            parts = parts_of(content)
            role = content.get("role") if isinstance(content, dict) else None
            self.builder.add(
                Role.ASSISTANT if role == "model" else Role.USER,
                id=f"{uuid}:kept-{n}",
                text=visible_text(parts),
                summary=True,
                **self._common(item),
            )


# -- registry interface ---------------------------------------------------------------------


sniff = sniff_qwen_code
"""Confidence that a path is this format (:mod:`core.formats.sniffers`)."""


def load(path: Path, *, progress: ProgressCallback | None = None) -> Session:
    """Load a Qwen Code chat log, read-only."""
    path = Path(path)
    builder = SessionBuilder(FORMAT, path)
    lines: list[_Line] = []
    session_id: str | None = None
    started: str | None = None
    for line, offset, obj in read_jsonl(path, builder, progress=progress, count=lines.__len__):
        kind = obj.get("type")
        if type(kind) is not str or kind not in _TYPES:
            builder.info(line, "unknown-record", "a line of no known type, skipped")
            continue
        session_id = session_id or as_str(obj.get("sessionId"))
        started = started or as_str(obj.get("timestamp"))
        lines.append(_Line(line, offset, obj))
    if not any(is_qwen_record(item.record) for item in lines):
        raise LoadError(f"{path}: not a Qwen Code chat log (no Gemini-style message or record)")
    reader = _Reader(builder)
    for item in _chain(lines, builder):
        reader.take(item)
    reader._flush()
    builder.session_id = session_id or path.stem
    builder.started_at = started
    builder.project = reader.cwd
    builder.model = reader.model
    if reader.window is not None:
        builder.context_window = reader.window
        builder.window_source = "recorded"
    if reader.subagent_calls:
        builder.metadata["subagent_calls"] = reader.subagent_calls
    if reader.calls_without_message:
        builder.metadata["calls_without_message"] = reader.calls_without_message
    session = builder.build()
    session.agent_version = reader.version
    return session
