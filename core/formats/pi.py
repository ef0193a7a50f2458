"""pi (pi-coding-agent) sessions: ``~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl``.

A pi session file is JSON Lines: a ``session`` header, then one entry a line.

* **v1** (header without ``version``): a linear list with no ids. Entries get ``line-N`` ids
  (N = the 1-based line in the file) and each one's parent is the entry before it, as pi's own
  v1→v2 migration chains them; a compaction's ``firstKeptEntryIndex`` (an index into the parsed
  entries, header = 0) is mapped to the id of that entry.
* **v2 / v3**: a tree of ``id`` / ``parentId``. The session is the path from the root to the
  *leaf* — the last entry of the file — so entries on abandoned branches are left out (with an
  ``other-branches`` info diagnostic). v3 renamed the ``hookMessage`` role to ``custom``; both
  are read.

What each entry becomes:

* ``message`` entries by role: ``user`` → user; ``assistant`` → assistant (text, thinking as
  ``reasoning``, ``toolCall`` blocks as tool calls, ``usage`` as ``Usage(convention=PI,
  total=totalTokens)``, ``stopReason``, ``errorMessage`` as ``error``, ``model``);
  ``toolResult`` → tool (``details.truncation.truncated`` → ``truncated_by_tool``).
* ``bashExecution`` (the user's ``!command``) → a **user** message whose text is the command and
  its output, as pi sends it to the model; pi counts it as a turn start, and so does ctxscope.
  ``!!`` commands (``excludeFromContext``) were never sent to the model: they are kept as
  ``meta`` messages.
* ``custom`` / ``hookMessage`` messages and ``custom_message`` entries (injected by extensions)
  → ``meta`` user messages; ``branch_summary`` entries → ``meta`` user messages holding the
  summary of the abandoned branch. ``custom`` entries (extension state) are not in the context
  and are skipped.
* ``compaction`` → a :class:`~core.model.session.CompactionEvent` (``tokensBefore``, the summary,
  ``firstKeptEntryId`` / ``firstKeptEntryIndex`` as the id of the first *message* kept) at the
  index of a summary user message placed where the compaction happened. pi writes no reason;
  the trigger is what the file shows (:func:`compaction_trigger`): ``overflow`` right after a
  context-overflow error, ``hook`` for ``fromHook``, else ``unknown`` with what precedes it. Every message of the
  path stays in :attr:`Session.messages`, in the order it happened: the list is the full
  recording, not the post-compaction view.
* ``model_change`` / ``thinking_level_change`` → ``Session.model`` and ``Session.provider``
  (the last of these, the v1 header and the assistants' fields wins) and ``metadata``; ``session_info`` names → ``metadata["title"]``; ``label`` entries are skipped.

Well-formed user, assistant and tool result entries are decoded typed
(:mod:`~core.formats.pi_typed`: only the fields read, into msgspec structs, made into their
message as they are read); any other line is read as an object, with every check.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from core.agents.overflow_errors import is_context_overflow_message
from core.formats import pi_typed as typed
from core.formats.base import LoadError, ProgressCallback, SessionBuilder, as_str
from core.formats.jsonl import read_jsonl_raw
from core.formats.sniffers import sniff_pi
from core.model.read_numbers import as_int, plausible, show_value
from core.model.session import (
    CompactionTrigger,
    Message,
    Role,
    Session,
    SourceFormat,
    ToolCall,
    ToolResult,
    Usage,
    UsageConvention,
)

FORMAT = SourceFormat.PI
PARTIAL_READS = True
"""``load(..., head_bytes=N)`` reads only the complete lines of the first N bytes."""

CURRENT_VERSION = 3
"""The newest pi session version this loader knows."""

Record = dict[str, Any]


class _Entry(msgspec.Struct, gc=False):
    """One parsed entry and where it came from: its record, or for a message entry read typed
    (:mod:`core.formats.pi_typed`) its message and what the walk reads besides (``record`` is then
    :data:`_TYPED_RECORD`). (A struct: made once per line, in C; it refers to nothing that
    refers back to it, so the cyclic collector need not track it.)"""

    record: Record
    line: int
    offset: int
    id: str
    parent: str | None
    typed: typed.Read | None = None


_UNSET = msgspec.UNSET
_TYPED_RECORD: Record = {"type": "message", "id": None}
"""What the record of an entry read typed answers to the questions asked of every entry (its
type; whether it has an id): never changed."""


# -- content helpers -----------------------------------------------------------------------


def _content_text(content: Any) -> str:
    """Text of a pi content value: a string or a list of text / image blocks."""
    if isinstance(content, str):
        return content
    if type(content) is list and len(content) == 1:  # the usual one text block: no join
        block = content[0]
        text = block.get("text") if type(block) is dict and block.get("type") == "text" else None
        if type(text) is str:
            return text
    if not isinstance(content, list):
        return ""
    pieces: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            pieces.append(block["text"])
        elif kind == "image":
            pieces.append(f"[image {block.get('mimeType') or ''}]".replace(" ]", "]"))
    return "\n".join(pieces)


def _summary_text(record: Record) -> str:
    summary = record.get("summary")
    return summary if isinstance(summary, str) else ""


def usage_from_pi(usage: Any) -> Usage | None:
    """pi ``usage {input, output, cacheRead, cacheWrite, totalTokens}`` → Usage (PI).

    An all-zero record (pi writes one for a request aborted before any reply) says nothing about
    the context and gives None, as pi itself ignores it when estimating the context.
    """
    if not isinstance(usage, dict):
        return None
    get = usage.get
    total = as_int(get("totalTokens"), None)
    counts = as_int(get("input")), as_int(get("output")), as_int(get("cacheRead"))
    cache_write = as_int(get("cacheWrite"))
    if not (total or cache_write or any(counts)):
        return None
    return Usage(
        input=counts[0],
        output=counts[1],
        cache_read=counts[2],
        cache_write=cache_write,
        total=total,
        convention=_PI_USAGE,
    )


_PI_USAGE = UsageConvention.PI


def bash_execution_text(message: Record) -> str:
    """The text a ``bashExecution`` message stands for in the model's context."""
    command = message.get("command") if isinstance(message.get("command"), str) else ""
    output = message.get("output") if isinstance(message.get("output"), str) else ""
    text = f"Ran `{command}`\n"
    text += f"```\n{output.rstrip(chr(10))}\n```" if output else "(no output)"
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(message.get("exitCode"), int) and message["exitCode"] != 0:
        text += f"\n\nCommand exited with code {message['exitCode']}"
    if message.get("truncated") and as_str(message.get("fullOutputPath")):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


