"""Claude Code transcript lines, written the way Claude Code writes them: for the tests that open,
tail and pick real files, and for the TUI benchmark's big files.

``write_claude_session(path, 5)`` writes five exchanges (a prompt, a Bash call, its result, a
reply); :func:`claude_exchange` makes one more to append to a file being tailed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from core.model.session import Usage
from tests.support.builders import timestamp

SESSION_UUID = "11111111-2222-3333-4444-555555555555"

Record = dict[str, Any]


def usage_record(usage: Usage) -> Record:
    """``usage`` as an Anthropic response records it (the prompt is input + cache write + read)."""
    return {
        "input_tokens": usage.input,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cache_read,
        "output_tokens": usage.output,
    }


@dataclass(frozen=True)
class ClaudeTranscript:
    """What every line of one transcript shares; each method returns one line's record."""

    session_id: str = SESSION_UUID
    cwd: str = "/home/dev/project"
    version: str = "2.1.38"
    model: str = "claude-sonnet-4-5-20250929"
    git_branch: str | None = None

    def _line(self, kind: str, uuid: str, parent: str | None, at: str) -> Record:
        line: Record = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "type": kind,
            "uuid": uuid,
            "timestamp": at,
        }
        if self.git_branch is not None:
            line["gitBranch"] = self.git_branch
        return line

    def user(self, uuid: str, parent: str | None, at: str, text: str) -> Record:
        """A prompt the user typed."""
        return {
            **self._line("user", uuid, parent, at),
            "message": {"role": "user", "content": text},
        }

    def assistant(
        self,
        uuid: str,
        parent: str | None,
        at: str,
        text: str,
        *,
        usage: Usage,
        message_id: str,
        request_id: str,
        tool_use: tuple[str, str, Record] | None = None,
    ) -> Record:
        """A model reply: its text, and ``tool_use`` (id, tool name, input) when it calls one."""
        content: list[Record] = [{"type": "text", "text": text}]
        if tool_use is not None:
            call_id, name, arguments = tool_use
            content.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
        message = {
            "model": self.model,
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": "tool_use" if tool_use else "end_turn",
            "usage": usage_record(usage),
        }
        return {
            **self._line("assistant", uuid, parent, at),
            "message": message,
            "requestId": request_id,
        }

    def tool_result(
        self,
        uuid: str,
        parent: str,
        at: str,
        call_id: str,
        output: str,
        *,
        shown: str | None = None,
    ) -> Record:
        """The result of call ``call_id``; ``shown``: the UI's copy of the output (default all)."""
        content = [{"type": "tool_result", "tool_use_id": call_id, "content": output}]
        return {
            **self._line("user", uuid, parent, at),
            "message": {"role": "user", "content": content},
            "toolUseResult": {
                "stdout": output if shown is None else shown,
                "stderr": "",
                "interrupted": False,
            },
        }


TRANSCRIPT = ClaudeTranscript()
"""The transcript the tests write."""


def claude_exchange(n: int, parent: str | None, prompt: int) -> tuple[list[bytes], str]:
    """One user turn as lines ``n`` to ``n + 3`` (a prompt, a Bash call with a recorded prompt of
    ``prompt`` cached tokens, its result, a reply); returns them and the last line's uuid."""
    user = TRANSCRIPT.user(f"u-{n:04d}", parent, timestamp(n), f"question number {n}")
    call = TRANSCRIPT.assistant(
        f"a-{n + 1:04d}",
        user["uuid"],
        timestamp(n + 1),
        f"looking at {n}",
        usage=Usage(input=3, cache_write=100, cache_read=prompt, output=20),
        message_id=f"msg_{n + 1:04d}",
        request_id=f"req_{n + 1:04d}",
        tool_use=(f"toolu_{n + 1:04d}", "Bash", {"command": "ls"}),
    )
    result = TRANSCRIPT.tool_result(
        f"t-{n + 2:04d}", call["uuid"], timestamp(n + 2), f"toolu_{n + 1:04d}", f"output {n}\n" * 3
    )
    reply = TRANSCRIPT.assistant(
        f"a-{n + 3:04d}",
        result["uuid"],
        timestamp(n + 3),
        f"answer {n}",
        usage=Usage(input=3, cache_write=100, cache_read=prompt + 50, output=20),
        message_id=f"msg_{n + 3:04d}",
        request_id=f"req_{n + 3:04d}",
    )
    lines = [orjson.dumps(record) + b"\n" for record in (user, call, result, reply)]
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
