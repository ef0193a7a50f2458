"""Sessions with recorded usage, built in code, for the overflow / replay / CLI tests.

``Script().user("go").call("bash", context=5_000).result(big).reply("done", context=9_000)``
builds a :class:`core.models.Session`: each model call carries an Anthropic-convention usage whose
prompt is ``context`` tokens (``None``: no usage at all; ``0``: an all-zero usage, as an aborted
call records). Tool results answer the oldest unanswered call.
"""

from __future__ import annotations

from typing import Any

from core.models import (
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


def text_of_tokens(tokens: int, seed: str = "x") -> str:
    """A text of exactly ``tokens`` tokens for the ``chars/4`` estimator (4 characters each)."""
    unit = (seed * 4)[:4]
    return unit * tokens


class Script:
    """Builds a session one message at a time."""

    def __init__(self, convention: UsageConvention = UsageConvention.ANTHROPIC) -> None:
        self.messages: list[Message] = []
        self.compactions: list[CompactionEvent] = []
        self.convention = convention
        self._pending: list[ToolCall] = []
        self._calls = 0

    def _add(self, role: Role, **fields: Any) -> Script:
        index = len(self.messages)
        self.messages.append(Message(index=index, id=f"m{index}", role=role, **fields))
        return self

    def _usage(self, context: int | None, output: int) -> Usage | None:
        if context is None:
            return None
        if context == 0:
            return Usage(convention=self.convention)
        if self.convention is UsageConvention.ANTHROPIC:
            return Usage(input=context, output=output, convention=self.convention)
        return Usage(
            input=context, output=output, total=context + output, convention=self.convention
        )

    def user(self, text: str = "please do the thing", **flags: Any) -> Script:
        """A user message (a turn start unless a flag says otherwise)."""
        return self._add(Role.USER, text=text, **flags)

    def reply(
        self,
        text: str = "done",
        *,
        context: int | None = None,
        output: int = 10,
        **flags: Any,
    ) -> Script:
        """A model call without tool calls; ``context`` is its recorded prompt size."""
        return self._add(Role.ASSISTANT, text=text, usage=self._usage(context, output), **flags)

    def call(
        self,
        tool: str = "bash",
        *,
        context: int | None = None,
        output: int = 10,
        text: str = "",
        **flags: Any,
    ) -> Script:
        """A model call with one tool call."""
        self._calls += 1
        call = ToolCall(id=f"call{self._calls}", name=tool, arguments={"command": "ls"})
        self._pending.append(call)
        return self._add(
            Role.ASSISTANT,
            text=text,
            tool_calls=[call],
            usage=self._usage(context, output),
            **flags,
        )

    def result(self, output: str = "ok", **extra: Any) -> Script:
        """The tool result of the oldest unanswered call."""
        call = self._pending.pop(0)
        return self._add(
            Role.TOOL,
            tool_result=ToolResult(call_id=call.id, tool_name=call.name, output=output, **extra),
        )

    def compaction(
        self,
        summary: str = "## Goal\n- the summary",
        *,
        trigger: str = "auto",
        tokens_before: int | None = None,
        first_kept: int | None = None,
    ) -> Script:
        """A recorded compaction here, with its summary message."""
        self.compactions.append(
            CompactionEvent(
                message_index=len(self.messages),
                trigger=trigger,  # type: ignore[arg-type]
                tokens_before=tokens_before,
                summary=summary,
                first_kept_id=f"m{first_kept}" if first_kept is not None else None,
            )
        )
        return self._add(Role.USER, text=summary, summary=True, compaction_boundary=True)

    def session(
        self,
        *,
        window: int | None = 200_000,
        fmt: SourceFormat = SourceFormat.CTXSCOPE,
        model: str | None = "test-model",
    ) -> Session:
        """The session built so far."""
        return Session(
            id="scripted",
            format=fmt,
            model=model,
            context_window=window,
            window_source="recorded" if window else "unknown",
            messages=list(self.messages),
            compactions=list(self.compactions),
        )