# -- reading -------------------------------------------------------------------------------


def _read(
    path: Path,
    builder: SessionBuilder,
    progress: ProgressCallback | None,
    head_bytes: int | None = None,
) -> tuple[Record | None, list[_Entry], bool]:
    """The header, the entries in file order, and whether they are linear (:meth:`_Reader.linear`)."""
    reader = _Reader(builder)
    lines = read_jsonl_raw(
        path, builder, progress=progress, head_bytes=head_bytes, typed=reader.typed_line
    )
    for line, offset, _raw, record in lines:
        reader.line(line, offset, record)
    return reader.header, reader.entries, reader.linear()


class _Reader:
    """The entries of a file, in file order: a message entry read typed when it can be
    (:meth:`typed_line`), any other line as an object (:meth:`line`)."""

    def __init__(self, builder: SessionBuilder) -> None:
        self.builder = builder
        self.header: Record | None = None
        self.entries: list[_Entry] = []
        self.previous_id: str | None = None
        self.linked = True
        """Every entry's parent so far is the entry before it (the first has none)."""
        self.ids: set[str] = set()

    def linear(self) -> bool:
        """Every entry's parent is the entry before it, the first has none, and no id repeats:
        the path to the leaf is the whole file (seen as the entries are read, while they are at
        hand, rather than in one more pass over them)."""
        return self.linked and len(self.ids) == len(self.entries)

    def typed_line(self, raw: bytes, line: int, offset: int) -> bool:
        """A message entry read typed (what :meth:`line` reads of it); False: not one."""
        read = typed.read(raw)
        if read is None:
            return False
        record_line = read[0]
        entry_id: str = record_line.id  # type: ignore[assignment]  # (read checks it is one)
        previous_id = self.previous_id
        raw_parent = record_line.parentId
        parent = previous_id if raw_parent is _UNSET else raw_parent or None
        entry = typed.message_of(read, entry_id, parent, line, offset)
        self.entries.append(_Entry(_TYPED_RECORD, line, offset, entry_id, parent, entry))
        if parent != previous_id:
            self.linked = False
        self.ids.add(entry_id)
        self.previous_id = entry_id
        return True

    def line(self, line: int, offset: int, record: Record) -> None:
        """Any other line, read as an object with every check."""
        builder, entries = self.builder, self.entries
        get = record.get
        kind = get("type")
        if kind == "session" and self.header is None and not entries:
            self.header = record
            return
        if type(kind) is not str:
            builder.diagnostic(line, "no-type", "entry without a 'type', skipped")
            return
        if kind == "message" or kind == "compaction":
            _check_counts(record, kind, line, builder)
        previous_id = self.previous_id
        raw_id = get("id")
        if type(raw_id) is str and raw_id:  # the usual v2/v3 entry
            entry_id = raw_id
            raw_parent = get("parentId", previous_id)
            parent = raw_parent if type(raw_parent) is str and raw_parent else None
        else:
            if raw_id is not None and type(raw_id) is not str:
                builder.diagnostic(
                    line, "bad-id", f"id {show_value(raw_id)} is not a string; ignored"
                )
            entry_id = f"line-{line}"
            raw_parent = get("parentId", previous_id) if raw_id else previous_id
            parent = raw_parent if isinstance(raw_parent, str) and raw_parent else None
        entries.append(_Entry(record, line, offset, entry_id, parent))
        if parent != previous_id:
            self.linked = False
        self.ids.add(entry_id)
        self.previous_id = entry_id


