"""Claude Code transcripts: ``~/.claude/projects/<encoded-cwd>/<sessionId>.jsonl``.

What is read (see ``reference/formats.md`` §B):

* ``user`` / ``assistant`` lines. Claude Code writes one line per content block and repeats the
  API message's usage on each; lines with the same ``message.id`` + ``requestId`` are merged into
  one assistant :class:`Message` whose :class:`Usage` is counted once (the largest copy wins:
  earlier copies are written mid-stream). ``tool_use`` blocks become :class:`ToolCall` s; each
  ``tool_result`` block of a user line becomes one tool message joined to its call. The top-level
  ``toolUseResult`` is the UI's copy and is not read (the model saw ``tool_result.content``).
* ``system`` / ``compact_boundary`` → a :class:`CompactionEvent` (``compactMetadata.trigger``,
  ``preTokens``, ``postTokens``); the ``isCompactSummary`` user line after it is a summary
  message; ``isMeta`` user lines are meta messages.
* The uuid / parentUuid tree: the active branch is the chain from the last line back to its root
  (crossing a compact boundary through ``logicalParentUuid``). Lines forked off that chain by a
  rewind are left out with a diagnostic; parallel tool results and the other block lines of an
  included API message, which Claude Code also writes as side branches, are kept.
* Skipped without a diagnostic: ``progress``, ``file-history-snapshot``, ``queue-operation``,
  ``attachment``, legacy ``summary`` title lines (kept as ``metadata["title"]``, they are not
  compactions), ``ai-title`` and the informational ``system`` subtypes.

A sub-agent transcript (``agent-*.jsonl`` next to the session or
``<sessionId>/subagents/agent-*.jsonl``) loads on its own; its messages are not flagged
``sidechain`` there (they are the conversation being looked at) and ``metadata["subagent"]`` is
set. Sidechain lines inside a main transcript are flagged ``sidechain``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from core.fastmodel import construct
from core.formats.base import ProgressCallback, SessionBuilder, as_text
from core.formats.jsonl import head_records, read_jsonl
from core.models import (
    Role,
    Session,
    SourceFormat,
    ToolCall,
    ToolResult,
    Usage,
    UsageConvention,
)
from core.numbers import as_int

FORMAT = SourceFormat.CLAUDE_CODE
PARTIAL_READS = True
"""``load(..., head_bytes=N)`` reads only the complete lines of the first N bytes."""
# A slash command and its local output are written as user lines, but the user did not type
# them as a request: they are context (meta), not the start of a turn.
_COMMAND_PREFIXES = ("<command-name>", "<command-message>", "<local-command-")

DEFAULT_WINDOW = 200_000
"""Window of Claude models unless the model is a 1M-context one."""
LARGE_WINDOW = 1_000_000
"""Window of ``[1m]`` models (and of any session whose recorded context exceeds 200k)."""

_SKIPPED_TYPES = frozenset(
    {
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "custom-title",
        "tag",
        "last-prompt",
        "agent-name",
    }
)

# Entry kinds (one entry per useful line).
_USER = 0
_ASSISTANT = 1
_BOUNDARY = 2


class _Entry:
    """What one user/assistant/boundary line contributes, extracted at read time."""

    __slots__ = (
        "calls",
        "error",
        "key",
        "kind",
        "line",
        "meta",
        "model",
        "offset",
        "parent",
        "reasoning",
        "results",
        "sidechain",
        "stop_reason",
        "summary",
        "texts",
        "timestamp",
        "usage",
        "uuid",
    )

    def __init__(
        self, kind: int, line: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> None:
        self.kind = kind
        self.line = line
        self.offset = offset
        self.uuid = uuid
        self.parent = parent
        ts = obj.get("timestamp")
        self.timestamp: str | None = ts if type(ts) is str else None
        self.sidechain = obj.get("isSidechain") is True
        self.meta = obj.get("isMeta") is True
        self.summary = obj.get("isCompactSummary") is True
        # Filled by the readers; most lines leave most of them empty (shared, never mutated).
        self.texts: Sequence[str] = ()
        self.reasoning: Sequence[str] = ()
        self.calls: Sequence[ToolCall] = ()
        self.results: Sequence[tuple[str, str, bool]] = ()
        self.usage: dict[str, Any] | None = None
        self.model: str | None = None
        self.stop_reason: str | None = None
        self.error: str | None = None
        self.key: tuple[str, str | None] | None = None


def _parent_of(obj: dict[str, Any]) -> str | None:
    parent = obj.get("parentUuid")
    if parent is None:
        parent = obj.get("logicalParentUuid")  # a compact boundary's pre-compaction leaf
    return parent if type(parent) is str else None


def _block_piece(block: dict[str, Any]) -> str | None:
    """What a text, image or document content block shows the model (None: another kind)."""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return text if type(text) is str else None
    if kind == "image":
        return "[image]"
    if kind == "document":
        return "[document]"
    return None


def _block_text(content: Any) -> str:
    """Text of a tool_result ``content``: a string, or a list of text/image blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            piece = _block_piece(block) if isinstance(block, dict) else block
            if isinstance(piece, str):
                parts.append(piece)
        return "\n\n".join(parts)
    return as_text(content)


