"""Build a long session directly as :class:`core.model.session.Session` objects (the ctxscope sample).

The script events are turned into messages the way a loader would produce them (one assistant
message per model call with its usage, one tool message per result), and the session is then
written with ctxscope's own writer, :func:`core.formats.ctxscope_jsonl.write_session`.
"""

from __future__ import annotations

import io
import random
import string
from typing import Any

import _project as P
from _script import Call, Event, Pause, Prompt, Tool, est

from core.formats.ctxscope_jsonl import write_session
from core.model.session import (
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

CHARS_PER_TOKEN = 3.5
MODEL = "claude-sonnet-4-5-20250929"
COMPACT_AT = 167_000
BASE_TOKENS = 16_940
CACHED_BASE = 14_208

TOOL_NAMES = {
    "read": "Read",
    "grep": "Grep",
    "glob": "Glob",
    "bash": "Bash",
    "edit": "Edit",
    "write": "Write",
    "mcp": "mcp",
}

SUMMARY = (
    "Summary of the work so far: the user is going through a list of small checks on the "
    "parcelhub service (orders, webhooks, store, config). Each request was answered with a "
    "targeted read, grep or single test run; nothing is pending except the request in progress."
)


class SessionBuilder:
    def __init__(self, rng: random.Random, clock: P.Clock) -> None:
        self.rng = rng
        self.clock = clock
        self.messages: list[Message] = []
        self.compactions: list[CompactionEvent] = []
        self.items: list[int] = []
        self.last_prompt: int | None = None
        self.cache_warm = False
        self.boundary = False

    def new_id(self) -> str:
        return P.hexid(self.rng, 12)

    def add(self, role: Role, **fields: Any) -> Message:
        if self.boundary:
            fields["compaction_boundary"] = True
            self.boundary = False
        msg = Message(
            index=len(self.messages),
            id=self.new_id(),
            role=role,
            timestamp=self.clock.iso(),
            **fields,
        )
        self.messages.append(msg)
        return msg

    def prompt(self, text: str) -> None:
        self.add(Role.USER, text=text)
        self.items.append(est(text, CHARS_PER_TOKEN) + 4)

    def context(self) -> int:
        return BASE_TOKENS + sum(self.items)

    def compact(self) -> None:
        before = self.context()
        self.clock.tick(20, 50)
        self.compactions.append(
            CompactionEvent(message_index=len(self.messages), trigger="auto", tokens_before=before)
        )
        self.boundary = True
        self.add(Role.USER, text=SUMMARY, summary=True)
        self.items = [est(SUMMARY, CHARS_PER_TOKEN)]
        self.cache_warm = False

    def call(self, ev: Call) -> None:
        if self.context() >= COMPACT_AT:
            self.compact()
        self.clock.tick(ev.seconds * 0.5, ev.seconds)
        calls = []
        for tool in ev.tools:
            tid = "toolu_01" + "".join(
                self.rng.choice(string.ascii_letters + string.digits) for _ in range(22)
            )
            calls.append(
                ToolCall(id=tid, name=TOOL_NAMES[tool.kind], arguments=self.arguments(tool))
            )
        output = est(ev.text + ev.thinking, CHARS_PER_TOKEN) + sum(
            12 + est(str(c.arguments), CHARS_PER_TOKEN) for c in calls
        )
        prompt = self.context()
        cache_read = (
            self.last_prompt if self.cache_warm and self.last_prompt else min(CACHED_BASE, prompt)
        )
        uncached = self.rng.randint(1, 9)
        usage = Usage(
            input=uncached,
            output=output,
            cache_read=cache_read,
            cache_write=max(0, prompt - cache_read - uncached),
            convention=UsageConvention.ANTHROPIC,
        )
        # the session-level model applies to every call; no per-message copy
        self.add(Role.ASSISTANT, text=ev.text, reasoning=ev.thinking, tool_calls=calls, usage=usage)
        self.items.append(output)
        self.last_prompt = prompt
        self.cache_warm = True
        for call, tool in zip(calls, ev.tools, strict=True):
            self.clock.tick(tool.seconds, tool.seconds + 0.05)
            out = (
                tool.output
                if tool.kind != "read"
                else P.numbered_claude(tool.output, tool.args.get("offset", 1))
            )
            self.add(
                Role.TOOL,
                tool_result=ToolResult(
                    call_id=call.id, tool_name=call.name, output=out, is_error=tool.is_error
                ),
            )
            self.items.append(est(out, CHARS_PER_TOKEN) + 8)

    @staticmethod
    def arguments(tool: Tool) -> dict[str, Any]:
        a = tool.args
        if tool.kind == "read":
            args: dict[str, Any] = {"file_path": f"{P.ROOT}/{a['path']}"}
            for key in ("offset", "limit"):
                if key in a:
                    args[key] = a[key]
            return args
        if tool.kind == "grep":
            return {"pattern": a["pattern"]}
        if tool.kind == "bash":
            return {"command": a["command"]}
        return dict(a)


def build(
    events: list[Event], rng: random.Random, clock: P.Clock, *, n_messages: int, session_id: str
) -> Session:
    """A Session of exactly ``n_messages`` messages from the start of ``events``."""
    b = SessionBuilder(rng, clock)
    started = clock.iso()
    for ev in events:
        if isinstance(ev, Prompt):
            if len(b.messages) >= n_messages - 12:
                break
            b.clock.tick(ev.think_seconds, ev.think_seconds + 1)
            b.prompt(ev.text)
        elif isinstance(ev, Call):
            b.call(ev)
        elif isinstance(ev, Pause):
            b.clock.tick(ev.minutes * 60, ev.minutes * 60 + 1)
            b.cache_warm = False
    # pad with short question/answer pairs to land exactly on n_messages
    while len(b.messages) < n_messages:
        if n_messages - len(b.messages) >= 2:
            b.clock.tick(20, 60)
            b.prompt("Anything else left from today's list?")
        b.call(Call(text="No, that was the last item.", seconds=3.0))
    return Session(
        id=session_id,
        format=SourceFormat.CTXSCOPE,
        model=MODEL,
        context_window=200_000,
        window_source="table",
        max_output_tokens=64_000,
        project=P.ROOT,
        started_at=started,
        messages=b.messages,
        compactions=b.compactions,
        metadata={
            "generator": "sample_sessions/generate.py",
            "story": "a long day of small checks",
        },
    )


def dumps(session: Session) -> bytes:
    buf = io.BytesIO()
    write_session(session, buf)
    return buf.getvalue()