_USAGE_COUNTS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
"""The counts of an assistant's ``usage`` the loader reads."""


def _check_counts(record: Record, kind: str, line: int, builder: SessionBuilder) -> None:
    """The figures of a line checked where it is read (clamped or dropped in the record, with a
    ``bad-count`` diagnostic): an assistant's usage, a compaction's ``tokensBefore``."""
    if kind == "message":
        message = record.get("message")
        usage = message.get("usage") if isinstance(message, dict) else None
        if isinstance(message, dict) and isinstance(usage, dict):
            message["usage"] = builder.counts(
                line, "usage", usage, _USAGE_COUNTS, optional=("totalTokens",)
            )
    elif kind == "compaction" and not plausible(record.get("tokensBefore")):
        record["tokensBefore"] = builder.optional_count(
            line, "tokensBefore", record.get("tokensBefore")
        )


def _version(header: Record | None, entries: list[_Entry]) -> int:
    if header is not None:
        version = header.get("version")
        if isinstance(version, int) and not isinstance(version, bool):
            return version
        return 1
    return 2 if any("id" in e.record for e in entries) else 1


def _leaf_path(entries: list[_Entry], builder: SessionBuilder, linear: bool) -> list[_Entry]:
    """The entries from the root to the leaf (the last entry), following parent ids
    (``linear``: the entries are that path, see :meth:`_Reader.linear`)."""
    if linear:
        return entries  # (what the walk below gives for a session that never branched)
    by_id: dict[str, _Entry] = {}
    for entry in entries:
        if entry.id in by_id:
            builder.diagnostic(
                entry.line, "duplicate-id", f"entry id {entry.id!r} repeats; the later one wins"
            )
        by_id[entry.id] = entry
    path: list[_Entry] = []
    seen: set[str] = set()
    current: _Entry | None = entries[-1]
    while current is not None:
        if current.id in seen:
            builder.diagnostic(
                current.line, "parent-cycle", "parent ids form a cycle; path cut here"
            )
            break
        seen.add(current.id)
        path.append(current)
        parent = current.parent
        if parent is None:
            break
        current = by_id.get(parent)
        if current is None:
            builder.diagnostic(
                path[-1].line,
                "missing-parent",
                f"parent {parent!r} is not in the file; the path starts here",
            )
    path.reverse()
    left_out = len(entries) - len(path)
    if left_out:
        builder.info(
            None,
            "other-branches",
            f"{left_out} entries on other branches of the session tree are not on the path to "
            "the last entry and were left out",
        )
    return path