def _result_of(block: dict[str, Any], is_error: bool) -> tuple[str, str, bool]:
    """A tool result block as ``(call id, output, is_error)``."""
    call_id = block.get("tool_use_id")
    return (call_id if type(call_id) is str else "", _block_text(block.get("content")), is_error)


def _read_user(entry: _Entry, message: Any) -> None:
    content = message.get("content") if type(message) is dict else None
    if type(content) is str:
        entry.texts = (content,)
        return
    if not isinstance(content, list):
        return
    texts: list[str] = []
    results: list[tuple[str, str, bool]] = []
    for block in content:
        if type(block) is not dict:
            continue
        if block.get("type") == "tool_result":
            results.append(_result_of(block, block.get("is_error") is True))
            continue
        piece = _block_piece(block)
        if piece is not None:
            texts.append(piece)
    if texts:
        entry.texts = texts
    if results:
        entry.results = results


def _read_assistant(entry: _Entry, obj: dict[str, Any], message: Any) -> None:
    if type(message) is not dict:
        return
    msg_id = message.get("id")
    request_id = obj.get("requestId")
    entry.key = (
        msg_id if type(msg_id) is str else entry.uuid,
        request_id if type(request_id) is str else None,
    )
    model = message.get("model")
    if type(model) is str:
        entry.model = model
    stop = message.get("stop_reason")
    if type(stop) is str:
        entry.stop_reason = stop
    usage = message.get("usage")
    if type(usage) is dict:
        entry.usage = usage
    content = message.get("content")
    texts: list[str] = []
    if type(content) is str:
        texts.append(content)
    elif isinstance(content, list):
        _read_assistant_blocks(entry, content, texts)
    if texts:
        entry.texts = texts
    if obj.get("isApiErrorMessage") is True or obj.get("error"):
        error = obj.get("error")
        entry.error = ("\n".join(texts) or (error if isinstance(error, str) else "")) or "API error"


def _read_assistant_blocks(entry: _Entry, content: list[Any], texts: list[str]) -> None:
    """The blocks of an assistant line: text, thinking, tool calls, server tool results."""
    for block in content:
        if type(block) is not dict:
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if type(text) is str:
                texts.append(text)
        elif kind == "thinking":
            thinking = block.get("thinking")
            if type(thinking) is str:
                entry.reasoning = (*entry.reasoning, thinking)
        elif kind in ("tool_use", "server_tool_use"):
            call_id = block.get("id")
            name = block.get("name")
            call = construct(
                ToolCall,
                id=call_id if type(call_id) is str else "",
                name=name if type(name) is str else "",
                arguments=block.get("input"),
            )
            entry.calls = (*entry.calls, call)
        elif type(kind) is str and kind.endswith("_tool_result"):
            # A server tool's result (web search …) arrives inside the assistant reply.
            entry.results = (*entry.results, _result_of(block, False))


def _usage(raw: dict[str, Any]) -> Usage:
    return construct(
        Usage,
        input=as_int(raw.get("input_tokens")),
        output=as_int(raw.get("output_tokens")),
        cache_read=as_int(raw.get("cache_read_input_tokens")),
        cache_write=as_int(raw.get("cache_creation_input_tokens")),
        reasoning=0,
        total=None,
        convention=UsageConvention.ANTHROPIC,
    )


def _usage_size(raw: dict[str, Any]) -> int:
    return (
        as_int(raw.get("input_tokens"))
        + as_int(raw.get("cache_creation_input_tokens"))
        + as_int(raw.get("cache_read_input_tokens"))
        + as_int(raw.get("output_tokens"))
    )


