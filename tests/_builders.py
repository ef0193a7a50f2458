"""A small builder of conversations for the prune / split / compaction / mock tests.

``Convo().user("fix it").call("read", path="a.py").result("...").assistant("done").messages``
gives a list of :class:`core.models.Message` with consecutive indices, stable ids (``m0``,
``m1`` …) and tool results joined to their calls.
"""

from __future__ import annotations

from typing import Any

from core.models import Message, Role, ToolCall, ToolResult


class Convo:
    """Append messages one call at a time; ``messages`` holds the result."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._pending: list[ToolCall] = []
        self._call_counter = 0

    def _add(self, **fields: Any) -> Convo:
        index = len(self.messages)
        self.messages.append(Message(index=index, id=f"m{index}", **fields))
        return self

    def user(self, text: str = "please do the thing", **flags: Any) -> Convo:
        """A user message (a turn start unless a flag such as ``synthetic`` is set)."""
        return self._add(role=Role.USER, text=text, **flags)

    def system(self, text: str, **flags: Any) -> Convo:
        """A system message (``summary=True`` for a compaction summary)."""
        return self._add(role=Role.SYSTEM, text=text, **flags)

    def assistant(self, text: str = "ok", **flags: Any) -> Convo:
        """An assistant message without tool calls."""
        return self._add(role=Role.ASSISTANT, text=text, **flags)

    def call(self, tool_name: str, /, text: str = "", **arguments: Any) -> Convo:
        """An assistant message with one tool call (results follow with :meth:`result`)."""
        return self.calls([(tool_name, arguments)], text=text)

    def calls(self, calls: list[tuple[str, dict[str, Any]]], text: str = "") -> Convo:
        """An assistant message with several tool calls."""
        made = []
        for name, arguments in calls:
            self._call_counter += 1
            made.append(ToolCall(id=f"call{self._call_counter}", name=name, arguments=arguments))
        self._pending.extend(made)
        return self._add(role=Role.ASSISTANT, text=text, tool_calls=made)

    def result(self, output: str = "output", *, is_error: bool = False, **extra: Any) -> Convo:
        """The tool message answering the oldest unanswered call."""
        call = self._pending.pop(0)
        return self._add(
            role=Role.TOOL,
            tool_result=ToolResult(
                call_id=call.id, tool_name=call.name, output=output, is_error=is_error, **extra
            ),
        )

    def tool(self, tool_name: str, output: str, /, **arguments: Any) -> Convo:
        """A call immediately followed by its result."""
        return self.call(tool_name, **arguments).result(output)


def reindex(messages: list[Message]) -> list[Message]:
    """Copies of ``messages`` with indices 0..n-1 (for sub-lists built by slicing)."""
    return [m.model_copy(update={"index": i}) for i, m in enumerate(messages)]