# -- compaction triggers -------------------------------------------------------------------


def _record(entry: _Entry) -> Record:
    """The entry's record; for one read typed, the part of it :func:`_describe` and
    :func:`_overflow_error` read."""
    if entry.typed is None:
        return entry.record
    read = entry.typed
    message = read.message
    role = {Role.ASSISTANT: "assistant", Role.TOOL: "toolResult"}.get(message.role, "user")
    return {
        "type": "message",
        "message": {"role": role, "stopReason": read.stop_reason, "errorMessage": message.error},
    }


def _describe(entry: _Entry) -> str:
    """What an entry is, in words: 'an assistant message with stopReason toolUse at line 628'."""
    record = _record(entry)
    kind = record.get("type")
    message = record.get("message") if kind == "message" else None
    if not isinstance(message, dict):
        return f"a {kind} entry at line {entry.line}"
    role = message.get("role")
    if role == "assistant":
        return (
            f"an assistant message with stopReason {message.get('stopReason')} at line {entry.line}"
        )
    return f"{_ROLE_WORDS.get(str(role), f'a {role} message')} at line {entry.line}"


_ROLE_WORDS = {
    "user": "a user message",
    "toolResult": "a tool result",
    "bashExecution": "a user !command",
}


def _overflow_error(entry: _Entry | None) -> str | None:
    """The context-overflow error of an assistant message that failed with one, else None."""
    message = _record(entry).get("message") if entry is not None else None
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return None
    error = as_str(message.get("errorMessage"))
    if message.get("stopReason") == "error" and error and is_context_overflow_message(error):
        return error
    return None


def compaction_trigger(
    record: Record, line: int, previous: _Entry | None
) -> tuple[CompactionTrigger, str]:
    """Why pi compacted, as far as the file shows, and the evidence in one sentence.

    pi writes no reason. A compaction right after an assistant message that failed with a
    context-overflow error is pi's overflow recovery; ``fromHook: true`` says an extension wrote
    the summary; anything else is ``unknown``, with what precedes it, for the replay to decide
    between pi's threshold and ``/compact``.
    """
    before = f"after {_describe(previous)}" if previous is not None else "before any message"
    tokens = as_int(record.get("tokensBefore"), None)
    figure = f", tokensBefore {tokens:,}" if tokens is not None else ""
    hook = record.get("fromHook") is True
    error = _overflow_error(previous)
    if error is not None:
        note = "; an extension wrote the summary (fromHook=true)" if hook else ""
        return (
            "overflow",
            f"{before} whose errorMessage is a context overflow ({error[:120]!r}){figure}{note}",
        )
    if hook:
        return (
            "hook",
            f"fromHook=true at line {line}: an extension wrote the summary; {before}{figure}",
        )
    return "unknown", f"{before}{figure}"


# -- building ------------------------------------------------------------------------------