class _Call:
    """One API message being assembled from its block lines."""

    __slots__ = ("calls", "entry", "error", "id", "model", "reasoning", "stop", "texts", "usage")

    def __init__(self, entry: _Entry, message_id: str) -> None:
        self.entry = entry
        self.id = message_id
        self.texts: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[ToolCall] = []
        self.usage: dict[str, Any] | None = None
        self.model: str | None = None
        self.stop: str | None = None
        self.error: str | None = None

    def merge(self, entry: _Entry) -> None:
        self.texts.extend(entry.texts)
        self.reasoning.extend(entry.reasoning)
        if entry.calls:
            known = {c.id for c in self.calls}
            self.calls.extend(c for c in entry.calls if c.id not in known)
        usage = entry.usage
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


# -- detection ------------------------------------------------------------------------------


def sniff(path: Path, head: bytes) -> float:
    """Confidence that ``path`` is a Claude Code transcript (from its first lines and location)."""
    if not head:
        return 0.0
    in_projects = ".claude" in path.parts or "projects" in path.parts
    score = 0.0
    for record in head_records(head, 32):
        if "payload" in record:  # Codex envelope
            continue
        kind = record.get("type")
        if kind in ("user", "assistant", "system") and (
            "parentUuid" in record or "sessionId" in record
        ):
            return 0.95
        if kind in ("file-history-snapshot", "queue-operation", "progress", "ai-title") or (
            kind == "summary" and "leafUuid" in record
        ):
            score = max(score, 0.8)
    if score == 0.0 and b'"parentUuid"' in head and b'"sessionId"' in head:
        score = 0.7  # first line longer than the head: judge from its keys
    if score and in_projects:
        score = min(1.0, score + 0.1)
    return score


# -- loading --------------------------------------------------------------------------------


def load(
    path: Path, *, progress: ProgressCallback | None = None, head_bytes: int | None = None
) -> Session:
    """Load a Claude Code transcript (read-only). See the module docstring for what is read."""
    path = Path(path)
    reader = _Reader(SessionBuilder(FORMAT, path))
    for line_no, offset, obj in read_jsonl(
        path, reader.builder, progress=progress, count=reader.entries.__len__, head_bytes=head_bytes
    ):
        reader.line(line_no, offset, obj)
    return reader.finish(path)


