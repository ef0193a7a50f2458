"""GitHub Copilot CLI sessions: ``~/.copilot/session-state/<session id>/events.jsonl``.

One event a line: ``{type, data, id, timestamp, parentId}``, and ``agentId`` on the events of a
sub-agent (absent for the main agent's). What each event becomes:

* ``session.start`` / ``session.resume``: the session id, Copilot's version, the working
  directory, the selected model; ``session.model_change``: the model from there on.
* ``system.message`` → a system message; ``user.message`` → a user message holding what the
  model was sent (``transformedContent``, else ``content``).
* ``assistant.message`` → one model call: text, ``reasoningText``, ``toolRequests`` as tool
  calls, ``model``. Its ``outputTokens`` is the only per-call figure Copilot writes: the prompt
  size of a call is not recorded, so the call gets no :class:`~core.model.session.Usage` and the replay
  estimates its context (labelled ``estimated``). The output tokens are summed in
  ``metadata["output_tokens"]``.
* ``tool.execution_complete`` → a tool message (``result.content``, or the error's message).
* ``session.compaction_start`` / ``session.compaction_complete`` → a recorded compaction
  (trigger, ``preCompactionTokens`` / ``postCompactionTokens``, ``tokenLimit``, the summary as a
  summary message); ``session.truncation`` → ``metadata["truncations"]`` (Copilot dropped whole
  messages to fit ``tokenLimit``).
* ``hook.start`` / ``hook.end`` → ``metadata["hooks"]`` (per hook type: runs and failures);
  ``abort`` and ``session.error`` → ``metadata["aborts"]`` / ``metadata["errors"]``.
* ``session.shutdown`` → the measured figures: ``currentTokens`` (= system + conversation +
  tool definitions, at that point of the file) and the per-model totals of the agent read
  (``agentMetrics[main | <agentId>]``, else the session's ``modelMetrics``).

The measured context sizes (the compactions' ``currentTokens``/``preCompactionTokens``, the
shutdown's ``currentTokens``) are kept in ``metadata["measured_context"]`` with the message index
they were measured at; :mod:`core.insights.estimate_calibration` compares the replay's estimates with
them. The tool definitions are never written in the file: their measured size is
``metadata["context_overhead"]``, which the replay adds to every estimated call.

Sub-agents: the events carrying an ``agentId`` are a sub-agent's own conversation. The main
session leaves them out and lists each sub-agent as a child ``<events.jsonl>#<agentId>``
(``metadata["subagent_ids"]``); loading that path reads that agent's events only, with the main
session as its parent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.formats.base import LoadError, ProgressCallback, SessionBuilder, as_str, as_text
from core.formats.jsonl import read_jsonl
from core.formats.sniffers import sniff_copilot
from core.model.session import CompactionTrigger, Role, Session, SourceFormat, ToolCall, ToolResult

FORMAT = SourceFormat.COPILOT_CLI
PARTIAL_READS = True

PROVIDER = "github-copilot"

_TRIGGERS: dict[str, CompactionTrigger] = {
    "threshold": "auto",
    "context_limit_retry": "overflow",
    "manual": "manual",
}
"""Copilot's compaction triggers as ours; ``memory_pressure`` and ``model_switch`` are the agent's
own decisions but not its threshold's, so they stay ``unknown`` (with the trigger as evidence)."""


def split_agent(path: Path) -> tuple[Path, str | None]:
    """``<events.jsonl>#<agentId>`` as the file and the sub-agent id (None: the main agent)."""
    if "#" in path.name and not path.exists():
        base, _, agent = str(path).rpartition("#")
        return Path(base), agent or None
    return path, None