class _PiBuilder:
    """Walks the path and appends messages to the SessionBuilder."""

    def __init__(self, builder: SessionBuilder, entries_in_file: list[_Entry], version: int):
        self.builder = builder
        self.entries_in_file = entries_in_file
        self.version = version
        self.model: str | None = None
        self.provider: str | None = None
        self.previous: _Entry | None = None  # the last entry that became a message
        # Position on the path of every entry id, and the message id each position produced.
        self.position: dict[str, int] = {}
        self.message_at: dict[int, str] = {}
        self.path: list[_Entry] = []

    def run(self, path: list[_Entry]) -> None:
        self.path = path
        messages = self.builder.messages
        positions, message_at, handlers = self.position, self.message_at, _ENTRIES
        read_typed, append = self._typed, self.builder.append
        for position, entry in enumerate(path):
            positions[entry.id] = position
            if entry.typed is not None:  # always a message
                append(read_typed(entry.typed))
                message_at[position] = entry.id
                self.previous = entry
                continue
            before = len(messages)
            kind = entry.record.get("type")
            handler = handlers.get(kind) if type(kind) is str else None
            if handler is not None:
                handler(self, entry)
            else:
                self._entry(entry)
            if len(messages) > before:
                message_at[position] = messages[before].id
                self.previous = entry

    def _first_kept_message(self, entry_id: str | None) -> str | None:
        """Id of the first message at or after the path entry ``entry_id``."""
        if entry_id is None:
            return None
        start = self.position.get(entry_id)
        if start is None:
            return None
        for position in range(start, len(self.path)):
            if position in self.message_at:
                return self.message_at[position]
        return None

    def _entry(self, entry: _Entry) -> None:
        kind = entry.record.get("type")
        handler = _ENTRIES.get(kind) if type(kind) is str else None
        if handler is not None:
            handler(self, entry)
        else:
            self.builder.info(
                entry.line, "unknown-entry", f"entry type {kind!r} not known, skipped"
            )

    def _add(self, entry: _Entry, role: Role, **fields: Any) -> None:
        """Append the message of ``entry`` (built here, indexed by the builder)."""
        timestamp = entry.record.get("timestamp")
        self.builder.append(
            Message(
                index=0,
                role=role,
                id=entry.id,
                parent_id=entry.parent,
                timestamp=timestamp if type(timestamp) is str else None,
                source_line=entry.line,
                source_offset=entry.offset,
                **fields,
            )
        )

    def _typed(self, read: typed.Read) -> Message:
        """A message entry read typed: what :meth:`_message_entry` makes of it as an object."""
        message = read.message
        if message.role is Role.ASSISTANT:
            if message.model:
                self.model = message.model
            else:
                message.model = self.model
            self.provider = read.provider or self.provider
        elif read.no_call_id:
            self.builder.diagnostic(
                message.source_line, "no-call-id", "tool result without toolCallId"
            )
        return message

    # -- one method per entry type -------------------------------------------------------

    def _message_entry(self, entry: _Entry) -> None:
        """A ``message`` entry, read by the method :data:`_MESSAGES` names for its role."""
        message = entry.record.get("message")
        if not isinstance(message, dict):
            self.builder.diagnostic(
                entry.line, "bad-message", "message entry without a message object, skipped"
            )
            return
        role = message.get("role")
        handler = _MESSAGES.get(role) if type(role) is str else None
        if handler is not None:
            handler(self, entry, message)
        else:
            self.builder.info(
                entry.line, "unknown-role", f"message role {role!r} not known, skipped"
            )

    def _model_change(self, entry: _Entry) -> None:
        record = entry.record
        model = as_str(record.get("modelId"))
        if model:
            metadata = self.builder.metadata
            self.model = model
            self.provider = as_str(record.get("provider")) or self.provider
            metadata["provider"] = self.provider or metadata.get("provider")
            metadata["model_changes"] = metadata.get("model_changes", 0) + 1

    def _thinking_level_change(self, entry: _Entry) -> None:
        level = as_str(entry.record.get("thinkingLevel"))
        if level:
            self.builder.metadata["thinking_level"] = level

    def _branch_summary(self, entry: _Entry) -> None:
        """The summary of an abandoned branch: a meta user message."""
        self._add(entry, Role.USER, text=_summary_text(entry.record), meta=True)

    def _custom_message(self, entry: _Entry) -> None:
        """A message an extension injected: a meta user message."""
        self._add(entry, Role.USER, text=_content_text(entry.record.get("content")), meta=True)

    def _session_info(self, entry: _Entry) -> None:
        name = as_str(entry.record.get("name"))
        if name:
            self.builder.metadata["title"] = name

    def _not_in_context(self, entry: _Entry) -> None:
        """Extension state (``custom``) and ``label`` entries: not sent to the model."""

    # -- one method per message role -----------------------------------------------------

    def _user(self, entry: _Entry, message: Record) -> None:
        self._add(entry, Role.USER, text=_content_text(message.get("content")))

    def _tool_result(self, entry: _Entry, message: Record) -> None:
        details = message.get("details")
        truncation = details.get("truncation") if isinstance(details, dict) else None
        truncated = isinstance(truncation, dict) and truncation.get("truncated") is True
        call_id = message.get("toolCallId")
        if not isinstance(call_id, str):
            self.builder.diagnostic(entry.line, "no-call-id", "tool result without toolCallId")
            call_id = ""
        result = ToolResult(
            call_id=call_id,
            tool_name=as_str(message.get("toolName")),
            output=_content_text(message.get("content")),
            is_error=message.get("isError") is True,
            truncated_by_tool=truncated,
        )
        self._add(entry, Role.TOOL, tool_result=result)

    def _bash_execution(self, entry: _Entry, message: Record) -> None:
        """The user's ``!command``: a user message (``!!``: never sent, so meta)."""
        self._add(
            entry,
            Role.USER,
            text=bash_execution_text(message),
            meta=message.get("excludeFromContext") is True,
        )

    def _custom(self, entry: _Entry, message: Record) -> None:
        """A ``custom`` (v3) or ``hookMessage`` (v2) message: injected, so meta."""
        self._add(entry, Role.USER, text=_content_text(message.get("content")), meta=True)

    def _branch_summary_message(self, entry: _Entry, message: Record) -> None:
        self._add(entry, Role.USER, text=_summary_text(message), meta=True)

    def _compaction_summary(self, entry: _Entry, message: Record) -> None:
        self._add(entry, Role.USER, text=_summary_text(message), summary=True)

    def _assistant(self, entry: _Entry, message: Record) -> None:
        texts: list[str] = []
        thinking: list[str] = []
        calls: list[ToolCall] = []
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if type(block) is not dict:
                continue
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                if type(text) is str:
                    texts.append(text)
            elif kind == "thinking":
                text = block.get("thinking")
                if type(text) is str:
                    thinking.append(text)
            elif kind == "toolCall":
                calls.append(
                    ToolCall(
                        id=str(block.get("id") or ""),
                        name=str(block.get("name") or "tool"),
                        arguments=block.get("arguments"),
                    )
                )
        if isinstance(content, str):
            texts.append(content)
        model = as_str(message.get("model"))
        if model:
            self.model = model
        else:
            model = self.model
        self.provider = as_str(message.get("provider")) or self.provider
        self._add(
            entry,
            Role.ASSISTANT,
            text="\n\n".join(texts),
            reasoning="\n\n".join(thinking),
            tool_calls=calls or (),
            usage=usage_from_pi(message.get("usage")),
            model=model,
            stop_reason=as_str(message.get("stopReason")),
            error=as_str(message.get("errorMessage")),
        )

    def _compaction(self, entry: _Entry) -> None:
        record = entry.record
        summary = record.get("summary") if isinstance(record.get("summary"), str) else None
        kept_entry_id: str | None = as_str(record.get("firstKeptEntryId"))
        index = record.get("firstKeptEntryIndex")
        if kept_entry_id is None and isinstance(index, int) and not isinstance(index, bool):
            # An index into the parsed file entries with the header at 0.
            if 1 <= index <= len(self.entries_in_file):
                kept_entry_id = self.entries_in_file[index - 1].id
            else:
                self.builder.diagnostic(
                    entry.line, "bad-first-kept", f"firstKeptEntryIndex {index} is outside the file"
                )
        first_kept = self._first_kept_message(kept_entry_id)
        if kept_entry_id is not None and first_kept is None:
            self.builder.diagnostic(
                entry.line,
                "bad-first-kept",
                f"the first kept entry {kept_entry_id!r} is not a message before this compaction",
            )
        trigger, evidence = compaction_trigger(record, entry.line, self.previous)
        event = self.builder.add_compaction(
            trigger=trigger,
            tokens_before=as_int(record.get("tokensBefore"), None),
            summary=summary,
            first_kept_id=first_kept,
            source_line=entry.line,
        )
        event.trigger_evidence = evidence
        self._add(entry, Role.USER, text=summary or "", summary=True)


