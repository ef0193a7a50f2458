"""Codex rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``.

What is read (see ``reference/formats.md`` §A1):

* The envelope ``{timestamp, type, payload}``. ``session_meta`` gives the id, cwd, CLI version
  (``agent_version``), provider and the base instructions (kept as the first, meta, system
  message: the model sees them on every call); ``turn_context`` the model and truncation policy
  (``metadata["truncation_policy"]``). Resumes, sub-agent forks and the window per turn are read
  by :mod:`core.formats.codex_meta`.
* ``response_item`` s in order. User, developer and assistant messages; ``reasoning`` (summary
  text when present; encrypted content is not text); ``function_call`` (its JSON-string
  arguments parsed to a dict, kept as the string when they do not parse), ``custom_tool_call``,
  ``local_shell_call``, ``tool_search_call``, ``web_search_call`` (run by the server: no result
  expected); their ``*_output`` items become tool messages joined by ``call_id``. The model-side
  items between two inputs make ONE assistant message: one model call.
* Codex's own size estimate of every item it adds up in its compaction check
  (:mod:`core.formats.codex_sizes`): ``agent_estimate_tokens`` of user, developer and tool
  messages (tool outputs capped as history keeps them; measured on the bytes the file holds when
  they enter history unchanged), ``reasoning_estimate_tokens`` of each call's encrypted reasoning
  (predicted from ``reasoning_output_tokens`` when the file was redacted:
  ``metadata["reasoning_estimated"]``).
* ``event_msg/token_count``: ``info.last_token_usage`` is attached to the model call it follows,
  normalised (``input = input_tokens - cached_input_tokens``, ``cache_read = cached``); the
  cumulative ``total_token_usage`` only serves to drop the repeated copies Codex writes; the
  window comes from ``info.model_context_window`` (``window_source = "recorded"``). A
  ``token_count`` without a request (``input_tokens`` 0) is no call: after a compaction (0.104:
  just before it) it is Codex's estimate of the rebuilt history (the compaction's
  ``tokens_after``); with the cumulative total set to the window it marks the context as full.
* ``compacted``: a :class:`CompactionEvent`, its trigger read from the turn around it
  (:mod:`core.formats.codex_turns`); with ``replacement_history`` the model-visible list
  starts over from it, so its items are emitted again: user copies flagged ``meta``, assistant
  copies flagged ``meta`` and ``summary`` (they are the compaction's product, not model calls),
  the summary text or the encrypted ``compaction`` item flagged ``summary``; without it the
  message text is a summary message.
* The ``user_message`` / ``agent_message`` / ``agent_reasoning`` events duplicate response items
  and are ignored, as is ``context_compacted`` (the ``compacted`` line is the event);
  ``user_message``, ``task_started`` and ``task_complete`` / ``turn_aborted`` delimit the turns.
  Newer records that say nothing about the context (``world_state``, ``thread_settings_applied``,
  ``thread_goal_updated``, ``item_completed`` …) are passed over quietly.
* The legacy un-enveloped format: a first line ``{id, timestamp, instructions, git}``, bare
  response items, and ``{"record_type": "state"}`` lines.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from msgspec import Raw

from core.formats.base import ProgressCallback, SessionBuilder, as_text
from core.formats.codex_call import ModelCall, joined
from core.formats.codex_fork import keep_own_part
from core.formats.codex_items import (
    content_text,
    custom_output_error,
    is_context_message,
    name_and_arguments,
    output_text,
)
from core.formats.codex_lines import At, payload_bytes
from core.formats.codex_meta import ThreadFacts
from core.formats.codex_sizes import (
    OutputCap,
    approx_tokens,
    encrypted_length,
    encrypted_tokens,
    item_tokens,
    placeholder_length,
    redacted_reasoning_tokens,
)
from core.formats.codex_turns import TurnTracker
from core.formats.codex_typed_read import walk_lines
from core.formats.codex_usage import USAGE_COUNTS, marks_full, same_usage
from core.formats.jsonl import read_jsonl_raw
from core.formats.sniffers import CODEX_ITEM_TYPES as _ITEM_TYPES
from core.formats.sniffers import sniff_codex
from core.model.deep_json import bounded
from core.model.read_numbers import as_int
from core.model.session import (
    CALL_FLAGS,
    FLAG_MAIN,
    CompactionEvent,
    Message,
    Role,
    Session,
    SourceFormat,
    ToolCall,
    ToolResult,
    Usage,
    UsageConvention,
)

FORMAT = SourceFormat.CODEX
PARTIAL_READS = True
"""``load(..., head_bytes=N)`` reads only the complete lines of the first N bytes."""

_USER, _ASSISTANT, _TOOL = Role.USER, Role.ASSISTANT, Role.TOOL
_OPENAI = UsageConvention.OPENAI
"""Read once: an enum member read off its class costs a look-up through the enum's metaclass,
once per message or usage."""

# Calls the server runs inside the response: no output item follows them.
_SERVER_CALLS = frozenset({"web_search_call", "image_generation_call"})


class _Loader:
    """Walks the rollout lines and feeds the builder: one method per record type
    (:data:`_RECORDS`), per event (:data:`_EVENTS`) and per response item (:data:`_ITEMS`)."""

    def __init__(self, path: Path) -> None:
        self.builder = SessionBuilder(FORMAT, path)
        # Each call's arguments are bounded as the call is read (tool_call) and not shared
        # with an earlier call's equal values, so build() walks no call again. The sharing
        # pass was 29 M instructions of the 10 MB small-message file's 36 M finish (bounding
        # as read costs 10 M); done as each call is read it cost more (41 M). What it kept
        # once (about one short value a call: a workdir, a repeated command) was already all
        # held at the load's peak, which it did not lower (132 MiB on the 100 MB file).
        self.builder.arguments_ready = True
        self.facts = ThreadFacts(self.builder)
        self.turns = TurnTracker()
        self.cap = OutputCap.from_policy(None)
        self.line_no = 0
        self.current: ModelCall | None = None
        self.last_call: Message | None = None
        self.last_usage: Usage | None = None  # the latest call's, for a compaction's tokens_before
        self.last_total: Any = None  # the previous token_count's figures, to drop repeats
        self.last_last: Any = None
        self.model: str | None = None
        self.models: list[str] = []
        self.tool_names: dict[str, str] = {}
        self.call_lines: dict[str, int] = {}
        self.answered: set[str] = set()
        self.unknown: set[str] = set()
        self.legacy = False
        self.since_call: CompactionEvent | None = None  # a compaction after the last call
        self.pending_reset: int | None = None  # Codex's estimate written before a compaction
        self.redacted: dict[int, int] = {}  # call index → its redacted reasoning items
        self.placeholders = False  # redactions in the file keep the original lengths
        # Real user input is echoed as an event_msg/user_message; injected context is not.
        self.user_events = 0
        self.confirmed: set[int] = set()
        self.confirm_next = False
        self.inputs: list[Message] = []  # the user messages read as input, in order

    # -- lines ------------------------------------------------------------------------

    def line(self, line_no: int, offset: int, raw: bytes, obj: dict[str, Any]) -> None:
        """One line of the rollout (``raw`` as written): an envelope ``{timestamp, type,
        payload}``, or a line of the legacy format. Events and response items, nearly every
        line, go to their handler with one lookup (:data:`_EVENTS`, :data:`_ITEMS`)."""
        kind = obj.get("type")
        payload = obj.get("payload")
        self.line_no = line_no
        if kind == "event_msg" and type(payload) is dict:
            event = payload.get("type")
            handler = _EVENTS.get(event) if type(event) is str else None
            if handler is None:
                return  # an event that repeats response items or reports to the UI
            try:  # the most frequent record: read by its line number alone
                handler(self, payload, line_no)
            except Exception as exc:  # an unexpected shape must not stop the load
                self.builder.diagnostic(
                    line_no, "unreadable-record", f"{kind} line not understood ({exc})"
                )
            return
        ts = obj.get("timestamp")
        try:
            if type(payload) is not dict:
                self._legacy(kind, obj, At(line_no, offset, ts if type(ts) is str else None))
            elif kind == "response_item":
                at = At(line_no, offset, ts if type(ts) is str else None, None, False, None, raw)
                item_kind = payload.get("type")
                item_handler = _ITEMS.get(item_kind) if type(item_kind) is str else None
                if item_handler is not None:
                    item_handler(self, payload, at)
                else:
                    self.item(payload, at)
            else:
                handler_ = _RECORDS.get(kind) if type(kind) is str else None
                if handler_ is not None:
                    handler_(self, payload, At(line_no, offset, ts if type(ts) is str else None))
                elif type(kind) is str:
                    self._unknown("record type", kind, line_no)
        except Exception as exc:  # an unexpected shape must not stop the load
            self.builder.diagnostic(
                line_no, "unreadable-record", f"{kind or 'record'} line not understood ({exc})"
            )

    def _legacy(self, kind: Any, obj: dict[str, Any], at: At) -> None:
        """A line of the un-enveloped format: a bare response item, a state line, the header."""
        if "record_type" in obj:
            self.legacy = True  # a state line
        elif kind in _ITEM_TYPES or kind in ("compaction", "ghost_snapshot"):
            self.legacy = True
            self.item(obj, at)
        elif kind is None and "id" in obj and at.line <= 2:
            self.legacy = True
            self.session_meta(obj, at)
        else:
            self._unknown("record type", str(kind), at.line)

    def _unknown(self, what: str, label: str, line: int) -> None:
        """An info diagnostic for the first record of a kind not understood."""
        if label not in self.unknown:
            self.unknown.add(label)
            self.builder.info(line, "unknown-record", f"{what} {label!r} not understood, skipped")

    # -- model calls ------------------------------------------------------------------

    def _open(self, payload: dict[str, Any], at: At) -> ModelCall:
        """The model call a model-generated item belongs to (opened by its first item)."""
        kind, item_id = str(payload.get("type")), payload.get("id")
        return self.open_call(kind, item_id, at.line, at.offset, at.timestamp, at.replay)

    def open_call(
        self,
        kind: str,
        item_id: Any,
        line: int,
        offset: int,
        timestamp: str | None,
        replay: bool = False,
    ) -> ModelCall:
        """:meth:`_open` for an item of type ``kind`` and id ``item_id`` (as the file holds it)
        read at ``line`` (``replay``: a copy in a compaction's history)."""
        if not replay:
            turns = self.turns
            if turns.open:
                turns.model_output(kind, line)
            else:  # the usual case: what model_output does with no compaction waiting
                turns.last_model = turns.last_item = (kind, line)
        call = self.current
        if call is None:
            item_id = item_id if isinstance(item_id, str) else f"line-{line}"
            call = self.current = ModelCall(item_id, line, offset, timestamp)
        return call

    def close(self) -> None:
        """Emit the pending model call as one assistant message."""
        call = self.current
        if call is None:
            return
        self.current = None
        self.last_call = self.builder.append(  # (what builder.add makes, without its kwargs)
            Message(
                index=0,
                id=call.id,
                role=_ASSISTANT,
                timestamp=call.timestamp,
                text=joined(call.texts),
                reasoning=joined(call.reasoning),
                tool_calls=call.calls or (),
                model=self.model,
                source_line=call.line,
                source_offset=call.offset,
                reasoning_estimate_tokens=call.reasoning_tokens,
            ),
            CALL_FLAGS,  # (a call's reply, not a summary, of the main conversation)
        )
        if call.redacted:
            self.redacted[self.last_call.index] = call.redacted
        server = call.server_calls
        for tc in call.calls:
            self.tool_names[tc.id] = tc.name
            if server is None or tc.id not in server:
                self.call_lines[tc.id] = call.line

    # -- response items ---------------------------------------------------------------

    def item(self, payload: dict[str, Any], at: At) -> None:
        """One ResponseItem (a ``response_item`` record, a legacy line, a copy in a compaction's
        history), read by the method :data:`_ITEMS` names for its type (any other
        ``*_call_output`` is a tool output, any other ``*_call`` a tool call)."""
        kind = payload.get("type")
        handler = _ITEMS.get(kind) if type(kind) is str else None
        if handler is None and type(kind) is str:
            if kind.endswith("_call_output"):
                handler = _Loader._call_output
            elif kind.endswith("_call"):
                handler = _Loader._tool_call
        if handler is not None:
            handler(self, payload, at)
        else:
            self._unknown("response item", str(kind), at.line)

    def _add(self, role: Role, at: At, **fields: Any) -> Message:
        """A message made of one item."""
        return self.builder.add(
            role,
            id=at.item_id,
            timestamp=at.timestamp,
            source_line=at.line,
            source_offset=at.offset,
            **fields,
        )

    def _estimate(self, payload: dict[str, Any], at: At, text: str) -> int:
        """Codex's estimate of an item as its history holds it (see ``codex_sizes``); ``text``
        tells a file whose redactions keep the original lengths."""
        if not at.replay:
            self.turns.last_item = (str(payload.get("type")), at.line)  # TurnTracker.item
        if not self.placeholders and text.startswith("[REDACTED_"):
            self.placeholders = placeholder_length(text) is not None
            if self.placeholders:
                self.builder.metadata["redacted_lengths_kept"] = True
        raw = at.raw
        raw_bytes = None
        if raw is not None and at.timestamp is not None:
            raw_bytes = payload_bytes(raw, at.timestamp)
        return item_tokens(payload, self.cap, raw_bytes, placeholders=self.placeholders)

    def _message(self, payload: dict[str, Any], at: At) -> None:
        """A message item: the model's text (part of its call), the user's, or instructions."""
        role = payload.get("role")
        text = content_text(payload.get("content"))
        if role == "assistant":
            if not at.replay:
                self._open(payload, at).texts.append(text)
                return
            # A copy kept by the compaction: part of its product, not a model call.
            self.close()
            estimate = self._estimate(payload, at, text)
            self._add(
                Role.ASSISTANT,
                at,
                text=text,
                meta=True,
                summary=True,
                agent_estimate_tokens=estimate,
            )
            return
        self.close()
        self.input_message(role, text, self._estimate(payload, at, text), at)

    def input_message(self, role: Any, text: str, estimate: int, at: At) -> None:
        """A user message, or developer / system instructions (any other role), of Codex's
        ``estimate``."""
        if role != "user":  # developer / system instructions
            self._add(Role.SYSTEM, at, text=text, meta=True, agent_estimate_tokens=estimate)
            return
        is_summary = at.summary_text is not None and text == at.summary_text
        message = self._add(
            Role.USER,
            at,
            text=text,
            summary=is_summary,
            meta=(at.replay and not is_summary) or is_context_message(text),
            agent_estimate_tokens=estimate,
        )
        self.inputs.append(message)
        if self.confirm_next and not at.replay:
            self.confirmed.add(message.index)
            self.confirm_next = False

    def _reasoning(self, payload: dict[str, Any], at: At) -> None:
        """A reasoning item: its summary text (encrypted content is not text)."""
        parts: list[str] = []
        for key in ("summary", "content"):
            value = payload.get(key)
            if isinstance(value, list):
                for piece in value:
                    if isinstance(piece, dict) and isinstance(piece.get("text"), str):
                        parts.append(piece["text"])
        call = self._open(payload, at)
        call.reasoning.extend(parts)
        value = payload.get("encrypted_content")
        if type(value) is str and value != "REDACTED" and not value.startswith("[REDACTED_"):
            call.reasoning_tokens += encrypted_tokens(len(value))  # encrypted_length's usual case
            return
        length, redacted = encrypted_length(payload)
        if length is not None:
            call.reasoning_tokens += encrypted_tokens(length)
        elif redacted:
            call.redacted += 1

    def _call_output(self, payload: dict[str, Any], at: At) -> None:
        """A ``*_call_output`` item: the tool message answering a call."""
        get = payload.get
        call_id = get("call_id")
        call_id = call_id if isinstance(call_id, str) else ""
        output = get("output")
        if type(output) is str:  # the usual case
            text, failed = output, False
        elif output is None and "output" not in payload and "tools" in payload:
            text, failed = as_text(get("tools")), False  # tool_search_output
        else:
            text, failed = output_text(output)
        if not failed and get("type") == "custom_tool_call_output":
            failed = custom_output_error(text)
        estimate = self._estimate(payload, at, text)
        self.tool_output(
            call_id, text, failed, estimate, at.line, at.offset, at.timestamp, at.item_id, at.replay
        )

    def tool_output(
        self,
        call_id: str,
        text: str,
        failed: bool,
        estimate: int,
        line: int,
        offset: int,
        timestamp: str | None,
        item_id: str | None = None,
        replay: bool = False,
    ) -> None:
        """The tool message answering call ``call_id``, of Codex's ``estimate``, read at ``line``
        (``item_id``: the message's id, else the line's; ``replay``: a copy in a compaction's
        history); the pending model call is closed first."""
        if self.current is not None:
            self.close()
        name = self.tool_names.get(call_id)
        if name is None:
            self.builder.diagnostic(
                line,
                "orphan-tool-result",
                f"output for call {call_id or '(no id)'} whose call is not in the "
                "conversation; loaded without a tool name",
            )
        self.answered.add(call_id)
        result = ToolResult(call_id=call_id, tool_name=name, output=text, is_error=failed)
        self.builder.append(  # (what builder.add makes, without its kwargs)
            Message(
                index=0,
                id=item_id if item_id is not None else f"line-{line}",
                role=_TOOL,
                timestamp=timestamp,
                source_line=line,
                source_offset=offset,
                tool_result=result,
                meta=replay,
                agent_estimate_tokens=estimate,
            ),
            FLAG_MAIN,  # (a tool message: neither a call nor a turn's start)
        )

    def _tool_call(self, payload: dict[str, Any], at: At) -> None:
        """A ``*_call`` item: a tool call of the model call it belongs to."""
        kind: str = payload["type"]
        call = self._open(payload, at)
        call_id = payload.get("call_id") or payload.get("id")
        name, arguments = name_and_arguments(kind, payload)
        server = kind in _SERVER_CALLS or payload.get("execution") == "server"
        self.tool_call(call, kind, call_id, name, arguments, server, at.line)

    def tool_call(
        self,
        call: ModelCall,
        kind: str,
        call_id: Any,
        name: Any,
        arguments: Any,
        server: bool,
        line: int,
    ) -> None:
        """A tool call of ``call`` read at ``line`` (a ``call_id`` or ``name`` that is not a
        string: one made up from the item type); ``server``: run by the server, no output
        expected."""
        if type(call_id) is not str:  # (the file's value: a str, never a subclass of one)
            call_id = f"{kind}-{line}"
        if server:
            if call.server_calls is None:
                call.server_calls = set()
            call.server_calls.add(call_id)
        call.calls.append(
            ToolCall(
                id=call_id,
                name=name if type(name) is str else kind,
                arguments=bounded(arguments),
            )
        )

    def _compaction_item(self, payload: dict[str, Any], at: At) -> None:
        """A ``compaction`` item: the summary the provider encrypted (Codex estimates it like
        encrypted reasoning; unknown when the file was redacted)."""
        self.close()
        length, _redacted = encrypted_length(payload)
        self._add(
            Role.USER,
            at,
            text=f"[compaction summary encrypted by the provider, {length or 0} characters]",
            summary=True,
            agent_estimate_tokens=encrypted_tokens(length) if length is not None else None,
        )

    def _ghost_snapshot(self, payload: dict[str, Any], at: At) -> None:
        """A git undo point, not sent to the model."""

    def world_state(self, payload: dict[str, Any], at: At) -> None:
        """Codex's record of the environment it rendered into context (``full`` or a patch);
        what the model saw of it is in the messages that follow."""

    # -- events -----------------------------------------------------------------------

    def event_msg(self, payload: dict[str, Any], at: At) -> None:
        """An ``event_msg`` record (see :meth:`event`)."""
        self.event(payload, at.line)

    def event(self, payload: dict[str, Any], line: int) -> None:
        """An ``event_msg`` record's payload, read by the method :data:`_EVENTS` names for its
        type (most events repeat response items or report to the UI, and are passed over)."""
        event = payload.get("type")
        handler = _EVENTS.get(event) if type(event) is str else None
        if handler is not None:
            handler(self, payload, line)

    def token_count(self, payload: dict[str, Any], line: int) -> None:
        """The usage of the request just made (attached to its call), or a figure Codex wrote
        without a request (a post-compaction estimate, a context-full marker)."""
        info = payload.get("info")
        if not isinstance(info, dict):
            return  # a rate-limit-only event
        window = info.get("model_context_window")
        if window != self.facts.window:
            self.recorded_window(window, line)
        last = info.get("last_token_usage")
        if not isinstance(last, dict):
            return
        last = self.builder.counts(
            line, "last_token_usage", last, USAGE_COUNTS, optional=("total_tokens",)
        )
        total = info.get("total_token_usage")
        if self.repeated(total, last):
            return  # the repeated copy Codex writes after the outputs
        # (checked by counts(): each figure is an int or missing)
        get = last.get
        prompt: int = get("input_tokens") or 0
        output: int = get("output_tokens") or 0
        if prompt == 0 and output == 0:
            self._without_request(info, get("total_tokens") or 0, line)
            return
        if prompt == window and not output and marks_full(info, last):
            self._context_full(get("total_tokens") or 0, line)
            return
        self.call_usage(
            prompt,
            output,
            get("cached_input_tokens") or 0,
            get("reasoning_output_tokens") or 0,
            get("total_tokens"),
            line,
        )

    def repeated(self, total: Any, last: Any) -> bool:
        """A ``token_count`` whose cumulative ``total`` and ``last`` usage are the previous
        one's (the copy Codex writes again after the outputs); else they are kept as the
        previous one's. Either may be an object read the plain way, ``last`` a typed
        :class:`~core.formats.codex_typed.TokenUsage`, ``total`` the raw text the typed read
        keeps: they compare as the file's objects. (``last`` first: two totals' texts that
        differ are parsed to be compared, which only a repeated ``last`` asks for.)"""
        last_total, last_last = self.last_total, self.last_last
        # (same_usage's usual case, two of a type, inline: held equal to it by
        # test_repeated_answers_as_same_usage_does_for_every_form)
        if (
            total is not None
            and (
                last == last_last if type(last) is type(last_last) else same_usage(last, last_last)
            )
            and (
                total == last_total or same_usage(total, last_total)
                if type(total) is Raw
                else total == last_total
                if type(total) is type(last_total)
                else same_usage(total, last_total)
            )
        ):
            return True
        self.last_total = total
        self.last_last = last
        return False

    def call_usage(
        self, prompt: int, output: int, cached: int, reasoning: int, total: int | None, line: int
    ) -> None:
        """The usage of the request just made (``prompt`` tokens with the ``cached`` ones),
        attached to the model call it follows."""
        usage = Usage(
            input=max(0, prompt - cached),
            output=output,
            cache_read=cached,
            reasoning=reasoning,
            total=total,
            convention=_OPENAI,
        )
        self.last_usage = usage
        self.since_call = None
        self.pending_reset = None
        if self.current is not None:
            self.close()
        target = self.last_call
        if target is None or target.usage is not None:
            self.builder.info(
                line,
                "usage-without-call",
                "token usage of a request whose items are not in the file "
                "(a compaction or an aborted call); not attached",
            )
            return
        target.usage = usage
        if self.redacted:
            self._redacted_reasoning(target, usage.reasoning)
        self.last_call = None

    def _without_request(self, info: dict[str, Any], total: int, line: int) -> None:
        """A ``token_count`` with no input: all zeros, the context-full marker (the cumulative
        total set to the window), or Codex's estimate of the history a compaction rebuilt
        (``recompute_token_usage``), written after the compaction (0.104: just before it)."""
        if not total:
            return
        cumulative = info.get("total_token_usage")
        window = info.get("model_context_window")
        if (
            isinstance(cumulative, dict)
            and as_int(cumulative.get("input_tokens")) == 0
            and as_int(cumulative.get("total_tokens")) == window
        ):
            self._context_full(total, line)
            return
        event = self.since_call
        if event is not None and event.tokens_after is None:
            event.tokens_after = total
        else:
            self.pending_reset = total

    def _context_full(self, total: int, line: int) -> None:
        self.builder.info(
            line,
            "context-full",
            f"Codex marked the context as full here (total_tokens {total}, no request)",
        )

    def _redacted_reasoning(self, call: Message, reasoning_tokens: int) -> None:
        """The estimate of a call's redacted reasoning items, from the reasoning tokens it
        reported (split evenly over them)."""
        count = self.redacted.pop(call.index, 0)
        if count:
            share = reasoning_tokens / count
            call.reasoning_estimate_tokens += count * redacted_reasoning_tokens(share)
            self.builder.metadata["reasoning_estimated"] = True

    def recorded_window(self, value: Any, line: int) -> None:
        """A window a ``token_count`` reports: a change applies from the call it belongs to."""
        if value == self.facts.window:
            return  # the usual case: no change
        if self.current is not None or self.last_call is None or self.last_call.usage is not None:
            index = len(self.builder.messages)
        else:
            index = self.last_call.index
        self.facts.window_at(value, line, index)

    def turn_started(self, payload: dict[str, Any], line: int) -> None:
        """A turn (or task) starts: it may say the model's window, or end a fork's copied
        history."""
        self.started(payload.get("turn_id"), payload.get("model_context_window"), line)

    def started(self, turn_id: Any, window: Any, line: int) -> None:
        """:meth:`turn_started` of the turn ``turn_id`` saying ``window`` (as the file holds
        them; None: left out)."""
        self.close()
        self.facts.task_started(turn_id, window, line, len(self.builder.messages))
        self.turns.task_started(line)

    def turn_ended(self, payload: dict[str, Any], line: int) -> None:
        """``task_complete`` / ``turn_aborted``."""
        self.turns.task_ended(line, str(payload.get("type")))

    def rolled_back(self, payload: dict[str, Any], line: int) -> None:
        """The user rolled turns back: the file keeps them, and so does the session."""
        self.builder.info(
            line,
            "rollback",
            f"the user rolled back {payload.get('num_turns', '?')} turn(s) here; "
            "earlier messages are kept as recorded",
        )

    def user_event(self, payload: dict[str, Any], line: int) -> None:
        """An event_msg/user_message: the user message just written (or the next) is real."""
        self.user_events += 1
        self.turns.user_input(line)
        messages = self.builder.messages
        for message in reversed(messages[-3:]):
            if message.role is _USER and not message.meta and not message.summary:
                if message.index not in self.confirmed:
                    self.confirmed.add(message.index)
                    return
                break
        self.confirm_next = True

    # -- records ----------------------------------------------------------------------

    def session_meta(self, payload: dict[str, Any], at: At) -> None:
        """The session's id, folder, start, agent and base instructions (kept as the first, meta,
        system message: the model sees them on every call); a later one is a resume or a fork's
        parent (:class:`ThreadFacts`)."""
        if not self.facts.session_meta(payload, at.line, at.timestamp):
            return
        instructions = payload.get("base_instructions", payload.get("instructions"))
        if isinstance(instructions, dict):
            instructions = instructions.get("text")
        if isinstance(instructions, str) and instructions:
            b = self.builder
            b.metadata["instructions_line"] = at.line
            self.close()
            b.add(
                Role.SYSTEM,
                id=f"line-{at.line}",
                text=instructions,
                meta=True,
                source_line=at.line,
                source_offset=at.offset,
                agent_estimate_tokens=approx_tokens(len(instructions.encode("utf-8"))),
            )

    def turn_context(self, payload: dict[str, Any], at: At) -> None:
        """A turn's model and truncation policy."""
        model = payload.get("model")
        if isinstance(model, str) and model:
            self.model = model
            if not self.models or self.models[-1] != model:
                self.models.append(model)
        policy = payload.get("truncation_policy")
        if policy is not None:
            self.builder.metadata["truncation_policy"] = policy
            self.cap = OutputCap.from_policy(policy)
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and self.builder.project is None:
            self.builder.project = cwd

    def compacted(self, payload: dict[str, Any], at: At) -> None:
        """A compaction: the event, then the history it replaced the context with (or the
        summary message)."""
        self.close()
        message = payload.get("message")
        message = message if isinstance(message, str) else ""
        line = at.line
        # Codex does not record the size it compacted at; the last reported context is that size.
        last = self.last_usage
        event = self.builder.add_compaction(
            trigger="unknown",
            tokens_before=None if last is None else last.context_tokens,
            tokens_after=self.pending_reset,
            summary=message or None,
            source_line=line,
        )
        self.pending_reset = None
        self.since_call = event
        self.turns.compacted(event, line)
        history = payload.get("replacement_history")
        if isinstance(history, list):
            for k, item in enumerate(history):
                if isinstance(item, dict):
                    copy_at = At(
                        line,
                        at.offset,
                        at.timestamp,
                        f"line-{line}#{k}",
                        replay=True,
                        summary_text=message or None,
                    )
                    self.item(item, copy_at)
            self.close()
        elif message:
            item = {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": message}],
            }
            self._add(
                Role.USER,
                At(line, at.offset, at.timestamp, f"line-{line}"),
                text=message,
                summary=True,
                agent_estimate_tokens=item_tokens(item, self.cap),
            )
        self.last_call = None  # usage after this belongs to a new request

    def finish(self) -> Session:
        self.close()
        self.turns.finish(self.line_no)
        for call_index, count in self.redacted.items():  # calls without a recorded usage
            call = self.builder.messages[call_index]
            call.reasoning_estimate_tokens += count * redacted_reasoning_tokens(0)
            self.builder.metadata["reasoning_estimated"] = True
        self.redacted.clear()
        session = self._build()
        self.facts.finish(session)
        facts = self.facts
        if facts.inherited_from is not None and facts.inherited_to is not None:
            keep_own_part(session, facts.inherited_from, facts.inherited_to)
        session.parent_session_id = facts.parent_thread()
        return session

    def _build(self) -> Session:
        b = self.builder
        if self.models:
            b.model = self.models[-1]
            if len(self.models) > 1:
                b.metadata["models"] = self.models
        if self.legacy:
            b.metadata["legacy_format"] = True
        if self.user_events:
            # Files that echo user input: an unechoed user message was injected context
            # (redacted files hide the AGENTS.md / environment prefixes this also catches).
            # (only the user messages read as input can be: the others are summaries)
            for message in self.inputs:
                if not message.meta and not message.summary and message.index not in self.confirmed:
                    message.meta = True
                    b.reflag(message)
        unanswered = not self.call_lines.keys() <= self.answered  # (one test in C, usually False)
        for call_id, line in self.call_lines.items() if unanswered else ():
            if call_id not in self.answered:
                b.diagnostic(
                    line,
                    "missing-tool-result",
                    f"tool call {call_id} ({self.tool_names.get(call_id)}) has no output in the file",
                )
        return b.build()


_Handler = Callable[[_Loader, dict[str, Any], At], None]

_RECORDS: dict[str, _Handler] = {
    "event_msg": _Loader.event_msg,
    "response_item": _Loader.item,
    "turn_context": _Loader.turn_context,
    "session_meta": _Loader.session_meta,
    "compacted": _Loader.compacted,
    "world_state": _Loader.world_state,
}
"""The method that reads each envelope type."""

_EVENTS: dict[str, Callable[[_Loader, dict[str, Any], int], None]] = {
    "token_count": _Loader.token_count,
    "task_started": _Loader.turn_started,
    "turn_started": _Loader.turn_started,
    "user_message": _Loader.user_event,
    "task_complete": _Loader.turn_ended,
    "turn_complete": _Loader.turn_ended,
    "turn_aborted": _Loader.turn_ended,
    "thread_rolled_back": _Loader.rolled_back,
}
"""The method that reads each event that says something the response items do not."""

_ITEMS: dict[str, _Handler] = {
    "message": _Loader._message,
    "reasoning": _Loader._reasoning,
    "function_call": _Loader._tool_call,
    "function_call_output": _Loader._call_output,
    "custom_tool_call": _Loader._tool_call,
    "custom_tool_call_output": _Loader._call_output,
    "local_shell_call": _Loader._tool_call,
    "local_shell_call_output": _Loader._call_output,
    "web_search_call": _Loader._tool_call,
    "tool_search_call": _Loader._tool_call,
    "tool_search_output": _Loader._call_output,
    "compaction": _Loader._compaction_item,
    "compaction_summary": _Loader._compaction_item,
    "ghost_snapshot": _Loader._ghost_snapshot,
}
"""The method that reads each response item type (other ``*_call_output`` and ``*_call``
types are read as tool outputs and tool calls too)."""

# -- detection ------------------------------------------------------------------------------


sniff = sniff_codex
"""Confidence that a path is this format (:mod:`core.formats.sniffers`)."""


# -- loading --------------------------------------------------------------------------------


def load(
    path: Path, *, progress: ProgressCallback | None = None, head_bytes: int | None = None
) -> Session:
    """Load a Codex rollout (read-only). See the module docstring for what is read."""
    path = Path(path)
    loader = _Loader(path)
    for line_no, offset, raw, obj in read_jsonl_raw(
        path,
        loader.builder,
        progress=progress,
        head_bytes=head_bytes,
        walk=partial(walk_lines, loader),  # (which passes over the lines ignorable names)
        views=True,
    ):
        loader.line(line_no, offset, raw, obj)
    return loader.finish()