class _Reader:
    """Walks the events of one agent of the file into the builder."""

    def __init__(self, builder: SessionBuilder, agent: str | None) -> None:
        self.builder = builder
        self.agent = agent
        self.model: str | None = None
        self.models: list[str] = []
        self.tool_names: dict[str, str] = {}
        self.compaction_start: tuple[int, dict[str, Any]] | None = None
        self.output_tokens = 0
        self.subagents: dict[str, dict[str, Any]] = {}
        self.hooks: dict[str, dict[str, int]] = {}
        self.measured: list[dict[str, Any]] = []
        self.model_totals: dict[str, dict[str, int]] = {}
        self.overhead: int | None = None
        self.system_recorded = False

    def event(self, line: int, offset: int, record: dict[str, Any]) -> None:
        """Read one event (those of another agent are counted and skipped)."""
        kind = record.get("type")
        data = record.get("data")
        if not isinstance(kind, str) or not isinstance(data, dict):
            self.builder.diagnostic(
                line, "unknown-record", "an event without type or data, skipped"
            )
            return
        agent = as_str(record.get("agentId"))
        if kind.startswith("subagent."):
            self._subagent(kind, data, agent, record.get("timestamp"))
        if agent is not None:
            info = self.subagents.setdefault(agent, {"id": agent})
            info["events"] = info.get("events", 0) + 1
            stamp = as_str(record.get("timestamp"))
            if stamp is not None:
                info.setdefault("started_at", stamp)
                info["ended_at"] = stamp
        if agent != self.agent and kind not in _EVERY_AGENT:
            return
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, line, offset, as_str(record.get("timestamp")), data)

    # -- session facts ------------------------------------------------------------------------

    def start(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        b = self.builder
        if b.session_id is None:
            b.session_id = as_str(data.get("sessionId"))
        b.metadata.setdefault("copilot_version", as_str(data.get("copilotVersion")))
        if b.started_at is None:
            b.started_at = as_str(data.get("startTime")) or ts
        context = data.get("context")
        if isinstance(context, dict) and b.project is None:
            b.project = as_str(context.get("cwd"))
        self._set_model(as_str(data.get("selectedModel")))

    def model_change(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        self._set_model(as_str(data.get("newModel")))

    def _set_model(self, model: str | None) -> None:
        if model is None:
            return
        self.model = model
        if model not in self.models:
            self.models.append(model)

    def _subagent(self, kind: str, data: dict[str, Any], agent: str | None, ts: Any) -> None:
        ident = as_str(data.get("agentId")) or agent
        if ident is None:
            return
        info = self.subagents.setdefault(ident, {"id": ident})
        for key in ("agentName", "agentDisplayName", "toolCallId", "model"):
            value = as_str(data.get(key))
            if value is not None:
                info.setdefault(key, value)
        info.setdefault("first_event", kind)
        if isinstance(ts, str):
            info.setdefault("started_at", ts)

    # -- the conversation ---------------------------------------------------------------------

    def system(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        self.system_recorded = True
        self.builder.add(
            Role.SYSTEM,
            id=f"line-{line}",
            timestamp=ts,
            text=as_text(data.get("content")),
            meta=True,
            source_line=line,
            source_offset=offset,
        )

    def user(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        text = as_str(data.get("transformedContent")) or as_text(data.get("content"))
        source = as_str(data.get("source"))
        self.builder.add(
            Role.USER,
            id=f"line-{line}",
            timestamp=ts,
            text=text,
            synthetic=source is not None and source != "user",
            source_line=line,
            source_offset=offset,
        )

    def assistant(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        calls: list[ToolCall] = []
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else []:
            if not isinstance(request, dict):
                continue
            call_id = as_str(request.get("toolCallId")) or f"call-{line}-{len(calls)}"
            name = as_str(request.get("name")) or "tool"
            self.tool_names[call_id] = name
            calls.append(ToolCall(id=call_id, name=name, arguments=request.get("arguments")))
        self._set_model(as_str(data.get("model")))
        self.output_tokens += self.builder.count(line, "outputTokens", data.get("outputTokens"))
        self.builder.add(
            Role.ASSISTANT,
            id=as_str(data.get("messageId")) or f"line-{line}",
            timestamp=ts,
            text=as_text(data.get("content")),
            reasoning=as_str(data.get("reasoningText")) or "",
            tool_calls=calls or (),
            model=self.model,
            source_line=line,
            source_offset=offset,
        )

    def tool_done(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        call_id = as_str(data.get("toolCallId")) or f"line-{line}"
        result = data.get("result")
        error = data.get("error")
        if isinstance(result, dict):
            output = as_text(result.get("content"))
        elif isinstance(error, dict):
            output = as_text(error.get("message"))
        else:
            output = as_text(result if result is not None else error)
        self.builder.add(
            Role.TOOL,
            id=f"line-{line}",
            timestamp=ts,
            tool_result=ToolResult(
                call_id=call_id,
                tool_name=self.tool_names.get(call_id),
                output=output,
                is_error=data.get("success") is False,
            ),
            source_line=line,
            source_offset=offset,
        )

    # -- context management -------------------------------------------------------------------

    def compaction_begins(
        self, line: int, offset: int, ts: str | None, data: dict[str, Any]
    ) -> None:
        self.compaction_start = (line, data)
        self._limit(line, data.get("tokenLimit"))
        current = self.builder.optional_count(line, "currentTokens", data.get("currentTokens"))
        if current is not None:
            self._measure(line, current, "compaction start: currentTokens")
        self._overhead(line, data)

    def compaction_done(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        b = self.builder
        start_line, start = self.compaction_start or (None, {})
        self.compaction_start = None
        if data.get("success") is False:
            b.info(line, "compaction-failed", f"a compaction failed: {as_text(data.get('error'))}")
            return
        self._limit(line, data.get("tokenLimit"))
        named = as_str(data.get("trigger")) or as_str(start.get("trigger"))
        before = b.optional_count(line, "preCompactionTokens", data.get("preCompactionTokens"))
        if before is None:
            before = b.optional_count(line, "currentTokens", start.get("currentTokens"))
        if before is not None and start_line is None:
            self._measure(line, before, "compaction: preCompactionTokens")
        event = b.add_compaction(
            trigger=_TRIGGERS.get(named or "", "unknown"),
            tokens_before=before,
            tokens_after=b.optional_count(
                line, "postCompactionTokens", data.get("postCompactionTokens")
            ),
            summary=as_str(data.get("summaryContent")),
            source_line=line,
        )
        where = f"session.compaction_start at line {start_line}; " if start_line else ""
        event.trigger_evidence = (
            f"{where}session.compaction_complete's trigger is {named!r} (line {line})"
            if named
            else f"{where}the events name no trigger (line {line})"
        )
        summary = as_str(data.get("summaryContent"))
        if summary is not None:
            b.add(
                Role.USER,
                id=f"line-{line}",
                timestamp=ts,
                text=summary,
                summary=True,
                source_line=line,
                source_offset=offset,
            )

    def truncation(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        b = self.builder
        self._limit(line, data.get("tokenLimit"))
        entry = {
            "line": line,
            "message_index": len(b.messages),
            "performed_by": as_str(data.get("performedBy")),
            "tokens_before": b.optional_count(
                line, "preTruncationTokensInMessages", data.get("preTruncationTokensInMessages")
            ),
            "tokens_removed": b.optional_count(
                line, "tokensRemovedDuringTruncation", data.get("tokensRemovedDuringTruncation")
            ),
            "messages_removed": b.optional_count(
                line, "messagesRemovedDuringTruncation", data.get("messagesRemovedDuringTruncation")
            ),
        }
        b.metadata.setdefault("truncations", []).append(entry)
        b.info(
            line,
            "copilot-truncation",
            f"Copilot dropped {entry['messages_removed']} messages "
            f"({entry['tokens_removed']} tokens) to fit {data.get('tokenLimit')}; the replay "
            "does not model it",
        )

    def shutdown(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        b = self.builder
        if self.agent is None:  # the context figures are the main conversation's
            current = b.optional_count(line, "currentTokens", data.get("currentTokens"))
            if current is not None:
                self._measure(line, current, "shutdown: currentTokens")
            self._overhead(line, data)
        for model, metric in _model_metrics(data, self.agent).items():
            usage = metric.get("usage") if isinstance(metric, dict) else None
            requests = metric.get("requests") if isinstance(metric, dict) else None
            if not isinstance(usage, dict):
                continue
            totals = self.model_totals.setdefault(str(model), {})
            for key, name in (
                ("inputTokens", "input"),
                ("outputTokens", "output"),
                ("cacheReadTokens", "cache_read"),
                ("cacheWriteTokens", "cache_write"),
            ):
                totals[name] = b.count(line, f"modelMetrics.{key}", usage.get(key))
            if isinstance(requests, dict):
                totals["requests"] = b.count(line, "requests.count", requests.get("count"))
        if self.model is None:
            self._set_model(as_str(data.get("currentModel")))
        b.metadata.setdefault("shutdowns", []).append(
            {
                "line": line,
                "type": as_str(data.get("shutdownType")),
                "current_model": data.get("currentModel"),
            }
        )

    def hook(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        kind = as_str(data.get("hookType")) or "unknown"
        counts = self.hooks.setdefault(kind, {"runs": 0, "failures": 0})
        if "success" in data:
            counts["runs"] += 1
            counts["failures"] += data.get("success") is False

    def abort(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        self.builder.metadata.setdefault("aborts", []).append(
            {"line": line, "reason": as_str(data.get("reason"))}
        )

    def error(self, line: int, offset: int, ts: str | None, data: dict[str, Any]) -> None:
        self.builder.metadata.setdefault("errors", []).append(
            {
                "line": line,
                "type": as_str(data.get("errorType")),
                "message": as_str(data.get("message")),
            }
        )

    # -- measured figures ---------------------------------------------------------------------

    def _measure(self, line: int, tokens: int, what: str) -> None:
        self.measured.append(
            {
                "message_index": len(self.builder.messages),
                "tokens": tokens,
                "what": what,
                "line": line,
            }
        )

    def _overhead(self, line: int, data: dict[str, Any]) -> None:
        tools = self.builder.optional_count(
            line, "toolDefinitionsTokens", data.get("toolDefinitionsTokens")
        )
        if tools is None:
            return
        system = self.builder.optional_count(line, "systemTokens", data.get("systemTokens"))
        # The system message is in the file from 1.0.7x on (the estimator counts it); before,
        # only its measured size says how big it was.
        self.overhead = tools + (0 if self.system_recorded or system is None else system)

    def _limit(self, line: int, value: Any) -> None:
        limit = self.builder.optional_count(line, "tokenLimit", value)
        if limit:
            self.builder.context_window = limit
            self.builder.window_source = "recorded"

    # -- result -------------------------------------------------------------------------------

    def finish(self, path: Path) -> None:
        b = self.builder
        b.model = self.model
        if len(self.models) == 1:  # early versions name the model only at shutdown
            for message in b.messages:
                if message.role is Role.ASSISTANT and message.model is None:
                    message.model = self.model
        meta = b.metadata
        if len(self.models) > 1:
            meta["models"] = self.models
        meta["output_tokens"] = self.output_tokens
        meta["prompt_tokens_recorded"] = False
        if self.hooks:
            meta["hooks"] = self.hooks
        if self.measured:
            meta["measured_context"] = self.measured
        if self.model_totals:
            meta["model_totals"] = self.model_totals
        if self.overhead is not None:
            meta["context_overhead"] = self.overhead
        if self.agent is None and self.subagents:
            meta["subagent_ids"] = sorted(self.subagents)
            meta["subagents_info"] = [self.subagents[k] for k in sorted(self.subagents)]
        if self.agent is not None:
            meta["subagent"] = True
            meta["agent_id"] = self.agent
            info = self.subagents.get(self.agent, {})
            b.started_at = info.get("started_at") or b.started_at  # its own first event
            for key in ("agentName", "agentDisplayName", "toolCallId"):
                if key in info:
                    meta[key] = info[key]


_EVERY_AGENT = frozenset({"session.start", "session.resume", "session.shutdown"})
"""Session-level events every agent's reading takes (the start, and the shutdown's per-agent
totals)."""


def _model_metrics(data: dict[str, Any], agent: str | None) -> dict[str, Any]:
    """The shutdown's per-model totals of one agent: ``agentMetrics[<agentId>]`` (the main
    conversation's key is ``main``), else, for the main agent of a file without them, the
    session-wide ``modelMetrics`` (which then include any sub-agent's calls)."""
    per_agent = data.get("agentMetrics")
    if isinstance(per_agent, dict):
        mine = per_agent.get(agent or "main")
        metrics = mine.get("modelMetrics") if isinstance(mine, dict) else None
        return metrics if isinstance(metrics, dict) else {}
    metrics = data.get("modelMetrics")
    return metrics if agent is None and isinstance(metrics, dict) else {}


_HANDLERS = {
    "session.start": _Reader.start,
    "session.resume": _Reader.start,
    "session.model_change": _Reader.model_change,
    "system.message": _Reader.system,
    "user.message": _Reader.user,
    "assistant.message": _Reader.assistant,
    "tool.execution_complete": _Reader.tool_done,
    "session.compaction_start": _Reader.compaction_begins,
    "session.compaction_complete": _Reader.compaction_done,
    "session.truncation": _Reader.truncation,
    "session.shutdown": _Reader.shutdown,
    "hook.end": _Reader.hook,
    "abort": _Reader.abort,
    "session.error": _Reader.error,
}


# -- registry interface ----------------------------------------------------------------------


sniff = sniff_copilot
"""Confidence that a path is this format (:mod:`core.formats.sniffers`)."""


def load(
    path: Path, *, progress: ProgressCallback | None = None, head_bytes: int | None = None
) -> Session:
    """Load a Copilot CLI ``events.jsonl`` (or one sub-agent of it: ``<file>#<agentId>``)."""
    path = Path(path)
    file, agent = split_agent(path)
    builder = SessionBuilder(FORMAT, path)
    reader = _Reader(builder, agent)
    for line, offset, record in read_jsonl(file, builder, progress=progress, head_bytes=head_bytes):
        reader.event(line, offset, record)
    if builder.session_id is None and not builder.messages:
        raise LoadError(f"{path}: not a Copilot CLI session (no session.start and no messages)")
    reader.finish(file)
    main_id = builder.session_id or file.parent.name
    if agent is not None:
        if agent not in reader.subagents and not builder.messages:
            raise LoadError(f"{path}: no sub-agent {agent!r} in {file.name}")
        builder.session_id = agent
    session = builder.build()
    session.agent_version = builder.metadata.get("copilot_version")
    session.provider = PROVIDER
    if agent is not None:
        session.parent_session_id = main_id
    return session