_ENTRIES: dict[str, Callable[[_PiBuilder, _Entry], None]] = {
    "message": _PiBuilder._message_entry,
    "compaction": _PiBuilder._compaction,
    "model_change": _PiBuilder._model_change,
    "thinking_level_change": _PiBuilder._thinking_level_change,
    "branch_summary": _PiBuilder._branch_summary,
    "custom_message": _PiBuilder._custom_message,
    "session_info": _PiBuilder._session_info,
    "custom": _PiBuilder._not_in_context,
    "label": _PiBuilder._not_in_context,
}
"""The method that reads each entry type."""

_MESSAGES: dict[str, Callable[[_PiBuilder, _Entry, Record], None]] = {
    "user": _PiBuilder._user,
    "assistant": _PiBuilder._assistant,
    "toolResult": _PiBuilder._tool_result,
    "bashExecution": _PiBuilder._bash_execution,
    "custom": _PiBuilder._custom,
    "hookMessage": _PiBuilder._custom,
    "branchSummary": _PiBuilder._branch_summary_message,
    "compactionSummary": _PiBuilder._compaction_summary,
}
"""The method that reads the message of each role."""

_ENTRY_TYPES = frozenset(_ENTRIES)
_ROLES = frozenset(_MESSAGES)


# -- registry interface --------------------------------------------------------------------