class _Reader:
    """Reads the lines of a transcript into entries: one method per record type
    (:data:`_HANDLERS`), then :meth:`finish` picks the active branch and builds the session."""

    def __init__(self, builder: SessionBuilder) -> None:
        self.builder = builder
        self.entries: list[_Entry] = []
        self.parents: dict[str, str | None] = {}  # every uuid line, including skipped ones
        self.unknown_types: set[str] = set()
        self.titles: list[str] = []
        self.versions: set[str] = set()
        self.session_id: str | None = None
        self.agent_id: str | None = None

    def line(self, line_no: int, offset: int, obj: dict[str, Any]) -> None:
        """One line of the file."""
        kind = obj.get("type")
        uuid = obj.get("uuid")
        parent = _parent_of(obj)
        if type(uuid) is str:
            if uuid in self.parents:
                self.builder.diagnostic(
                    line_no, "duplicate-uuid", f"uuid {uuid} seen before; duplicate line skipped"
                )
                return
            self.parents[uuid] = parent
        else:
            uuid = f"line-{line_no}"
        if type(kind) is str and kind in _SKIPPED_TYPES:
            return
        try:
            self._session_facts(obj)
            handler = _HANDLERS.get(kind) if type(kind) is str else None
            if handler is not None:
                handler(self, line_no, offset, uuid, parent, obj)
            else:
                self._unknown(kind, line_no)
        except Exception as exc:  # an unexpected shape must not stop the load
            self.builder.diagnostic(
                line_no, "unreadable-record", f"{kind or 'record'} line not understood ({exc})"
            )

    def _session_facts(self, obj: dict[str, Any]) -> None:
        """The session id and start time: from the first line that has them."""
        if self.session_id is None:
            sid = obj.get("sessionId")
            if isinstance(sid, str):
                self.session_id = sid
        if self.builder.started_at is None:
            ts = obj.get("timestamp")
            if isinstance(ts, str):
                self.builder.started_at = ts

    # -- one method per record type -----------------------------------------------------

    def assistant(
        self, line_no: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> None:
        """An assistant line: one content block of an API message (merged later)."""
        entry = _Entry(_ASSISTANT, line_no, offset, uuid, parent, obj)
        _read_assistant(entry, obj, obj.get("message"))
        self.entries.append(entry)

    def user(
        self, line_no: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> None:
        """A user line: text the user (or the agent, for meta lines) sent, or tool results."""
        entry = _Entry(_USER, line_no, offset, uuid, parent, obj)
        _read_user(entry, obj.get("message"))
        self.entries.append(entry)
        if self.builder.project is None:
            cwd = obj.get("cwd")
            if isinstance(cwd, str):
                self.builder.project = cwd
        version = obj.get("version")
        if isinstance(version, str):
            self.versions.add(version)
        if self.agent_id is None and isinstance(obj.get("agentId"), str):
            self.agent_id = obj["agentId"]

    def system(
        self, line_no: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> None:
        """A system line: a compaction boundary, a micro-compaction or an API error."""
        subtype = obj.get("subtype")
        builder = self.builder
        if subtype == "compact_boundary":
            entry = _Entry(_BOUNDARY, line_no, offset, uuid, parent, obj)
            meta = obj.get("compactMetadata")
            entry.usage = meta if isinstance(meta, dict) else {}
            self.entries.append(entry)
        elif subtype == "microcompact_boundary":
            meta = obj.get("microcompactMetadata")
            builder.metadata.setdefault("microcompactions", []).append(
                {"line": line_no, **(meta if isinstance(meta, dict) else {})}
            )
            builder.info(line_no, "microcompaction", "micro-compaction (old tool results cleared)")
        elif subtype == "api_error":
            error = obj.get("error")
            text = error if isinstance(error, str) else orjson.dumps(error).decode()
            builder.info(line_no, "api-error", f"API error recorded (retried by the agent): {text}")

    def summary(
        self, line_no: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> None:
        """A legacy ``summary`` line: the session's title, not a compaction."""
        self._title(obj.get("summary"))

    def ai_title(
        self, line_no: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> None:
        """An ``ai-title`` line: the session's title."""
        self._title(obj.get("aiTitle"))

    def _title(self, title: Any) -> None:
        if isinstance(title, str):
            self.titles.append(title)

    def _unknown(self, kind: Any, line_no: int) -> None:
        if not isinstance(kind, str):
            self.builder.diagnostic(line_no, "unknown-record", "a line without a type, skipped")
        elif kind not in self.unknown_types:
            self.unknown_types.add(kind)
            self.builder.info(
                line_no, "unknown-record", f"record type {kind!r} not understood, skipped"
            )

    # -- the session ----------------------------------------------------------------------

    def finish(self, path: Path) -> Session:
        """The active branch, assembled into messages, and the session's facts."""
        builder = self.builder
        builder.session_id = self.session_id
        if self.titles:
            builder.metadata["title"] = self.titles[-1]
        if self.versions:
            builder.metadata["version"] = max(self.versions)
        included = _active_entries(self.entries, self.parents, builder)
        subagent = bool(included) and all(e.sidechain for e in included)
        if subagent:
            builder.metadata["subagent"] = True
            if self.agent_id:
                builder.metadata["agent_id"] = self.agent_id
        _Assembler(self.parents, builder, flag_sidechain=not subagent).run(included)
        _set_window(builder)
        subagent_files = _subagent_files(path, self.session_id)
        if subagent_files:
            builder.metadata["subagent_files"] = subagent_files
        return builder.build()


_Handler = Callable[[_Reader, int, int, str, str | None, dict[str, Any]], None]

_HANDLERS: dict[str, _Handler] = {
    "assistant": _Reader.assistant,
    "user": _Reader.user,
    "system": _Reader.system,
    "summary": _Reader.summary,
    "ai-title": _Reader.ai_title,
}
"""The method that reads each record type (the types in :data:`_SKIPPED_TYPES` are passed over)."""


def _active_entries(
    entries: list[_Entry], parents: dict[str, str | None], builder: SessionBuilder
) -> list[_Entry]:
    """The entries of the active branch (plus side lines that belong to it), in file order."""
    main = [e for e in entries if not e.sidechain]
    if not main:
        return entries
    # The chain from the last line back to a root.
    chain: set[str] = set()
    uuid: str | None = main[-1].uuid
    while uuid is not None and uuid not in chain and uuid in parents:
        chain.add(uuid)
        uuid = parents[uuid]
    if uuid is not None and uuid not in parents:
        builder.info(
            None,
            "missing-parent",
            f"the conversation refers to a parent line that is not in the file ({uuid}); "
            "earlier lines are kept in file order",
        )

    # For each line off the chain: the chain node it forks from (None: a separate tree).
    fork_of: dict[str, str | None] = {}

    def fork_root(start: str) -> str | None:
        path: list[str] = []
        seen: set[str] = set()
        node: str | None = start
        result: str | None = None
        while node is not None and node not in seen:
            seen.add(node)
            if node in chain:
                result = path[-1] if path else None
                break
            if node in fork_of:
                result = fork_of[node]
                break
            path.append(node)
            node = parents.get(node)
        for visited in path:
            fork_of[visited] = result
        return result

    included_keys = {e.key for e in entries if e.kind == _ASSISTANT and e.uuid in chain}
    included_calls = {c.id for e in entries if e.uuid in chain for c in e.calls}
    kept: list[_Entry] = []
    abandoned: dict[str, list[int]] = {}
    for entry in entries:
        if entry.uuid in chain or entry.sidechain:
            kept.append(entry)
            continue
        root = fork_root(entry.uuid)
        if root is None:
            kept.append(entry)  # a separate tree (earlier root, broken link): file order
            continue
        if entry.kind == _ASSISTANT and entry.key in included_keys:
            kept.append(entry)  # another block line of an included API message
            included_calls.update(c.id for c in entry.calls)
            continue
        if entry.results and all(r[0] in included_calls for r in entry.results):
            kept.append(entry)  # a parallel tool result
            continue
        abandoned.setdefault(root, []).append(entry.line)
    for lines in abandoned.values():
        builder.info(
            lines[0],
            "abandoned-branch",
            f"rewound branch of {len(lines)} line(s) (lines {lines[0]}–{lines[-1]}) "
            "is not on the active conversation; skipped",
        )
    return kept


class _Assembler:
    """Emits the entries of the active branch as messages, in model order: the block lines of
    an API message merged into one assistant message, then one method per kind of entry."""

    def __init__(
        self, parents: dict[str, str | None], builder: SessionBuilder, *, flag_sidechain: bool
    ) -> None:
        self.parents = parents
        self.builder = builder
        self.flag_sidechain = flag_sidechain
        self.owner: dict[str, str] = {}  # line uuid -> id of the message holding it
        self.tool_names: dict[str, str] = {}
        self.answered: set[str] = set()
        self.max_context = 0

    def run(self, entries: list[_Entry]) -> None:
        order = self._merge(entries)
        calls = [item for item in order if isinstance(item, _Call)]
        for call in calls:
            for tc in call.calls:
                self.tool_names[tc.id] = tc.name
        for item in order:
            if isinstance(item, _Call):
                self._call(item)
            elif item.kind == _BOUNDARY:
                self._boundary(item)
            else:
                self._results(item)
                self._user_text(item)
        for call in calls:
            self._check_answered(call)
        self.builder.metadata["max_recorded_context"] = self.max_context

    def _merge(self, entries: list[_Entry]) -> list[_Entry | _Call]:
        """The entries in file order, the block lines of each API message merged into the
        :class:`_Call` that stands where its first line was."""
        calls_by_key: dict[tuple[str, str | None], _Call] = {}
        order: list[_Entry | _Call] = []
        used_ids: set[str] = set()
        for entry in entries:
            if entry.kind != _ASSISTANT or entry.key is None:
                used_ids.add(entry.uuid)
                self.owner[entry.uuid] = entry.uuid
                order.append(entry)
                continue
            call = calls_by_key.get(entry.key)
            if call is None:
                message_id = entry.key[0]
                if message_id in used_ids:
                    message_id = f"{message_id}#{entry.uuid}"
                used_ids.add(message_id)
                call = _Call(entry, message_id)
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

    def _call(self, item: _Call) -> None:
        """One API message: an assistant message."""
        first = item.entry
        usage = _usage(item.usage) if item.usage is not None else None
        if item.model == "<synthetic>":
            usage = None  # an error Claude Code wrote itself: no model call happened
        sidechain = first.sidechain and self.flag_sidechain
        if usage is not None and not sidechain:
            self.max_context = max(self.max_context, usage.prompt_tokens)
            if item.model:
                self.builder.model = item.model
        self.builder.add(
            Role.ASSISTANT,
            id=item.id,
            parent_id=self._parent_message(first.parent),
            timestamp=first.timestamp,
            text="\n\n".join(t for t in item.texts if t),
            reasoning="\n\n".join(t for t in item.reasoning if t),
            tool_calls=item.calls,
            usage=usage,
            model=item.model,
            stop_reason=item.stop,
            error=item.error,
            sidechain=sidechain,
            source_line=first.line,
            source_offset=first.offset,
        )

    def _boundary(self, entry: _Entry) -> None:
        """A compact boundary: a compaction event (the next message is its boundary)."""
        meta = entry.usage or {}
        trigger = meta.get("trigger")
        segment = meta.get("preservedSegment")
        head = segment.get("headUuid") if isinstance(segment, dict) else None
        self.builder.add_compaction(
            trigger=trigger if trigger in ("auto", "manual") else "unknown",
            tokens_before=as_int(meta.get("preTokens"), None),
            tokens_after=as_int(meta.get("postTokens"), None),
            first_kept_id=head if isinstance(head, str) else None,
            source_line=entry.line,
        )

    def _results(self, entry: _Entry) -> None:
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
            self.builder.add(
                Role.TOOL,
                id=entry.uuid if k == 0 else f"{entry.uuid}#{k}",
                parent_id=parent_id,
                timestamp=entry.timestamp,
                tool_result=_tool_result(call_id, name, output, is_error),
                sidechain=sidechain,
                source_line=entry.line,
                source_offset=entry.offset,
            )

    def _user_text(self, entry: _Entry) -> None:
        """The text of a user line: a user message (meta, or a compaction's summary)."""
        if entry.kind != _USER or not entry.texts:
            return  # an empty user line (no text, no result)
        if entry.results and not any(entry.texts):
            return  # tool results only
        text = "\n\n".join(entry.texts)
        message = self.builder.add(
            Role.USER,
            id=entry.uuid if not entry.results else f"{entry.uuid}#text",
            parent_id=self._parent_message(entry.parent),
            timestamp=entry.timestamp,
            text=text,
            summary=entry.summary,
            meta=entry.meta or text.startswith(_COMMAND_PREFIXES),
            sidechain=entry.sidechain and self.flag_sidechain,
            source_line=entry.line,
            source_offset=entry.offset,
        )
        compactions = self.builder.compactions
        if entry.summary and compactions:
            event = compactions[-1]
            if event.summary is None and event.message_index == message.index:
                event.summary = text

    def _check_answered(self, item: _Call) -> None:
        for tc in item.calls:
            if tc.id not in self.answered:
                self.builder.diagnostic(
                    item.entry.line,
                    "missing-tool-result",
                    f"tool call {tc.id} ({tc.name}) has no result in the file",
                )


def _tool_result(call_id: str, name: str | None, output: str, is_error: bool) -> ToolResult:
    return construct(
        ToolResult,
        call_id=call_id,
        tool_name=name,
        output=output,
        is_error=is_error,
        truncated_by_tool=False,
        compacted_at_ms=None,
    )


# "prompt is too long: 210097 tokens > 200000 maximum": the provider states the window.
_TOO_LONG = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum")


def _set_window(builder: SessionBuilder) -> None:
    model = builder.model or ""
    max_context = builder.metadata.get("max_recorded_context", 0)
    stated = None
    for message in builder.messages:  # errors are rare: a regex per error is cheap
        if message.error and not message.sidechain:
            match = _TOO_LONG.search(message.error)
            if match:
                stated = int(match.group(2))
    if stated:
        builder.context_window = stated
        builder.window_source = "recorded"
        builder.metadata["window_from_error"] = stated
    elif "[1m]" in model.lower():
        builder.context_window = LARGE_WINDOW
        builder.window_source = "table"
    elif isinstance(max_context, int) and max_context > DEFAULT_WINDOW:
        builder.context_window = LARGE_WINDOW
        builder.window_source = "table"
        builder.info(
            None,
            "window-inferred",
            f"recorded context reached {max_context} tokens, above 200k: assuming a 1M window",
        )
    else:
        # Left to the registry (core.windows), which falls back to this default.
        builder.metadata["default_window"] = DEFAULT_WINDOW


def _subagent_files(path: Path, session_id: str | None) -> list[str]:
    """Sub-agent transcripts that belong to this session (new and old layouts)."""
    found: list[Path] = []
    folder = path.parent / path.stem / "subagents"
    if folder.is_dir():
        found.extend(sorted(folder.glob("agent-*.jsonl")))
    if session_id and not path.name.startswith("agent-"):
        marker = f'"sessionId":"{session_id}"'.encode()
        for candidate in sorted(path.parent.glob("agent-*.jsonl"))[:200]:
            try:
                with open(candidate, "rb") as f:
                    head = f.read(4096)
            except OSError:
                continue
            if marker in head:
                found.append(candidate)
    return [str(p) for p in found]
