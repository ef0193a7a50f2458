"""The one builder of sessions and messages: the tests and the benchmarks build with it.

    session = (
        SessionBuilder()
        .user("fix the parser")
        .call("read", {"path": "parser.py"}, context=5_000)  # a model call with one tool call
        .result(tokens=1_500)  # its output: 1,500 tokens for the chars/4 estimator
        .reply("done", context=6_600)  # a model call without tool calls
        .compaction(tokens_before=6_600)  # a recorded compaction and its summary message
        .session(window=200_000)
    )

Messages get consecutive indices and the ids ``m0``, ``m1``, …; tool calls the ids ``call1``,
``call2``, …, and a result answers the oldest call not answered yet. ``context`` is the prompt the
call recorded (Anthropic convention unless the builder says otherwise; ``0`` records an all-zero
usage, as an aborted call does; ``None`` no usage at all). Flags such as ``synthetic=True`` or
``sidechain=True`` go to any message. :attr:`SessionBuilder.messages` is the list built so far,
:meth:`SessionBuilder.session` wraps it in a :class:`~core.model.session.Session`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Self, TypedDict, TypeVar, Unpack

from core.model.session import (
    CompactionEvent,
    CompactionTrigger,
    Message,
    Role,
    Session,
    SourceFormat,
    ToolCall,
    ToolResult,
    Usage,
    UsageConvention,
    WindowSource,
)

START = datetime(2026, 3, 1, 10, 0, 0, tzinfo=UTC)
"""When built sessions start, unless told otherwise (fixed, so every run looks the same)."""


def timestamp(seconds: int, start: datetime = START) -> str:
    """The time ``seconds`` after ``start``, as Claude Code writes it (``…T10:00:05.000Z``)."""
    return (start + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


ModelT = TypeVar("ModelT", Message, ToolCall, ToolResult, Usage)

CACHE_MISS_TOKENS = 3
"""Prompt tokens a ``cached`` builder records as fresh input (the rest is a cache read)."""


class Flags(TypedDict, total=False):
    """Fields of a message besides its content and usage (see :class:`core.model.session.Message`)."""

    summary: bool
    synthetic: bool
    meta: bool
    compaction_boundary: bool
    sidechain: bool
    reasoning: str
    model: str | None
    stop_reason: str | None
    error: str | None
    timestamp: str | None
    parent_id: str | None


def text_of_tokens(tokens: int, seed: str = "x") -> str:
    """A text of exactly ``tokens`` tokens for the ``chars/4`` estimator (4 characters each)."""
    unit = (seed * 4)[:4]
    return unit * tokens


class SessionBuilder:
    """Builds a session one message at a time; every method returns the builder.

    ``convention``: how usage is recorded. ``cached``: each prompt is a cache read but for
    :data:`CACHE_MISS_TOKENS` (as Claude Code records a warm cache). ``model``: recorded on every
    model call. ``start``: the first message's time (the next ones a second apart each); no
    timestamps without it.
    """

    def __init__(
        self,
        *,
        convention: UsageConvention = UsageConvention.ANTHROPIC,
        cached: bool = False,
        model: str | None = None,
        start: datetime | None = None,
    ) -> None:
        self.messages: list[Message] = []
        self.compactions: list[CompactionEvent] = []
        self.convention = convention
        self.cached = cached
        self.model = model
        self.start = start
        self._pending: list[ToolCall] = []
        self._calls = 0

    # -- messages ----------------------------------------------------------------------------

    def user(self, text: str = "please do the thing", **flags: Unpack[Flags]) -> Self:
        """A user message (a turn start unless a flag such as ``synthetic`` says otherwise)."""
        return self._add(Role.USER, flags, text=text)

    def system(self, text: str, **flags: Unpack[Flags]) -> Self:
        """A system message (``summary=True`` for a compaction summary)."""
        return self._add(Role.SYSTEM, flags, text=text)

    def reply(
        self,
        text: str = "done",
        *,
        context: int | None = None,
        output: int = 10,
        usage: Usage | None = None,
        **flags: Unpack[Flags],
    ) -> Self:
        """A model call without tool calls: ``context`` is its recorded prompt (or ``usage``
        the exact usage), ``output`` the tokens it wrote."""
        return self._call(text, [], self._usage(context, output, usage), flags)

    def call(
        self,
        tool: str = "bash",
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        text: str = "",
        context: int | None = None,
        output: int = 10,
        usage: Usage | None = None,
        **flags: Unpack[Flags],
    ) -> Self:
        """A model call with one tool call (``arguments`` default to ``{"command": "ls"}``)."""
        return self.calls(
            [(tool, {"command": "ls"} if arguments is None else arguments)],
            text=text,
            context=context,
            output=output,
            usage=usage,
            **flags,
        )

    def calls(
        self,
        calls: Sequence[tuple[str, Mapping[str, Any]]],
        /,
        *,
        text: str = "",
        context: int | None = None,
        output: int = 10,
        usage: Usage | None = None,
        **flags: Unpack[Flags],
    ) -> Self:
        """A model call with several tool calls (their results follow with :meth:`result`)."""
        made = []
        for name, arguments in calls:
            self._calls += 1
            made.append(
                self._model(ToolCall, id=f"call{self._calls}", name=name, arguments=dict(arguments))
            )
        self._pending.extend(made)
        return self._call(text, made, self._usage(context, output, usage), flags)

    def result(
        self,
        output: str = "ok",
        *,
        tokens: int | None = None,
        is_error: bool = False,
        truncated_by_tool: bool = False,
        compacted_at_ms: int | None = None,
        **flags: Unpack[Flags],
    ) -> Self:
        """The tool message answering the oldest unanswered call; ``tokens``: an output of that
        many tokens instead of ``output``."""
        call = self._pending.pop(0)
        tool_result = self._model(
            ToolResult,
            call_id=call.id,
            tool_name=call.name,
            output=output if tokens is None else text_of_tokens(tokens),
            is_error=is_error,
            truncated_by_tool=truncated_by_tool,
            compacted_at_ms=compacted_at_ms,
        )
        return self._add(Role.TOOL, flags, tool_result=tool_result)

    def tool(self, tool: str, output: str, arguments: Mapping[str, Any] | None = None, /) -> Self:
        """A model call with one tool call (no usage) immediately followed by its result."""
        return self.call(tool, arguments).result(output)

    def compaction(
        self,
        summary: str = "## Goal\n- the summary",
        *,
        text: str | None = None,
        trigger: CompactionTrigger = "auto",
        tokens_before: int | None = None,
        tokens_after: int | None = None,
        first_kept: int | None = None,
    ) -> Self:
        """A compaction recorded here, then its summary message (``text``, default the summary);
        ``first_kept``: the index of the first message it kept verbatim."""
        self.compactions.append(
            CompactionEvent(
                message_index=len(self.messages),
                trigger=trigger,
                tokens_before=tokens_before,
                tokens_after=tokens_after,
                summary=summary,
                first_kept_id=f"m{first_kept}" if first_kept is not None else None,
            )
        )
        flags: Flags = {"summary": True, "compaction_boundary": True}
        return self._add(Role.USER, flags, text=summary if text is None else text)

    # -- the session -------------------------------------------------------------------------

    def session(
        self,
        *,
        id: str = "scripted",  # noqa: A002 - the field's name
        fmt: SourceFormat = SourceFormat.CTXSCOPE,
        model: str | None = "test-model",
        window: int | None = 200_000,
        window_source: WindowSource | None = None,
        max_output_tokens: int | None = None,
        project: str | None = None,
        agent_version: str | None = None,
        provider: str | None = None,
    ) -> Session:
        """The session built so far (``window_source``: ``recorded`` for a window, else
        ``unknown``); it starts at the first message's time."""
        return Session(
            id=id,
            format=fmt,
            model=model,
            context_window=window,
            window_source=window_source or ("recorded" if window else "unknown"),
            max_output_tokens=max_output_tokens,
            project=project,
            agent_version=agent_version,
            provider=provider,
            started_at=self.messages[0].timestamp if self.messages else None,
            messages=list(self.messages),
            compactions=list(self.compactions),
        )

    # -- parts -------------------------------------------------------------------------------

    def _call(
        self, text: str, tool_calls: list[ToolCall], usage: Usage | None, flags: Flags
    ) -> Self:
        if self.model is not None:
            flags = {"model": self.model, **flags}
        return self._add(Role.ASSISTANT, flags, text=text, tool_calls=tool_calls, usage=usage)

    def _usage(self, context: int | None, output: int, usage: Usage | None) -> Usage | None:
        if usage is not None or context is None:
            return usage
        if context == 0:
            return self._model(Usage, convention=self.convention)
        figures: dict[str, Any] = {"input": context, "output": output}
        if self.cached:
            figures["input"] = min(context, CACHE_MISS_TOKENS)
            figures["cache_read"] = context - figures["input"]
        if self.convention is not UsageConvention.ANTHROPIC:
            figures["total"] = context + output  # the other conventions record a total
        return self._model(Usage, **figures, convention=self.convention)

    def _add(self, role: Role, flags: Flags, **content: Any) -> Self:
        index = len(self.messages)
        fields: dict[str, Any] = {"index": index, "id": f"m{index}", "role": role}
        if self.start is not None:
            fields["timestamp"] = timestamp(index, self.start)
        fields.update(content)
        fields.update(flags)
        self.messages.append(self._model(Message, **fields))
        return self

    def _model(self, cls: type[ModelT], **fields: Any) -> ModelT:
        return cls(**fields)
