"""Claude Code transcripts: ``~/.claude/projects/<encoded-cwd>/<sessionId>.jsonl``.

What is read (see ``reference/formats.md`` §B):

* ``user`` / ``assistant`` lines. Claude Code writes one line per content block and repeats the
  API message's usage on each; lines with the same ``message.id`` + ``requestId`` are merged into
  one assistant :class:`Message` whose :class:`Usage` is counted once (the largest copy wins:
  earlier copies are written mid-stream; with ``usage.iterations``, 2.1.2xx, the last main-model
  pass is the request's usage). ``tool_use`` blocks become :class:`ToolCall` s; each
  ``tool_result`` block of a user line becomes one tool message joined to its call. The top-level
  ``toolUseResult`` is the UI's copy and is not read (the model saw ``tool_result.content``).
* ``system`` / ``compact_boundary`` → a :class:`CompactionEvent` (``preTokens``, ``postTokens``)
  whose trigger (auto, manual, or overflow recovery after a "prompt is too long" error) comes
  with its evidence (:mod:`~core.formats.claude_compactions`); a partial compaction's preserved
  segment is placed before it and named by ``first_kept_id``. The ``isCompactSummary`` user line
  after it is a summary message; ``isMeta`` user lines are meta messages.
* The uuid / parentUuid tree: the active branch is the chain from the last line back to its root
  (crossing a compact boundary through ``logicalParentUuid``). Lines forked off that chain by a
  rewind are left out with a diagnostic (a compaction among them is reported, not applied);
  parallel tool results, the other block lines of an included API message and hook attachments,
  which Claude Code also writes as side branches, are kept. A file may begin at a boundary whose
  history is not in it.
* The agent: ``Session.agent_version`` is the last ``version`` of the agent's lines (where it
  changed: ``metadata["version_changes"]``), ``metadata["entrypoint"]`` how it was started
  (``cli``, ``claude-desktop``, ``sdk-cli`` …). ``Session.provider`` is ``anthropic`` unless the
  message ids or the model id name Bedrock or Vertex (``metadata["provider_evidence"]``).
* Titles: ``custom-title`` (the user's) wins over ``ai-title`` and the legacy ``summary`` title
  lines (they are not compactions); the last one is ``metadata["title"]``. ``agent-name`` is
  ``metadata["agent_name"]``.
* Skipped without a diagnostic: the bookkeeping lines of :data:`_SKIPPED_TYPES` (``progress``,
  ``file-history-snapshot`` / ``-delta``, ``queue-operation``, ``last-prompt``, ``mode``,
  ``permission-mode`` …) and the ``system`` subtypes the model is not sent (``stop_hook_summary``,
  ``turn_duration``, ``away_summary``, ``informational`` …). A header line another tool added
  (``{"_type": "hive-mind-meta"}``) is an info.
* ``attachment`` lines (files mentioned with ``@``, hook output, tool / agent / skill listings,
  reminders …): the ones the model is sent become meta user messages with the text it saw
  (:mod:`~core.formats.claude_attachments`), so they count in the context as they do in the
  agent's own estimate; the UI-only ones are skipped. ``system`` / ``local_command`` lines (a
  slash command and its output) are sent to the model too: meta user messages.

The loader reads in three steps, one module each: :mod:`~core.formats.claude_records` turns each
useful line into an entry, :mod:`~core.formats.claude_branches` picks the active branch, and
:mod:`~core.formats.claude_assembly` builds the messages and compactions from it. Well-formed
user, assistant and passed-over lines are decoded typed (:mod:`~core.formats.claude_typed`: only
the fields read, into msgspec structs); any other line is read as an object, with every check.

A sub-agent transcript (``agent-*.jsonl`` next to the session or
``<sessionId>/subagents/agent-*.jsonl``) loads on its own; its messages are not flagged
``sidechain`` there (they are the conversation being looked at) and ``metadata["subagent"]`` is
set. Sidechain lines inside a main transcript are flagged ``sidechain``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeGuard

import orjson

from core.agents.overflow_errors import is_context_overflow_message
from core.formats import claude_typed as typed
from core.formats.base import ProgressCallback, SessionBuilder
from core.formats.claude_assembly import Assembler, usage_of
from core.formats.claude_attachments import attachment_text, is_known
from core.formats.claude_branches import active_entries
from core.formats.claude_compactions import (
    COMMAND_TAG,
    CompactCommands,
    is_typed_compact,
    place_preserved_segments,
)
from core.formats.claude_records import (
    API_ERROR,
    ASSISTANT,
    ATTACHMENT,
    BOUNDARY,
    USER,
    Entry,
    parent_of,
    read_assistant,
    read_user,
)
from core.formats.file_kind import open_regular, unreadable_reason
from core.formats.jsonl import Lines, Record, read_jsonl_raw
from core.formats.sniffers import sniff_claude_code
from core.model.read_numbers import plausible, show_value
from core.model.session import CompactionEvent, Session, SourceFormat

FORMAT = SourceFormat.CLAUDE_CODE
PARTIAL_READS = True
"""``load(..., head_bytes=N)`` reads only the complete lines of the first N bytes."""

DEFAULT_WINDOW = 200_000
"""Claude Code's window for a Claude model the table does not know."""

