"""Sessions built in code for the TUI tests, and Claude Code JSONL lines for the live-tail tests.

Everything here is deterministic (fixed ids, fixed timestamps), so snapshot tests built on it
render the same every run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from core.models import (
    CompactionEvent,
    Message,
    Role,
    Session,
    SourceFormat,
    ToolCall,
    ToolResult,
    Usage,
)

BASE_TIME = "2026-03-01T10:{minute:02d}:{second:02d}.000Z"


def _time(i: int) -> str:
    return BASE_TIME.format(minute=(i // 60) % 60, second=i % 60)


def make_session(
    turns: int = 6,
    *,
    calls_per_turn: int = 2,
    output_lines: int = 40,
    big_every: int = 3,
    big_lines: int = 3000,
    window: int | None = 200_000,
    prompt_start: int = 12_000,
    prompt_step: int = 9_000,
    with_compaction: bool = False,
    model: str = "claude-sonnet-4-5",
    session_id: str = "test-session",
) -> Session:
    """A Claude-like session: each turn a user prompt, then calls that read files with bash.

    Every ``big_every``-th tool output has ``big_lines`` lines (so truncation limits bite). The
    recorded prompt grows by ``prompt_step`` per call from ``prompt_start``; with the default
    window of 200,000 a session of 12+ calls overflows near its end.
    """
    messages: list[Message] = []
    compactions: list[CompactionEvent] = []
    prompt = prompt_start
    call_no = 0
    outputs = 0

    def add(role: Role, **fields: Any) -> Message:
        index = len(messages)
        message = Message(index=index, id=f"m{index}", role=role, timestamp=_time(index), **fields)
        messages.append(message)
        return message

    for turn in range(turns):
        if with_compaction and turn == turns // 2:
            compactions.append(
                CompactionEvent(
                    message_index=len(messages),
                    trigger="auto",
                    tokens_before=prompt,
                    tokens_after=9_000,
                    summary="Summary of the work so far.",
                )
            )
            add(
                Role.USER,
                text="This session is being continued from a previous conversation. Summary: "
                "the user asked to fix the parser; tests were run; two files were edited.",
                summary=True,
                compaction_boundary=True,
            )
            prompt = 9_000
        add(
            Role.USER, text=f"Turn {turn}: please look at module_{turn}.py and fix the failing test"
        )
        for k in range(calls_per_turn):
            call_id = f"call_{turn}_{k}"
            usage = Usage(input=3, cache_read=prompt - 3, output=120)
            add(
                Role.ASSISTANT,
                text=f"I'll read module_{turn}.py (step {k}).",
                tool_calls=[
                    ToolCall(
                        id=call_id, name="bash", arguments={"command": f"cat module_{turn}.py"}
                    )
                ],
                usage=usage,
                model=model,
            )
            call_no += 1
            outputs += 1
            lines = big_lines if (outputs % big_every == 0) else output_lines
            output = "\n".join(
                f"{turn}:{k}:{n} def function_{n}(x): return x * {n}" for n in range(lines)
            )
            add(
                Role.TOOL,
                tool_result=ToolResult(call_id=call_id, tool_name="bash", output=output),
            )
            prompt += prompt_step
        add(
            Role.ASSISTANT,
            text=f"Fixed module_{turn}.py: the loop bound was off by one.",
            usage=Usage(input=3, cache_read=prompt - 3, output=80),
            model=model,
        )
        call_no += 1
        prompt += 400
    return Session(
        id=session_id,
        format=SourceFormat.CLAUDE_CODE,
        path=None,
        model=model,
        context_window=window,
        window_source="table" if window else "unknown",
        messages=messages,
        compactions=compactions,
        project="/home/dev/project",
        started_at=_time(0),
    )


def make_big_session(count: int) -> Session:
    """``count`` small messages (user / assistant / tool cycling) built fast, for scale tests."""
    messages: list[Message] = []
    roles = (Role.USER, Role.ASSISTANT, Role.TOOL)
    for i in range(count):
        role = roles[i % 3]
        if role is Role.TOOL:
            message = Message.model_construct(
                index=i,
                id=f"m{i}",
                role=role,
                text="",
                reasoning="",
                tool_calls=[],
                tool_result=ToolResult(
                    call_id=f"c{i - 1}", tool_name="bash", output=f"line {i}\n" * 5
                ),
                usage=None,
                summary=False,
                synthetic=False,
                meta=False,
                compaction_boundary=False,
                sidechain=False,
                model=None,
                timestamp=None,
                stop_reason=None,
                error=None,
                parent_id=None,
                source_line=None,
                source_offset=None,
            )
        else:
            message = Message.model_construct(
                index=i,
                id=f"m{i}",
                role=role,
                text=f"message {i} " + "word " * 20,
                reasoning="",
                tool_calls=[ToolCall(id=f"c{i}", name="bash", arguments={"command": "ls"})]
                if role is Role.ASSISTANT
                else [],
                tool_result=None,
                usage=Usage(input=3, cache_read=1000 + i * 3) if role is Role.ASSISTANT else None,
                summary=False,
                synthetic=False,
                meta=False,
                compaction_boundary=False,
                sidechain=False,
                model="claude-sonnet-4-5" if role is Role.ASSISTANT else None,
                timestamp=None,
                stop_reason=None,
                error=None,
                parent_id=None,
                source_line=None,
                source_offset=None,
            )
        messages.append(message)
    return Session.model_construct(
        id="big",
        format=SourceFormat.CLAUDE_CODE,
        path=None,
        model="claude-sonnet-4-5",
        context_window=400_000,
        window_source="table",
        max_output_tokens=None,
        project=None,
        started_at=None,
        messages=messages,
        diagnostics=[],
        compactions=[],
        metadata={},
    )


# -- Claude Code JSONL ---------------------------------------------------------------------------

SESSION_UUID = "11111111-2222-3333-4444-555555555555"


def claude_user_line(n: int, text: str, parent: str | None) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/project",
        "sessionId": SESSION_UUID,
        "version": "2.1.38",
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": f"u-{n:04d}",
        "timestamp": _time(n),
    }


def claude_assistant_line(
    n: int, text: str, parent: str | None, *, prompt: int, tool: str | None = None
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if tool is not None:
        content.append(
            {"type": "tool_use", "id": f"toolu_{n:04d}", "name": tool, "input": {"command": "ls"}}
        )
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/project",
        "sessionId": SESSION_UUID,
        "version": "2.1.38",
        "message": {
            "model": "claude-sonnet-4-5-20250929",
            "id": f"msg_{n:04d}",
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": "tool_use" if tool else "end_turn",
            "usage": {
                "input_tokens": 3,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": prompt,
                "output_tokens": 20,
            },
        },
        "requestId": f"req_{n:04d}",
        "type": "assistant",
        "uuid": f"a-{n:04d}",
        "timestamp": _time(n),
    }


def claude_tool_result_line(n: int, parent: str, tool_use_id: str, output: str) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/project",
        "sessionId": SESSION_UUID,
        "version": "2.1.38",
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool_use_id, "content": output}],
        },
        "uuid": f"t-{n:04d}",
        "timestamp": _time(n),
        "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False},
    }


def claude_exchange(n: int, parent: str | None, prompt: int) -> tuple[list[bytes], str]:
    """One user turn (prompt, a tool call, its result, a reply) as JSONL lines; returns the last uuid."""
    user = claude_user_line(n, f"question number {n}", parent)
    call = claude_assistant_line(n + 1, f"looking at {n}", user["uuid"], prompt=prompt, tool="Bash")
    result = claude_tool_result_line(n + 2, call["uuid"], f"toolu_{n + 1:04d}", f"output {n}\n" * 3)
    reply = claude_assistant_line(n + 3, f"answer {n}", result["uuid"], prompt=prompt + 50)
    lines = [orjson.dumps(x) + b"\n" for x in (user, call, result, reply)]
    return lines, reply["uuid"]


def write_claude_session(path: Path, exchanges: int) -> str:
    """Write ``exchanges`` Claude turns to ``path``; returns the uuid of the last line."""
    parent: str | None = None
    with open(path, "wb") as f:
        for k in range(exchanges):
            lines, parent = claude_exchange(k * 4, parent, 5_000 + k * 1_000)
            f.writelines(lines)
    assert parent is not None
    return parent


def write_ctxscope_session(path: Path, session: Session) -> None:
    """Write ``session`` in our own JSONL format (header line, then one message per line)."""
    header = {
        "type": "session",
        "id": session.id,
        "format": "ctxscope",
        "model": session.model,
        "context_window": session.context_window,
    }
    with open(path, "wb") as f:
        f.write(orjson.dumps(header) + b"\n")
        for message in session.messages:
            f.write(orjson.dumps({"type": "message", **message.model_dump(mode="json")}) + b"\n")
