"""Sessions and a host app for the view tests (gauge, policy panel, compaction, overflow screens).

Everything is built in code with fixed ids and figures, so the tests need no sample file.
"""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.message import Message as TextualMessage
from textual.widget import Widget

from core.models import Message, Role, Session, SourceFormat, ToolCall, ToolResult, Usage
from core.policy import Policy, get_preset


def grow_session(
    turns: int = 12,
    *,
    window: int | None = 60_000,
    step: int = 5_000,
    output_lines: int = 500,
    huge_at: int | None = None,
    huge_lines: int = 4_000,
    session_id: str = "views-test",
) -> Session:
    """A session whose recorded context grows by ``step`` per call.

    Each turn is: a user request, an assistant call to ``read`` with its output, and a reply.
    With ``huge_at`` set, the tool output of that turn is ``huge_lines`` long lines from ``bash``
    (one giant output that dominates the growth).
    """
    messages: list[Message] = []
    prompt = 4_000

    def add(role: Role, **fields: Any) -> Message:
        message = Message(index=len(messages), id=f"m{len(messages)}", role=role, **fields)
        messages.append(message)
        return message

    for turn in range(turns):
        add(Role.USER, text=f"Turn {turn}: please fix the bug in src/module_{turn}.py")
        tool = "bash" if turn == huge_at else "read"
        call_id = f"call{turn}"
        add(
            Role.ASSISTANT,
            text=f"Reading module_{turn}.",
            tool_calls=[
                ToolCall(id=call_id, name=tool, arguments={"path": f"src/module_{turn}.py"})
            ],
            usage=Usage(input=prompt, output=50),
        )
        if turn == huge_at:
            output = "\n".join(
                f"{n:05d} build log line with some words in it" for n in range(huge_lines)
            )
        else:
            output = "\n".join(f"def f_{turn}_{n}(x): return x + {n}" for n in range(output_lines))
        add(Role.TOOL, tool_result=ToolResult(call_id=call_id, tool_name=tool, output=output))
        prompt += step
        add(Role.ASSISTANT, text=f"Fixed module_{turn}.py.", usage=Usage(input=prompt, output=40))
        prompt += step // 4
    return Session(
        id=session_id,
        format=SourceFormat.CTXSCOPE,
        model="test-model",
        context_window=window,
        window_source="user" if window else "unknown",
        messages=messages,
    )


def compacting_policy(**update: Any) -> Policy:
    """The seed preset without pruning, so a 60k window makes it compact (not just prune)."""
    policy = get_preset("seed")
    policy.pruning.enabled = False
    return policy.model_copy(update=update) if update else policy


class Host(App[None]):
    """Mounts one widget (it brings its own styles) and records the messages it posts."""

    def __init__(self, widget: Widget) -> None:
        super().__init__()
        self.widget = widget
        self.posted: list[TextualMessage] = []

    def compose(self) -> ComposeResult:
        yield self.widget

    def on_token_gauge_call_selected(self, message: TextualMessage) -> None:
        self.posted.append(message)

    def on_policy_panel_changed(self, message: TextualMessage) -> None:
        self.posted.append(message)

    def on_jump_to_message(self, message: TextualMessage) -> None:
        self.posted.append(message)