sniff = sniff_pi
"""Confidence that a path is this format (:mod:`core.formats.sniffers`)."""


def load(
    path: Path, *, progress: ProgressCallback | None = None, head_bytes: int | None = None
) -> Session:
    """Load a pi session file (v1, v2 or v3), read-only, following the leaf's path."""
    path = Path(path)
    builder = SessionBuilder(FORMAT, path)
    header, entries, linear = _read(path, builder, progress, head_bytes)
    if header is None:
        if not any(e.record.get("type") in _ENTRY_TYPES for e in entries):
            raise LoadError(f"{path}: not a pi session (no 'session' header and no pi entries)")
        builder.diagnostic(1, "no-header", "no 'session' header line; read as pi entries anyway")
    version = _version(header, entries)
    if version > CURRENT_VERSION:
        builder.info(
            None,
            "newer-version",
            f"pi session version {version} is newer than {CURRENT_VERSION}; read as v3",
        )
    header = header or {}
    builder.session_id = as_str(header.get("id")) or path.stem
    builder.project = as_str(header.get("cwd"))
    builder.started_at = as_str(header.get("timestamp"))
    builder.metadata["pi_version"] = version
    for key, name in (
        ("provider", "provider"),
        ("thinkingLevel", "thinking_level"),
        ("branchedFrom", "branched_from"),
        ("parentSession", "parent_session"),
    ):
        if as_str(header.get(key)):
            builder.metadata[name] = header[key]
    walker = _PiBuilder(builder, entries, version)
    walker.model = as_str(header.get("modelId"))
    walker.provider = as_str(header.get("provider"))
    if entries:
        if version >= 2 and any("id" in e.record for e in entries):
            path_entries = _leaf_path(entries, builder, linear)
        else:
            path_entries = entries
        walker.run(path_entries)
    builder.model = walker.model
    session = builder.build()
    session.provider = walker.provider  # pi writes no app version: agent_version stays None
    return session