_USAGE_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
"""The counts of a usage object the loader reads (each checked where the line is read)."""

_SKIPPED_TYPES = typed.SKIPPED_TYPES

# -- detection ------------------------------------------------------------------------------


sniff = sniff_claude_code
"""Confidence that a path is this format (:mod:`core.formats.sniffers`)."""


# -- loading --------------------------------------------------------------------------------


def load(
    path: Path, *, progress: ProgressCallback | None = None, head_bytes: int | None = None
) -> Session:
    """Load a Claude Code transcript (read-only). See the module docstring for what is read."""
    path = Path(path)
    reader = _Reader(SessionBuilder(FORMAT, path))
    for line_no, offset, _raw, obj in read_jsonl_raw(
        path,
        reader.builder,
        progress=progress,
        count=reader.entries.__len__,
        head_bytes=head_bytes,
        walk=reader.walk,
        views=True,  # (each line of a chunk of long lines a view of it, not a copy: the walk
        any_views=True,  # decodes a buffer, and gives a line it does not read typed as bytes)
    ):
        reader.line(line_no, offset, obj)
    return reader.finish(path)


class _Reader:
    """Reads the lines of a transcript into entries: one method per record type
    (:data:`_HANDLERS`), then :meth:`finish` picks the active branch and builds the session."""

    def __init__(self, builder: SessionBuilder) -> None:
        self.builder = builder
        self.entries: list[Entry] = []
        self.parents: dict[str, str | None] = {}  # every uuid line, including skipped ones
        self.last_uuid: str | None = None
        """The uuid of the last line that had one (the one before the line being read)."""
        self.before_boundary: dict[str, str] = {}
        """Compact boundary uuid -> the uuid of the line written just before it."""
        self.unknown_types: set[str] = set()
        self.unknown_attachments: set[str] = set()
        self.titles: list[str] = []
        self.custom_titles: list[str] = []
        self.version: str | None = None
        self.version_changes: list[dict[str, Any]] = []
        """``{"line", "version"}`` where the agent's version was first seen and changed."""
        self.entrypoint: str | None = None
        self.compact_commands = CompactCommands()
        self.overflow_errors: list[str] = []
        """The texts of the api_error lines that say the prompt did not fit."""
        self.session_id: str | None = None
        self.agent_id: str | None = None
        self.last_timestamp: str | None = None
        """The timestamp of the last entry read typed: a line with the same one shares its string
        (the block lines of one reply and its tool results are sometimes written in the same
        millisecond)."""
        builder.arguments_ready = True  # (each call's, as its line is read)
        builder.estimates_derived = False  # (a message's figures are all read, none derived)
        self.last_assistant = Entry(ASSISTANT, 0, 0, "", None)
        """The last assistant line read typed (whose ids the next one may share; none yet: an
        entry without a message id)."""
        self.call_ids: dict[str, str] = {}
        """The id of each tool call read typed, the string the call holds (its results' too)."""
        self.decode = typed.decode_line
        """How a line is decoded for the typed read: with the session's facts until they are
        known (:meth:`_typed_facts`)."""
        self.linked = True
        """Every line with a uuid so far names the one before it as its parent (the first
        none), no uuid repeats and every entry has its uuid: the active branch is then every
        entry (what :func:`~core.formats.claude_branches.active_entries` finds, known without
        walking the tree)."""

    def line(self, line_no: int, offset: int, obj: dict[str, Any]) -> None:
        """One line of the file: whatever it holds, a problem is a diagnostic, never an error."""
        try:
            self._line(line_no, offset, obj)
        except Exception as exc:  # an unexpected shape must not stop the load
            kind = obj.get("type")
            name = kind if type(kind) is str else "record"
            self.builder.diagnostic(
                line_no, "unreadable-record", f"{name} line not understood ({exc})"
            )

    def walk(self, lines: Lines, batch: list[bytes]) -> Iterator[Record]:
        """Walk a batch of complete lines (``read_jsonl_raw``'s ``walk``): each user, assistant
        or passed-over line read typed (:mod:`core.formats.claude_typed`), with what :meth:`line`
        does with the same line as an object; any other line is parsed the plain way and yielded
        for :meth:`line`, in the file's order. One loop for every step of a line: it runs once
        per line of the file (the calls of a step per line were a tenth of the load's bytecode)."""
        line_no, offset = lines.line_no, lines.offset
        left = 0  # the lines not read typed
        read, assistant, with_facts = typed.read, ASSISTANT, typed.decode_line
        builder, parents, call_ids = self.builder, self.parents, self.call_ids
        add_entry, share_arguments = self.entries.append, builder.share_arguments
        last_assistant, last_timestamp = self.last_assistant, self.last_timestamp
        last_uuid, decode = self.last_uuid, self.decode
        for raw in batch:
            line_no += 1
            start = offset
            offset += len(raw) + 1
            typed_read = read(raw, line_no, start, decode, call_ids)
            if typed_read is None:
                left += 1
                self.last_uuid = last_uuid  # (what the plain read reads and writes)
                yield from _plain(lines, raw, line_no, start)
                last_uuid = self.last_uuid
                continue
            line, entry, parent = typed_read
            try:
                uuid = line.uuid
                if uuid is None or uuid in parents:
                    if self._unlinked(line_no, uuid, entry):
                        continue
                else:
                    if parent == last_uuid:  # the usual line: one copy of its parent's uuid
                        parent = last_uuid
                    else:
                        self.linked = False
                    parents[uuid] = parent
                    last_uuid = uuid
                if entry is None:
                    continue  # a passed-over line
                entry.parent = parent
                # The entry of a user or assistant line read typed, and the facts its line gives.
                if decode is with_facts:  # (a typed.Line)
                    self._typed_facts(line, entry)  # type: ignore[arg-type]
                    decode = self.decode  # (without them once they are known)
                timestamp = entry.timestamp
                if timestamp == last_timestamp:  # (None after None: nothing to share)
                    entry.timestamp = last_timestamp  # one string, not one per line
                else:
                    last_timestamp = timestamp
                add_entry(entry)
                version, entrypoint = line.version, line.entrypoint
                if version != self.version or entrypoint != self.entrypoint:  # (now and then)
                    self._agent_changed(line_no, version, entrypoint)
                if entry.kind != assistant:
                    self._user_facts(line_no, entry, line.agent_id)
                    continue
                # The ids of the last assistant line when this one has them (the block lines of
                # one reply: half the assistant lines of a real session): its copies go at once,
                # not at the end of the load, where they left free blocks among what is kept.
                if entry.message_id == last_assistant.message_id:  # (the first: None)
                    entry.message_id, request_id = last_assistant.message_id, entry.request_id
                    last_request = last_assistant.request_id
                    entry.request_id = last_request if request_id == last_request else request_id
                last_assistant = entry
                for call in entry.calls:
                    call.arguments = share_arguments(call.arguments)
                commands = self.compact_commands
                if commands.open:
                    commands.call()
            except Exception as exc:  # an unexpected shape must not stop the load
                builder.diagnostic(
                    line_no, "unreadable-record", f"{line.type} line not understood ({exc})"
                )
        self.last_assistant, self.last_timestamp = last_assistant, last_timestamp
        self.last_uuid = last_uuid
        lines.line_no, lines.offset = line_no, offset
        read_typed = len(batch) - left
        lines.objects_read += read_typed
        lines.non_blank += read_typed

    def _unlinked(self, line_no: int, uuid: str | None, entry: Entry | None) -> bool:
        """A line read typed without a uuid, or with one seen before (a diagnostic: True, the
        line is skipped); either way the active branch is not every entry (:attr:`linked`),
        unless the line is a passed-over line without a uuid."""
        if uuid is not None:
            self.builder.diagnostic(
                line_no, "duplicate-uuid", f"uuid {uuid} seen before; duplicate line skipped"
            )
            self.linked = False
            return True
        if entry is not None:
            self.linked = False  # an entry without a uuid (``line-N``)
        return False

    def typed_line(self, raw: bytes, line_no: int, offset: int) -> bool:
        """The step :meth:`walk` takes for one line: True when it read the line typed, False,
        having changed nothing, when the line is to be read as an object (:meth:`line`)."""
        one = _OneLine(self.builder, line_no, offset)
        for _ in self.walk(one, [raw]):
            pass  # (nothing: the line left to the plain read is not read)
        return one.objects_read == 1

    def _user_facts(self, line_no: int, entry: Entry, agent_id: str | None) -> None:
        """What a user line read either way tells: a ``/compact`` command, the agent's id."""
        first = entry.one_text  # (the first text: not entry.texts, no tuple made a line)
        if first is None and entry.more_texts:
            first = entry.more_texts[0]
        # (the /compact command, typed or as the agent records it: "/compact" is in its first
        # 300 characters either way, the test that nearly always answers, first)
        if (
            first is not None
            and "/compact" in (head := first[:300])
            and (is_typed_compact(first) or COMMAND_TAG in head)
        ):
            self.compact_commands.command(line_no)
        if self.agent_id is None and agent_id is not None:
            self.agent_id = agent_id

    def _typed_facts(self, line: typed.Line, entry: Entry) -> None:
        """The session's id, folder and start, from the first line read typed that has them
        (the folder from a user line); once all are known, lines are read without them."""
        if self.session_id is None and line.session_id is not None:
            self.session_id = line.session_id
        builder = self.builder
        if builder.project is None and entry.kind != ASSISTANT and line.cwd is not None:
            builder.project = line.cwd
        if builder.started_at is None:
            builder.started_at = entry.timestamp  # (None while no line had one)
        if (
            self.session_id is not None
            and builder.project is not None
            and builder.started_at is not None
        ):
            self.decode = typed.decode_envelope

    def _line(self, line_no: int, offset: int, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        uuid = obj.get("uuid")
        parent = parent_of(obj)
        synthetic = False
        if type(uuid) is str:
            if uuid in self.parents:
                self.builder.diagnostic(
                    line_no, "duplicate-uuid", f"uuid {uuid} seen before; duplicate line skipped"
                )
                self.linked = False
                return
            self.parents[uuid] = parent
            before, self.last_uuid = self.last_uuid, uuid
            if parent != before:
                self.linked = False
        else:
            if uuid is not None:
                self._bad_id(line_no, "uuid", uuid)
            uuid = f"line-{line_no}"
            before = self.last_uuid
            synthetic = True  # (an entry made of this line has no uuid: see the handler)
        if parent is None and obj.get("parentUuid") is not None:
            self._bad_id(line_no, "parentUuid", obj["parentUuid"])
        if type(kind) is not str:
            self._unknown(kind, line_no, obj)
            return
        if kind in _SKIPPED_TYPES:
            return
        if before is not None and kind == "system" and obj.get("subtype") == "compact_boundary":
            self.before_boundary[uuid] = before
        self._session_facts(obj)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, line_no, offset, uuid, parent, obj)
            if synthetic and self.entries and self.entries[-1].line == line_no:
                self.linked = False  # an entry without a uuid (``line-N``)
        else:
            self._unknown(kind, line_no, obj)

    def _bad_id(self, line_no: int, key: str, value: Any) -> None:
        """A ``uuid`` or ``parentUuid`` that is not a string: the line is read as one without
        it (its own id is ``line-N``; without a parent it starts a tree)."""
        self.builder.diagnostic(
            line_no, "bad-id", f"{key} {show_value(value)} is not a string; ignored"
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
        message = obj.get("message")
        if not self._has_message(message, line_no, "assistant"):
            return
        usage = message.get("usage")
        if usage is not None and not isinstance(usage, dict):
            self.builder.diagnostic(
                line_no, "unreadable-usage", "usage is not an object: the call has no usage"
            )
        entry = Entry.of(ASSISTANT, line_no, offset, uuid, parent, obj)
        read_assistant(entry, obj, message)
        for call in entry.calls:
            call.arguments = self.builder.share_arguments(call.arguments)
        if entry.usage is not None:
            checked = self.builder.counts(line_no, "usage", entry.usage, _USAGE_COUNTS)
            entry.call_usage = usage_of(checked)
            entry.usage = None  # the raw dict (and its nested ones) is not kept for every line
        self.entries.append(entry)
        self.compact_commands.call()
        self._agent_facts(line_no, obj)

    def user(
        self, line_no: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> None:
        """A user line: text the user (or the agent, for meta lines) sent, or tool results."""
        message = obj.get("message")
        if not self._has_message(message, line_no, "user"):
            return
        entry = Entry.of(USER, line_no, offset, uuid, parent, obj)
        read_user(entry, message)
        self.entries.append(entry)
        self._agent_facts(line_no, obj)
        agent_id = obj.get("agentId")
        self._user_facts(line_no, entry, agent_id if isinstance(agent_id, str) else None)
        if self.builder.project is None:
            cwd = obj.get("cwd")
            if isinstance(cwd, str):
                self.builder.project = cwd

    def _has_message(self, message: Any, line_no: int, kind: str) -> TypeGuard[dict[str, Any]]:
        """The line holds its ``message`` object (else a diagnostic, and the line is skipped)."""
        if isinstance(message, dict):
            return True
        self.builder.diagnostic(
            line_no, "unreadable-record", f"{kind} line without a message object, skipped"
        )
        return False

    def _agent_facts(self, line_no: int, obj: dict[str, Any]) -> None:
        """The agent's version (the last one; where it changed) and how it was started, from
        the envelope of the agent's own lines (not from another tool's header line)."""
        version, entrypoint = obj.get("version"), obj.get("entrypoint")
        self._agent_changed(
            line_no,
            version if type(version) is str else None,
            entrypoint if type(entrypoint) is str else None,
        )

    def _agent_changed(self, line_no: int, version: str | None, entrypoint: str | None) -> None:
        """The agent's version and how it was started, as a line gives them (None: not given):
        the last ones recorded, and where the version changed."""
        if version is not None and version != self.version:
            self.version = version
            self.version_changes.append({"line": line_no, "version": version})
        if entrypoint is not None:
            self.entrypoint = entrypoint

    def system(
        self, line_no: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> None:
        """A system line: a compaction boundary, a micro-compaction or an API error."""
        subtype = obj.get("subtype")
        builder = self.builder
        self._agent_facts(line_no, obj)
        if subtype == "compact_boundary":
            entry = Entry.of(BOUNDARY, line_no, offset, uuid, parent, obj)
            entry.usage = self._compact_metadata(line_no, obj.get("compactMetadata"))
            self.entries.append(entry)
            self.compact_commands.boundary(line_no)
        elif subtype == "local_command":
            # A slash command and its output: the agent sends them to the model as a user message.
            content = obj.get("content")
            if isinstance(content, str) and content:
                entry = Entry.of(USER, line_no, offset, uuid, parent, obj)
                entry.texts = (content,)
                entry.meta = True
                self.entries.append(entry)
                self._user_facts(line_no, entry, None)
        elif subtype == "microcompact_boundary":
            meta = obj.get("microcompactMetadata")
            builder.metadata.setdefault("microcompactions", []).append(
                {"line": line_no, **(meta if isinstance(meta, dict) else {})}
            )
            builder.info(line_no, "microcompaction", "micro-compaction (old tool results cleared)")
        elif subtype == "api_error":
            text = _error_text(obj.get("error"))
            builder.info(line_no, "api-error", f"API error recorded (retried by the agent): {text}")
            if is_context_overflow_message(text):
                entry = Entry.of(API_ERROR, line_no, offset, uuid, parent, obj)
                entry.error = text
                self.entries.append(entry)
                self.overflow_errors.append(text)

    def attachment(
        self, line_no: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> None:
        """An ``attachment`` line: context the agent injected. What the model was sent of it (see
        :mod:`core.formats.claude_attachments`) is a meta user message; the rest is skipped."""
        self._agent_facts(line_no, obj)
        attachment = obj.get("attachment")
        if not isinstance(attachment, dict):
            self.builder.diagnostic(
                line_no,
                "unreadable-record",
                "attachment line without an attachment object, skipped",
            )
            return
        text = attachment_text(obj, attachment)
        if not text:
            self._unknown_attachment(attachment.get("type"), line_no)
            return
        entry = Entry.of(ATTACHMENT, line_no, offset, uuid, parent, obj)
        entry.texts = (text,)
        entry.meta = True
        self.entries.append(entry)

    def _unknown_attachment(self, kind: Any, line_no: int) -> None:
        """An info, once per type, for an attachment type whose model text is not known."""
        if isinstance(kind, str) and is_known(kind):
            return
        name = repr(kind)
        if name not in self.unknown_attachments:
            self.unknown_attachments.add(name)
            self.builder.info(
                line_no,
                "unknown-attachment",
                f"attachment type {name} not known: what the model was sent of it (if anything) "
                "is not counted",
            )

    def _compact_metadata(self, line_no: int, metadata: Any) -> dict[str, Any]:
        """A boundary's ``compactMetadata``, with a diagnostic for what cannot be read in it."""
        if not isinstance(metadata, dict):
            self.builder.diagnostic(
                line_no,
                "unreadable-compaction",
                "compact boundary without compactMetadata: its trigger and sizes are unknown",
            )
            return {}
        sizes = ("preTokens", "postTokens")
        if all(plausible(metadata.get(key)) for key in sizes):
            return metadata
        cleaned = dict(metadata)
        for key in sizes:
            cleaned[key] = self.builder.optional_count(
                line_no, f"compactMetadata.{key}", metadata.get(key)
            )
        return cleaned

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

    def custom_title(
        self, line_no: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> None:
        """A ``custom-title`` line: the title the user gave the session (wins over the others)."""
        title = obj.get("customTitle")
        if isinstance(title, str):
            self.custom_titles.append(title)

    def agent_name(
        self, line_no: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> None:
        """An ``agent-name`` line: the name the session goes by in the agent's list."""
        name = obj.get("agentName")
        if isinstance(name, str):
            self.builder.metadata["agent_name"] = name

    def _title(self, title: Any) -> None:
        if isinstance(title, str):
            self.titles.append(title)

    def _unknown(self, kind: Any, line_no: int, obj: dict[str, Any]) -> None:
        if not isinstance(kind, str):
            foreign = obj.get("_type")
            if isinstance(foreign, str):
                # A header another tool added when it extracted the session (hive-mind-meta).
                self.builder.info(
                    line_no, "foreign-record", f"a {foreign!r} line of another tool, skipped"
                )
                return
            if kind is None:
                self.builder.diagnostic(line_no, "unknown-record", "a line without a type, skipped")
            else:
                self.builder.diagnostic(
                    line_no,
                    "unknown-record",
                    f"type {show_value(kind)} is not a string; line skipped",
                )
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
        titles = self.custom_titles or self.titles
        if titles:
            builder.metadata["title"] = titles[-1]
        if self.version is not None:
            builder.metadata["version"] = self.version
        if len(self.version_changes) > 1:
            builder.metadata["version_changes"] = self.version_changes
        if self.entrypoint is not None:
            builder.metadata["entrypoint"] = self.entrypoint
        if self.linked:
            included = self.entries  # (every entry: see ``linked``)
        else:
            included = active_entries(self.entries, self.parents, builder, self.before_boundary)
        self.entries = []  # (the assembly lets each entry go once its message is made)
        self.call_ids = {}  # (read: the assembly has its own table of the calls it keeps)
        segments = (  # (no boundary read: nothing to place, no walk over the entries)
            place_preserved_segments(included, self.parents, self.before_boundary)
            if self.compact_commands.by_boundary
            else {}
        )
        subagent = bool(included) and all(e.sidechain for e in included)
        if subagent:
            builder.metadata["subagent"] = True
            if self.agent_id:
                builder.metadata["agent_id"] = self.agent_id
        assembler = Assembler(
            self.parents,
            builder,
            flag_sidechain=not subagent,
            compact_commands=self.compact_commands.by_boundary,
            segments=segments,
            linked=self.linked,
        )
        assembler.run(included)
        _add_rewound_compactions(builder)
        window_evidence = _set_window(builder, [*assembler.errors, *self.overflow_errors])
        subagent_files, skipped = _subagent_files(path, self.session_id)
        if subagent_files:
            builder.metadata["subagent_files"] = subagent_files
        for name, reason in skipped:
            builder.info(None, "subagent-skipped", f"sub-agent file {name} skipped: {reason}")
        parent_id = None
        if subagent and self.agent_id:
            parent_id = builder.session_id
            builder.session_id = self.agent_id
            agent_meta = _agent_meta(path)
            if agent_meta is not None:
                builder.metadata["agent_meta"] = agent_meta
        session = builder.build()
        session.parent_session_id = parent_id
        session.agent_version = self.version
        session.window_evidence = window_evidence
        session.provider = "anthropic"
        if assembler.provider is not None:
            session.provider, builder.metadata["provider_evidence"] = assembler.provider
        return session


class _OneLine(Lines):
    """The walk of a single line (:meth:`_Reader.typed_line`), which leaves a line the typed
    read does not read unread."""

    def __init__(self, builder: SessionBuilder, line_no: int, offset: int) -> None:
        super().__init__(builder, None, offset)
        self.line_no = line_no - 1

    def plain(self, line: bytes, line_no: int, start: int) -> list[Record]:
        return []


def _plain(lines: Lines, raw: bytes, line_no: int, start: int) -> Iterator[Record]:
    """A line the typed read does not read, read as an object (none for a blank line); a line
    handed as a view of its chunk is read, and yielded, as bytes."""
    raw = bytes(raw)  # (a bytes line: itself, not a copy)
    if raw and not raw.isspace():
        yield from lines.plain(raw, line_no, start)


_Handler = Callable[[_Reader, int, int, str, str | None, dict[str, Any]], None]

_HANDLERS: dict[str, _Handler] = {
    "assistant": _Reader.assistant,
    "user": _Reader.user,
    "system": _Reader.system,
    "summary": _Reader.summary,
    "ai-title": _Reader.ai_title,
    "attachment": _Reader.attachment,
    "custom-title": _Reader.custom_title,
    "agent-name": _Reader.agent_name,
}
"""The method that reads each record type (the types in :data:`_SKIPPED_TYPES` are passed over)."""


# "prompt is too long: 210097 tokens > 200000 maximum": the provider states the window.
_TOO_LONG = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum")


def _error_text(error: Any) -> str:
    """What an ``api_error`` line's ``error`` says: the provider's message when the error is the
    API's JSON (``{"error": {"error": {"message": …}}}``), else the error as text."""
    if isinstance(error, str):
        return error
    node = error
    for _ in range(4):
        if not isinstance(node, dict):
            break
        message = node.get("message")
        if isinstance(message, str) and message:
            return message
        node = node.get("error")
    return orjson.dumps(error).decode()


def _set_window(builder: SessionBuilder, errors: list[str]) -> str | None:
    """The window a provider's error states ("prompt is too long: N tokens > W maximum", on a
    failed call or an ``api_error`` line: ``recorded``), returned with its evidence; otherwise
    the registry resolves it from the model and the recording (:mod:`core.agents.window_evidence`:
    ``[1m]`` models, requests or automatic compactions above 200k), with Claude Code's 200k
    default for a model it does not know (``metadata["default_window"]``). ``errors``: those of
    the main assistant messages (:attr:`Assembler.errors`), then the ``api_error`` lines'."""
    for error in reversed(errors):  # rare: a regex per error is cheap
        match = _TOO_LONG.search(error)
        if match:
            stated = int(match.group(2))
            builder.context_window = stated
            builder.window_source = "recorded"
            builder.metadata["window_from_error"] = stated
            return f"the provider's error says so: {match.group(0)}"
    builder.metadata["default_window"] = DEFAULT_WINDOW
    return None


def _add_rewound_compactions(builder: SessionBuilder) -> None:
    """The compactions of rewound branches, kept as events that did not take effect (placed
    before the first active message recorded after them), so that every compaction the file
    holds is reported with its trigger."""
    rewound = builder.metadata.get("rewound_compactions") or []
    if not rewound:
        return
    lines = [message.source_line or 0 for message in builder.messages]
    for entry in rewound:
        line = entry["line"]
        at = next((i for i, seen in enumerate(lines) if seen > line), len(lines))
        trigger = entry["trigger"] if entry["trigger"] in ("auto", "manual") else "unknown"
        builder.compactions.append(
            CompactionEvent(
                message_index=at,
                trigger=trigger,
                trigger_evidence=f"compactMetadata.trigger is {entry['trigger']} (line {line}); "
                "the conversation was rewound past it (it went on from the line before it)",
                tokens_before=entry["tokens_before"],
                source_line=line,
                rewound=True,
            )
        )
    builder.compactions.sort(key=lambda event: event.message_index)


def _agent_meta(path: Path) -> dict[str, Any] | None:
    """``agent-<id>.meta.json`` beside a sub-agent transcript (its type and description), when
    present, a regular file and small."""
    meta = path.with_name(path.name.removesuffix(".jsonl") + ".meta.json")
    if unreadable_reason(meta) is not None:
        return None
    try:
        with open_regular(meta) as f:
            data = orjson.loads(f.read(65536))
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _subagent_files(path: Path, session_id: str | None) -> tuple[list[str], list[tuple[str, str]]]:
    """Sub-agent transcripts that belong to this session (new and old layouts), and the files
    named like one that are skipped (with why): only regular files are opened (a FIFO named
    ``agent-x.jsonl`` would block the read forever)."""
    found: list[Path] = []
    skipped: list[tuple[str, str]] = []
    folder = path.parent / path.stem / "subagents"
    if folder.is_dir():
        for candidate in sorted(folder.glob("agent-*.jsonl")):
            reason = unreadable_reason(candidate)
            if reason is None:
                found.append(candidate)
            else:
                skipped.append((candidate.name, reason))
    if session_id and not path.name.startswith("agent-"):
        marker = f'"sessionId":"{session_id}"'.encode()
        for candidate in sorted(path.parent.glob("agent-*.jsonl"))[:200]:
            reason = unreadable_reason(candidate)
            if reason is not None:
                skipped.append((candidate.name, reason))
                continue
            try:
                with open_regular(candidate) as f:
                    head = f.read(4096)
            except OSError:
                continue
            if marker in head:
                found.append(candidate)
    return [str(p) for p in found], skipped
